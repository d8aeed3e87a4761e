#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian packages, as a user gets them. The source package first: every Build-Depends is
# installed by scripts/deps.sh, and every file's SPDX line agrees with debian/copyright. Then
# the packages, built by scripts/deb.sh (dpkg-buildpackage -us -uc -b from a clean clone of
# HEAD: changes not committed are not tested), clean for lintian, the debug symbols in the -dbgsym packages under the build-ids of the packaged files, then
# installed with apt into a fresh Debian 12 root (debootstrap --variant=minbase, their
# dependencies from the mirror). There rseqdbg --version gives the package's version, scan and
# audit of the bundled example print what the build under test prints here, and a program
# built against libelfscan-dev with pkg-config, shared and static, finds each section of a
# fixture at its start symbol (read here with symdump).
#
# Run by `make check-package` (tests/run.sh runs it only when TESTS names it). Root and the
# mirror of /etc/apt/sources.list.d are needed. The root debootstrap made is kept as a tarball
# in RSEQDBG_PACKAGE_CACHE (/var/cache/rseqdbg-package), with the packages apt downloads into
# it; each run unpacks a fresh copy. Delete the directory to start from the mirror again.
source "$(dirname "$0")/../lib.sh"

CACHE=${RSEQDBG_PACKAGE_CACHE:-/var/cache/rseqdbg-package}
SUITE=bookworm

# --- the source package ----------------------------------------------------------------------
# Every build dependency is one scripts/deps.sh installs (its base or package group), so that
# a machine it set up builds the packages.
deps=$(sed -n '/^PKGS="/,/"$/p; /^package)/p' "$TOP/scripts/deps.sh" | tr -s ' \t"' '\n\n')
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$TOP/debian/control" | sed 's/^Build-Depends://; /^[A-Z]/d' |
	tr ',' '\n' | sed 's/[(<].*//; s/ //g' | grep -v '^debhelper-compat$' | grep .)
missing=$(for b in $bdeps; do grep -qx "$b" <<<"$deps" || echo "$b"; done | tr '\n' ' ')
check "every Build-Depends is in scripts/deps.sh ($(wc -w <<<"$bdeps") packages)${missing:+: not $missing}" \
	test -n "$bdeps" -a -z "$missing"
