#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# libelfscan.a and the shared library export their API and nothing else: every global symbol
# they define has the elfscan_ prefix (the internal es_* functions are local), every function
# the installed headers declare is defined in both, the shared library's under the version node
# of libelfscan.map, with the SONAME libelfscan.so.0 (readelf), and debian/libelfscan0.symbols
# lists exactly what it exports.
source "$(dirname "$0")/../lib.sh"

LIB="$BUILD/libelfscan.a"
version=$(sed -n '1s/^rseqdbg (\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
SO="$BUILD/libelfscan.so.$version"
for f in "$LIB" "$SO"; do
	if [ ! -f "$f" ]; then
		fail "$(basename "$f") is built" "$f missing (make)"
		finish
		exit
	fi
done

# The functions the public headers declare, comments left out by the preprocessor.
for h in "$TOP"/libelfscan/elfscan*.h; do echo "#include \"$(basename "$h")\""; done |
	cc -E -P -I"$TOP/libelfscan" - | grep -oE '\belfscan_[a-z0-9_]+ *\(' | tr -d ' (' |
	sort -u >"$TMP/declared"

# exports NAME FILE: what FILE defines (one name a line) exports the headers' API alone
exports() {
	local others missing
	others=$(grep -v '^elfscan_' "$2" | tr '\n' ' ')
	if [ -s "$2" ] && [ -z "$others" ]; then
		pass "$1: every global symbol is elfscan_ ($(wc -l <"$2") symbols)"
	else
		fail "$1: every global symbol is elfscan_" "also exported: ${others:-nothing at all}"
	fi
	missing=$(comm -23 "$TMP/declared" "$2" | tr '\n' ' ')
	if [ -s "$TMP/declared" ] && [ -z "$missing" ]; then
		pass "$1: every function of the headers is exported ($(wc -l <"$TMP/declared"))"
	else
		fail "$1: every function of the headers is exported" "missing: ${missing:-all}"
	fi
}

nm -g --defined-only "$LIB" | awk 'NF == 3 { print $3 }' | sort -u >"$TMP/defined"
exports libelfscan.a "$TMP/defined"

# The shared library's dynamic symbols, as the dynamic linker sees them: NAME@@VERSION, and
# the version node itself, an absolute symbol named LIBELFSCAN_0.
readelf --dyn-syms -W "$SO" | awk '$7 != "UND" && $5 != "LOCAL" && NR > 3 { print $8 }' |
	sort -u >"$TMP/dynsyms"
grep -v '^LIBELFSCAN_0$' "$TMP/dynsyms" | sed 's/@@LIBELFSCAN_0$//' >"$TMP/so-defined"
exports "$(basename "$SO")" "$TMP/so-defined"
unversioned=$(grep -v -e '@@LIBELFSCAN_0$' -e '^LIBELFSCAN_0$' "$TMP/dynsyms" | tr '\n' ' ')
check "$(basename "$SO"): every symbol has the version LIBELFSCAN_0${unversioned:+ (not: $unversioned)}" \
	test -z "$unversioned"
soname=$(readelf -d "$SO" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "$(basename "$SO"): SONAME libelfscan.so.0 (readelf: ${soname:-none})" test "$soname" = libelfscan.so.0

# debian/libelfscan0.symbols: the symbols dpkg-gensymbols compares with the library's
sed -n 's/^ \([^ ]*\) .*/\1/p' "$TOP/debian/libelfscan0.symbols" | sed 's/@LIBELFSCAN_0$//' |
	sort -u >"$TMP/symbols-file"
sed 's/@@LIBELFSCAN_0$//' "$TMP/dynsyms" | sort -u >"$TMP/so-all"
diff=$(diff "$TMP/symbols-file" "$TMP/so-all" | grep '^[<>]' | tr '\n' ' ')
check "debian/libelfscan0.symbols lists what the library exports${diff:+ ($diff)}" test -z "$diff"
finish
