#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# scripts/deb.sh OUTDIR: build the Debian packages of the commit checked out, as a Debian
# builder would, from a clean clone of it (OUTDIR/src: changes not committed are left out,
# and said so) with dpkg-buildpackage -us -uc -b, then check them with lintian. The .debs,
# .changes and .buildinfo land in OUTDIR, lintian's report in OUTDIR/lintian.txt; any error
# or warning (overrides in debian/*.lintian-overrides say why they are there) fails it.
# DEB_BUILD_OPTIONS is passed on (parallel=2 when unset).
set -eu
[ $# -eq 1 ] || { echo "usage: scripts/deb.sh OUTDIR" >&2; exit 2; }
out=$1
top=$(cd "$(dirname "$0")/.." && pwd)
head=$(git -C "$top" rev-parse HEAD)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
	echo "deb.sh: uncommitted changes are not in the packages (HEAD is)" >&2
fi
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
git clone -q --no-checkout "$top" "$out/src"
git -C "$out/src" checkout -q --detach "$head"
echo "deb.sh: building $(sed -n '1s/ .*//p;1q' "$out/src/debian/changelog") $(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$out/src/debian/changelog") from $head"
(cd "$out/src" && DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-parallel=2} \
	dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1) || {
	tail -n 30 "$out/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed (the whole log: $out/build.log)" >&2
	exit 1
}
ls "$out"/*.deb
changes=$(ls "$out"/*.changes)
# Every tag, information and overridden ones included; errors and warnings fail.
lintian --display-info --show-overrides "$changes" >"$out/lintian.txt" 2>&1 || true
sed 's/^/lintian: /' "$out/lintian.txt"
if grep -qE '^[EW]: ' "$out/lintian.txt"; then
	echo "deb.sh: lintian reports errors or warnings ($out/lintian.txt)" >&2
	exit 1
fi
echo "deb.sh: lintian: no error, no warning"