# debian/copyright gives the library and its page LGPL-2.1+, the rest GPL-2: each file's SPDX
# line says the same.
wrong=$(cd "$TOP" && git ls-files | while read -r f; do
	l=$(head -n 5 "$f" 2>/dev/null | grep -ao 'SPDX-License-Identifier: [A-Za-z0-9.+-]*' | head -n 1)
	case "$f" in
	libelfscan/* | man/libelfscan.3) want=LGPL-2.1-or-later ;;
	*) want=GPL-2.0-only ;;
	esac
	[ -z "$l" ] || [ "${l#*: }" = "$want" ] || echo "$f (${l#*: })"
done | tr '\n' ' ')
check "every SPDX line agrees with debian/copyright${wrong:+ (not: $wrong)}" test -z "$wrong"

if ! have_root; then
	skip "package" "needs root (debootstrap, chroot)"
	finish
	exit
fi
for tool in dpkg-buildpackage dh lintian debootstrap git; do
	if ! command -v "$tool" >/dev/null; then
		skip "package" "$tool is not installed (scripts/deps.sh package)"
		finish
		exit
	fi
done

# --- build -----------------------------------------------------------------------------------
out="$TMP/deb"
touch "$TMP/before-deb"
if ! "$TOP/scripts/deb.sh" "$out" >"$TMP/deb.log" 2>&1 && ! ls "$out"/*.changes >/dev/null 2>&1; then
	fail "dpkg-buildpackage -us -uc -b from a clean clone of HEAD" "$(tail -n 15 "$TMP/deb.log" | tr '\n' '|')"
	finish
	exit
fi
# The package is built in its clone alone: the build directory under test (exported as BUILD
# by tests/run.sh) is left as it was.
touched=$(find "$BUILD" -newer "$TMP/before-deb" -print -quit 2>/dev/null)
check "the package build leaves $BUILD alone${touched:+ (it wrote $touched)}" test -z "$touched"
grep -q 'uncommitted changes' "$TMP/deb.log" && echo "note: uncommitted changes are not in the packages (HEAD is built)"
version=$(sed -n '1s/^rseqdbg (\([^)]*\)).*/\1/p' "$TOP/debian/changelog")
arch=$(dpkg --print-architecture)
debs=()
for p in rseqdbg libelfscan0 libelfscan-dev rseqdbg-dbgsym libelfscan0-dbgsym; do
	f="$out/${p}_${version}_$arch.deb"
	if [ -f "$f" ]; then debs+=("$f"); else fail "package $p $version built" "no $(basename "$f")"; fi
done
[ ${#debs[@]} -eq 5 ] && pass "dpkg-buildpackage -us -uc -b from a clean clone of HEAD: 5 packages, version $version"
got=$(dpkg-deb -f "$out/rseqdbg_${version}_$arch.deb" Version 2>/dev/null)
check "the package version is debian/changelog's ($got)" test "$got" = "$version"

if [ -f "$out/lintian.txt" ]; then
	tags=$(grep -E '^[EW]: ' "$out/lintian.txt")
	check "lintian: no error, no warning${tags:+ ($(tr '\n' '|' <<<"$tags"))}" test -z "$tags"
else
	fail "lintian ran on the .changes" "$(tail -n 5 "$TMP/deb.log" | tr '\n' '|')"
fi

# dbgsym FILE PACKAGE: the debug file of FILE (in PACKAGE's .deb) is in PACKAGE-dbgsym under its
# build-id, with DWARF, and the packaged FILE has neither symbol table nor DWARF.
dbgsym() {
	local file=$1 pkg=$2 x="$TMP/x-$2" id debug
	mkdir -p "$x" "$x-dbg"
	dpkg-deb -x "$out/${pkg}_${version}_$arch.deb" "$x"
	dpkg-deb -x "$out/${pkg}-dbgsym_${version}_$arch.deb" "$x-dbg"
	id=$(readelf -n "$x$file" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	debug="$x-dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	check "$pkg-dbgsym holds the debug file of $file (build-id ${id:-none})" \
		bash -c "[ -n '$id' ] && readelf -S '$debug' 2>/dev/null | grep -q '\.debug_info'"
	check "$pkg: $file is stripped" bash -c "! readelf -S '$x$file' | grep -qE '\.symtab|\.debug_info'"
}
dbgsym /usr/bin/rseqdbg rseqdbg
dbgsym "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libelfscan.so.$version" libelfscan0

# --- a fresh Debian 12 root ---------------------------------------------------------------
# The mirror and suites of this machine's Debian sources (deb822 files).
sources=$(grep -l 'debian\.org/debian' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
mirror=$(sed -n 's|^URIs: *\(.*/debian\)/*$|\1|p' "${sources:-/dev/null}" | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}
base="$CACHE/$SUITE-minbase.tar"
mkdir -p "$CACHE/archives"
if [ ! -f "$base" ]; then
	echo "making $base: debootstrap --variant=minbase $SUITE from $mirror"
	rm -rf "$CACHE/root.tmp"
	if ! debootstrap --variant=minbase "$SUITE" "$CACHE/root.tmp" "$mirror" >"$TMP/debootstrap.log" 2>&1; then
		skip "package: a fresh $SUITE root" \
			"debootstrap failed (no network or mirror?): $(tail -n 3 "$TMP/debootstrap.log" | tr '\n' '|')"
		rm -rf "$CACHE/root.tmp"
		finish
		exit
	fi
	# apt in the root reads the suites this machine reads, from the same mirror
	[ -n "$sources" ] && cp "$sources" "$CACHE/root.tmp/etc/apt/sources.list.d/" &&
		rm -f "$CACHE/root.tmp/etc/apt/sources.list"
	rm -rf "$CACHE/root.tmp/var/cache/apt/archives"/*.deb
	tar -C "$CACHE/root.tmp" -cf "$base.tmp" . && mv "$base.tmp" "$base"
	rm -rf "$CACHE/root.tmp"
fi
root="$TMP/root"
mkdir -p "$root"
tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
mkdir -p "$root/tmp/debs" "$root/tmp/ex"
cp "${debs[@]}" "$root/tmp/debs/"

# inroot CMD...: CMD in the root, in a mount namespace of its own (/proc, /dev and apt's
# download cache mounted there, gone with it), with a clean environment
inroot() {
	unshare -m --propagation private -- bash -c '
		r=$1 a=$2; shift 2
		mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" &&
			mount --bind "$a" "$r/var/cache/apt/archives" || exit 125
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' _ "$root" "$CACHE/archives" "$@"
}

if ! inroot apt-get update -qq >"$TMP/apt.log" 2>&1; then
	skip "package: apt in the fresh root" \
		"apt-get update failed (no network or mirror?): $(tail -n 3 "$TMP/apt.log" | tr '\n' '|')"
	finish
	exit
fi
# rseqdbg alone first, so its dependencies are what makes it run
if inroot apt-get install -y -qq --no-install-recommends /tmp/debs/rseqdbg_"${version}_$arch".deb \
	>"$TMP/apt-rseqdbg.log" 2>&1; then
	pass "apt installs rseqdbg into a fresh $SUITE root (dependencies from $mirror)"
else
	fail "apt installs rseqdbg into a fresh $SUITE root" "$(tail -n 5 "$TMP/apt-rseqdbg.log" | tr '\n' '|')"
fi
got=$(inroot rseqdbg --version 2>&1)
check "rseqdbg --version in the root is the package's ($got)" test "$got" = "rseqdbg $version"
conff=$(inroot dpkg-query -W -f='${Conffiles}' rseqdbg 2>&1)
check "/etc/default/rseqdbg-exporter is a conffile of rseqdbg" grep -q '^ /etc/default/rseqdbg-exporter ' <<<"$conff"
unit="$root/lib/systemd/system/rseqdbg-exporter.service"
check "the unit runs /usr/bin/rseqdbg with the options of /etc/default/rseqdbg-exporter" \
	bash -c "grep -qx 'ExecStart=/usr/bin/rseqdbg exporter \\\$RSEQDBG_EXPORTER_ARGS' '$unit' &&
		grep -qx 'EnvironmentFile=-/etc/default/rseqdbg-exporter' '$unit'"
check "the gdb extension is in /usr/share/rseqdbg" test -f "$root/usr/share/rseqdbg/rseqdbg-gdb.py"
check "man rseqdbg-scan is installed, naming the schema in /usr/share/rseqdbg" \
	bash -c "zcat '$root/usr/share/man/man1/rseqdbg-scan.1.gz' | grep -q '^\.I /usr/share/rseqdbg/schemas/scan.json'"

# scan and audit of the bundled example: the packaged build prints what the build under test
# prints here, for the same file by the same relative name
ex="$BUILD/examples/percpu_counter"
if [ -x "$ex" ]; then
	mkdir -p "$TMP/ex"
	cp "$ex" "$TMP/ex/"
	cp "$ex" "$root/tmp/ex/"
	for cmd in scan audit; do
		want=$(cd "$TMP/ex" && "$RSEQDBG" "$cmd" percpu_counter 2>&1; echo "exit $?")
		got=$(inroot sh -c "cd /tmp/ex && rseqdbg $cmd percpu_counter 2>&1; echo \"exit \$?\"")
		if [ "$got" = "$want" ] && grep -q 'percpu_counter' <<<"$got"; then
			pass "rseqdbg $cmd in the root prints what the build under test prints ($(tail -n 2 <<<"$got" | head -n 1 | sed 's/^ *//'))"
		else
			fail "rseqdbg $cmd in the root prints what the build under test prints" \
				"$(diff <(echo "$want") <(echo "$got") | head -n 10 | tr '\n' '|')"
		fi
	done
else
	fail "the bundled example is built" "$ex missing (make tests)"
fi

# --- a program built against libelfscan-dev ------------------------------------------------
if inroot apt-get install -y -qq --no-install-recommends /tmp/debs/libelfscan0_"${version}_$arch".deb \
	/tmp/debs/libelfscan-dev_"${version}_$arch".deb gcc libc6-dev pkgconf >"$TMP/apt-dev.log" 2>&1; then
	pass "apt installs libelfscan-dev (and gcc, pkgconf) into the root"
else
	fail "apt installs libelfscan-dev into the root" "$(tail -n 5 "$TMP/apt-dev.log" | tr '\n' '|')"
fi
cat >"$root/tmp/count.c" <<'C'
#include <elfscan.h>
#include <elfscan-audit.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct elfscan_audit *a;
	struct elfscan *es;

	if (argc != 2 || elfscan_open(argv[1], NULL, &es) || elfscan_audit(es, NULL, &a)) {
		fprintf(stderr, "%s\n", elfscan_errmsg());
		return 2;
	}
	for (size_t i = 0; i < elfscan_count(es); i++)
		printf("%" PRIx64 "\n", elfscan_get(es, i)->start_ip);
	elfscan_audit_free(a);
	elfscan_close(es);
	return 0;
}
C
fix="$FIX/bin/x86_64/cs-pie"
[ "$arch" = arm64 ] && fix="$FIX/bin/aarch64/cs-pie"
cp "$fix" "$root/tmp/cs-pie"
want=$("$BUILD/tests/tools/symdump" "$fix" | awk '$5 ~ /^rseq_start_/ { print $1 }' | sort)
for how in shared static; do
	if [ $how = shared ]; then
		line='gcc -o /tmp/count-shared /tmp/count.c $(pkg-config --cflags --libs libelfscan)'
	else
		line='gcc -static -o /tmp/count-static /tmp/count.c $(pkg-config --cflags --libs --static libelfscan)'
	fi
	if ! inroot sh -c "$line" >"$TMP/cc-$how.log" 2>&1; then
		fail "$how: $line" "$(grep -v 'requires at runtime' "$TMP/cc-$how.log" | head -n 5 | tr '\n' '|')"
		continue
	fi
	needed=$(readelf -d "$root/tmp/count-$how" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	if [ $how = shared ]; then
		check "$how: $line (needs libelfscan.so.0: $needed)" grep -q 'libelfscan\.so\.0 ' <<<"$needed"
	else
		check "$how: $line (needs no shared library${needed:+: $needed})" test -z "$needed"
	fi
	got=$(inroot "/tmp/count-$how" /tmp/cs-pie | sort)
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass "$how: the program finds every section of cs-pie at its start symbol ($(wc -l <<<"$got"))"
	else
		fail "$how: the program finds every section of cs-pie at its start symbol" "want [$want] got [$got]"
	fi
done
finish
