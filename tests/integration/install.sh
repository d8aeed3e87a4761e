#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make install honours PREFIX and DESTDIR, and what it installs is usable: a program built
# against the installed headers and pkg-config file, with the shared library and statically
# (pkg-config --static, cc -static), finds each fixture section at the address of its start
# symbol (read independently with symdump), and bash-completion loads the installed completion.
# make install-strip installs the same stripped.
# The exporter's default file is installed where none is, and kept once edited. make
# uninstall then removes every file make install put down.
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
version=$(sed -n '1s/^rseqdbg (\([^)]*\)).*/\1/p' "$TOP/debian/changelog")

for f in bin/rseqdbg lib/libelfscan.a lib/libelfscan.so.$version lib/pkgconfig/libelfscan.pc include/elfscan.h \
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
check "lib/libelfscan.so.0 links to lib/libelfscan.so.$version" \
	test "$(readlink "$root$prefix/lib/libelfscan.so.0")" = "libelfscan.so.$version"
check "lib/libelfscan.so links to lib/libelfscan.so.0" \
	test "$(readlink "$root$prefix/lib/libelfscan.so")" = libelfscan.so.0
default="$root/etc/default/rseqdbg-exporter"
check "installed /etc/default/rseqdbg-exporter (SYSCONFDIR) sets RSEQDBG_EXPORTER_ARGS" \
	grep -q '^RSEQDBG_EXPORTER_ARGS=' "$default"
check "the installed man pages name the installed schemas" \
	grep -q "^\.I $prefix/share/rseqdbg/schemas/scan.json" "$root$prefix/share/man/man1/rseqdbg-scan.1"
check "pkg-config file names the PREFIX" grep -qx "prefix=$prefix" "$root$prefix/lib/pkgconfig/libelfscan.pc"
unit="$root$prefix/lib/systemd/system/rseqdbg-exporter.service"
check "the installed service runs the installed rseqdbg exporter" \
	grep -qx "ExecStart=$prefix/bin/rseqdbg exporter \\\$RSEQDBG_EXPORTER_ARGS" "$unit"
check "the installed service reads the installed default file" \
	grep -qx "EnvironmentFile=-/etc/default/rseqdbg-exporter" "$unit"
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
sed "s|^prefix=.*|prefix=$root$prefix|; s|$prefix|$root$prefix|g" "$pc/libelfscan.pc" >"$TMP/libelfscan.pc"
fix="$FIX/bin/x86_64/cs-pie"
want=$("$BUILD/tests/tools/symdump" "$fix" | awk '$5 ~ /^rseq_start_/ { print $1 }' | sort)
for how in shared static; do
	if [ $how = shared ]; then
		# the documented line; the run finds the library where DESTDIR put it
		flags=$(PKG_CONFIG_PATH="$TMP" pkg-config --cflags --libs libelfscan)
		extra=("-Wl,-rpath,$root$prefix/lib")
	else
		flags=$(PKG_CONFIG_PATH="$TMP" pkg-config --cflags --libs --static libelfscan)
		extra=(-static)
	fi
	# shellcheck disable=SC2086 # the flags are words
	if ! cc "${extra[@]}" -o "$TMP/count-$how" "$TMP/count.c" $flags 2>"$TMP/cc.log"; then
		fail "$how: a program builds against the installed library (pkg-config: $flags)" \
			"$(grep -v 'requires at runtime' "$TMP/cc.log" | head -n 3)"
		continue
	fi
	needed=$(readelf -d "$TMP/count-$how" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	if [ $how = shared ]; then
		check "shared: a program builds against the installed library (needs: $needed)" \
			grep -q 'libelfscan\.so\.0 ' <<<"$needed"
	else
		check "static: a program builds against the installed library (needs: ${needed:-nothing})" \
			test -z "$needed"
	fi
	got=$("$TMP/count-$how" "$fix" | sort)
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "$how: installed library finds every section at its start symbol"
	else
		fail "$how: installed library finds every section at its start symbol" "want [$want] got [$got]"
	fi
done

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

# install-strip: the same files, the binary and the shared library without symbol table or
# DWARF (make install leaves them: DWARF in the built binary)
sroot="$TMP/stripped"
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE make -s -C "$TOP" BUILD="$TMP/build" \
	PREFIX="$prefix" DESTDIR="$sroot" install-strip >"$TMP/strip.log" 2>&1; then
	check "make install leaves DWARF in bin/rseqdbg" bash -c "readelf -S '$root$prefix/bin/rseqdbg' | grep -q '\.debug_info'"
	for f in bin/rseqdbg lib/libelfscan.so.$version; do
		check "make install-strip: $f has no symbol table or DWARF" \
			bash -c "[ -f '$sroot$prefix/$f' ] && ! readelf -S '$sroot$prefix/$f' | grep -qE '\.symtab|\.debug_info'"
	done
	check "make install-strip: the stripped rseqdbg runs" bash -c "'$sroot$prefix/bin/rseqdbg' --version >/dev/null"
else
	fail "make install-strip" "$(tail -n 5 "$TMP/strip.log" | tr '\n' '|')"
fi

# An edited default file is the administrator's: install keeps it, uninstall leaves it.
echo 'RSEQDBG_EXPORTER_ARGS="--listen 127.0.0.1:9810"' >>"$default"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE make -s -C "$TOP" BUILD="$TMP/build" \
	PREFIX="$prefix" DESTDIR="$root" install >/dev/null 2>&1
check "make install keeps an edited /etc/default/rseqdbg-exporter" grep -q 127.0.0.1:9810 "$default"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE make -s -C "$TOP" BUILD="$TMP/build" \
	PREFIX="$prefix" DESTDIR="$root" uninstall >/dev/null 2>&1
check "make uninstall leaves an edited /etc/default/rseqdbg-exporter" grep -q 127.0.0.1:9810 "$default"
rm -f "$default"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE make -s -C "$TOP" BUILD="$TMP/build" \
	PREFIX="$prefix" DESTDIR="$root" install >/dev/null 2>&1

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
