#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# libelfscan.a exports its API and nothing else: every global symbol it defines has the
# elfscan_ prefix (the internal es_* functions are local), and every function the installed
# headers declare is defined there.
source "$(dirname "$0")/../lib.sh"

LIB="$BUILD/libelfscan.a"
if [ ! -f "$LIB" ]; then
	fail "libelfscan.a is built" "$LIB missing (make)"
	finish
	exit
fi

nm -g --defined-only "$LIB" | awk 'NF == 3 { print $3 }' | sort -u >"$TMP/defined"
others=$(grep -v '^elfscan_' "$TMP/defined" | tr '\n' ' ')
if [ -s "$TMP/defined" ] && [ -z "$others" ]; then
	pass "libelfscan.a: every global symbol is elfscan_ ($(wc -l <"$TMP/defined") symbols)"
else
	fail "libelfscan.a: every global symbol is elfscan_" "also exported: ${others:-nothing at all}"
fi

# The functions the public headers declare, comments left out by the preprocessor.
for h in "$TOP"/libelfscan/elfscan*.h; do echo "#include \"$(basename "$h")\""; done |
	cc -E -P -I"$TOP/libelfscan" - | grep -oE '\belfscan_[a-z0-9_]+ *\(' | tr -d ' (' |
	sort -u >"$TMP/declared"
missing=$(comm -23 "$TMP/declared" "$TMP/defined" | tr '\n' ' ')
if [ -s "$TMP/declared" ] && [ -z "$missing" ]; then
	pass "libelfscan.a: every function of the headers is exported ($(wc -l <"$TMP/declared"))"
else
	fail "libelfscan.a: every function of the headers is exported" "missing: ${missing:-all}"
fi
finish
