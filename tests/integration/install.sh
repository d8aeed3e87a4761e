#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make install honours PREFIX and DESTDIR, and what it installs is usable: a program built
# against the installed header, library and pkg-config file finds each fixture section at
# the address of its start symbol (read independently with symdump), and bash-completion loads
# the installed completion. make uninstall then removes every file make install put down.
source "$(dirname "$0")/../lib.sh"

root="$TMP/root"
prefix=/opt/rseqdbg-test
# A build of its own, whatever flags (SANITIZE=...) the calling make passes down.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE make -s -C "$TOP" BUILD="$TMP/build" PREFIX="$prefix" DESTDIR="$root" install \
	>"$TMP/make.log" 2>&1; then
	fail "make install" "$(tail -n 5 "$TMP/make.log" | tr '\n' '|')"
	finish
	exit
fi
pass "make install"

for f in bin/rseqdbg lib/libelfscan.a lib/pkgconfig/libelfscan.pc include/elfscan.h \
	include/elfscan-audit.h include/elfscan-decode.h share/man/man1/rseqdbg.1 \
	share/man/man1/rseqdbg-scan.1 share/man/man1/rseqdbg-audit.1 share/man/man1/rseqdbg-step.1 \
	share/man/man1/rseqdbg-trace.1 share/man/man1/rseqdbg-stat.1 share/man/man3/libelfscan.3 \
	share/man/man1/rseqdbg-exporter.1 share/rseqdbg/rseqdbg-gdb.py \
	share/rseqdbg/schemas/common.json share/rseqdbg/schemas/scan.json \
	share/rseqdbg/schemas/audit.json share/rseqdbg/schemas/step.json \
	share/rseqdbg/schemas/trace.json share/rseqdbg/schemas/stat.json \
	lib/systemd/system/rseqdbg-exporter.service share/bash-completion/completions/rseqdbg; do
	check "installed $f" test -f "$root$prefix/$f"
done
check "pkg-config file names the PREFIX" grep -qx "prefix=$prefix" "$root$prefix/lib/pkgconfig/libelfscan.pc"
unit="$root$prefix/lib/systemd/system/rseqdbg-exporter.service"
check "the installed service runs the installed rseqdbg exporter" \
	grep -qx "ExecStart=$prefix/bin/rseqdbg exporter \\\$RSEQDBG_EXPORTER_ARGS" "$unit"
if command -v systemd-analyze >/dev/null; then
	# Verified against a copy naming the binary where DESTDIR put it.
	sed "s|$prefix/bin|$root$prefix/bin|" "$unit" >"$TMP/rseqdbg-exporter.service"
	out=$(MANPATH="$root$prefix/share/man" systemd-analyze verify "$TMP/rseqdbg-exporter.service" 2>&1)
	check "systemd-analyze verify: the service unit is valid${out:+ ($out)}" test -z "$out"
fi
check "installed rseqdbg runs" bash -c "\"$root$prefix/bin/rseqdbg\" --version >/dev/null"

cat >"$TMP/count.c" <<'C'
#include <elfscan.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct elfscan *es;

	if (argc != 2 || elfscan_open(argv[1], NULL, &es)) {
		fprintf(stderr, "%s\n", elfscan_errmsg());
		return 2;
	}
	for (size_t i = 0; i < elfscan_count(es); i++)
		printf("%" PRIx64 "\n", elfscan_get(es, i)->start_ip);
	elfscan_close(es);
	return 0;
}
C
pc="$root$prefix/lib/pkgconfig"
flags=$(sed "s|^prefix=.*|prefix=$root$prefix|; s|$prefix|$root$prefix|g" "$pc/libelfscan.pc" \
	>"$TMP/libelfscan.pc" && PKG_CONFIG_PATH="$TMP" pkg-config --cflags --libs --static libelfscan)
if cc -o "$TMP/count" "$TMP/count.c" $flags 2>"$TMP/cc.log"; then
	pass "a program builds against the installed library (pkg-config)"
	fix="$FIX/bin/x86_64/cs-pie"
	want=$("$BUILD/tests/tools/symdump" "$fix" | awk '$5 ~ /^rseq_start_/ { print $1 }' | sort)
	got=$("$TMP/count" "$fix" | sort)
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "installed library finds every section at its start symbol"
	else
		fail "installed library finds every section at its start symbol" "want [$want] got [$got]"
	fi
else
	fail "a program builds against the installed library (pkg-config)" "$(head -n 3 "$TMP/cc.log")"
fi

# The installed gdb extension runs the rseqdbg installed with it (PREFIX/bin).
if command -v gdb >/dev/null; then
	found=$(env -u RSEQDBG PATH=/usr/bin:/bin gdb -nx -q -batch \
		-ex "source $root$prefix/share/rseqdbg/rseqdbg-gdb.py" \
		-ex "python print('rseqdbg=' + str(REG.rseqdbg))" 2>&1 | sed -n 's/^rseqdbg=//p')
	check "the installed gdb extension finds the installed rseqdbg ($found)" \
		test "$found" = "$root$prefix/bin/rseqdbg"
else
	skip "the installed gdb extension finds the installed rseqdbg" "gdb is not installed"
fi

# The completion goes where bash-completion looks under the same prefix (its pkg-config file says
# where), and its loader, searching XDG_DATA_DIRS as for /usr/local, finds it there.
if pkg-config --exists bash-completion; then
	want=$(pkg-config --define-variable=datadir="$prefix/share" --variable=completionsdir bash-completion)
	check "the completion is installed in bash-completion's directory ($want)" \
		test -f "$root$want/rseqdbg"
	loaded=$(XDG_DATA_DIRS="$root$prefix/share" bash --norc --noprofile -c \
		'source /usr/share/bash-completion/bash_completion
		__load_completion rseqdbg && complete -p rseqdbg' 2>&1)
	check "bash-completion's loader finds the installed completion ($loaded)" \
		test "$loaded" = "complete -F _rseqdbg rseqdbg"
else
	fail "the completion is installed in bash-completion's directory" "bash-completion is not installed"
fi

if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE make -s -C "$TOP" BUILD="$TMP/build" \
	PREFIX="$prefix" DESTDIR="$root" uninstall >"$TMP/uninstall.log" 2>&1; then
	left=$(find "$root" ! -type d | sed "s|^$root||" | tr '\n' ' ')
	if [ -z "$left" ]; then
		pass "make uninstall removes every installed file"
	else
		fail "make uninstall removes every installed file" "left: $left"
	fi
	check "make uninstall removes the data directory" test ! -e "$root$prefix/share/rseqdbg"
else
	fail "make uninstall" "$(tail -n 5 "$TMP/uninstall.log" | tr '\n' '|')"
fi
finish
