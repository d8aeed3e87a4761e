#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Download and unpack the kernels of tests/kernels/list into the cache directory
# (RSEQDBG_KERNEL_CACHE, default /var/cache/rseqdbg-kernels), through a private apt
# configuration that adds the list's suites to this machine's mirror.
# RSEQDBG_KERNEL_ARCH=arm64: the kernels of tests/kernels/list-arm64.
#
#   tests/kernels/fetch.sh [NAME...]   fetch the listed kernels (or those matching NAME)
#   tests/kernels/fetch.sh --bump      rewrite the list with each suite's current kernel
#   tests/kernels/fetch.sh --print     print "RELEASE KERNEL-ROOT" per fetched kernel
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bump=0 print=0
while [ $# -gt 0 ]; do
	case $1 in
	--bump) bump=1 ;;
	--print) print=1 ;;
	-h | --help) sed -n '3,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) kdie "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
[ -r "$KLIST" ] || kdie "no kernel list $KLIST"

if [ $print = 1 ]; then
	klines "$@" | while read -r _ pkg _ _; do
		r=$(krelease "$pkg")
		[ -e "$(kroot "$r")/.fetched" ] && echo "$r $(kroot "$r")"
	done
	exit 0
fi

mkdir -p "$KCACHE" 2>/dev/null || kdie "cannot create $KCACHE (set RSEQDBG_KERNEL_CACHE)"
kapt_setup
updated=0
if [ $bump = 1 ] || ! ls "$KAPT"/lists/*_Packages >/dev/null 2>&1; then
	kapt_update
	updated=1
fi

# The version of PACKAGE that SUITE offers, or nothing.
suite_version() { # PACKAGE SUITE
	apt-cache "${KAPT_OPTS[@]}" madison "$1" 2>/dev/null |
		awk -F'|' -v s="$2" '{ gsub(/ /, "", $2); split($3, a, " ") }
			a[2] == s "/main" { print $2; exit }'
}

if [ $bump = 1 ]; then
	tmp=$(mktemp "$KLIST.XXXXXX")
	while IFS= read -r line; do
		read -r suite pkg ver rest <<<"$line" || true
		case $suite in '' | '#'*) echo "$line"; continue ;; esac
		fl=$(kflavour "$(krelease "$pkg")")
		# the suite's metapackage names the kernel it currently ships
		mv=$(suite_version "linux-image-$fl" "$suite")
		[ -n "$mv" ] || kdie "$suite has no linux-image-$fl"
		img=$(apt-cache "${KAPT_OPTS[@]}" show "linux-image-$fl=$mv" |
			sed -n 's/^Depends: .*\(linux-image-[^ ,]*-'"$fl"'\) .*/\1/p' | head -n 1)
		[ -n "$img" ] || kdie "cannot tell which kernel linux-image-$fl $mv depends on"
		r=${img#linux-image-}
		if [ -n "$(suite_version "linux-image-$r-unsigned" "$suite")" ]; then
			np=linux-image-$r-unsigned
		else
			np=linux-binary-$r
		fi
		[ -n "$(suite_version "$np" "$suite")" ] || kdie "$suite has no $np"
		[ "$np $mv" = "$pkg $ver" ] || echo "bump: $pkg $ver -> $np $mv" >&2
		printf '%-20s %-46s %-18s %s\n' "$suite" "$np" "$mv" "$rest"
	done <"$KLIST" >"$tmp"
	mv "$tmp" "$KLIST"
	exit 0
fi

mkdir -p "$KCACHE/debs" "$KCACHE/root"
klines "$@" | while read -r suite pkg ver _; do
	r=$(krelease "$pkg")
	root=$(kroot "$r")
	want="$pkg=$ver"
	if [ -e "$root/.fetched" ] && [ "$(cat "$root/.fetched")" = "$want" ]; then
		continue
	fi
	pkgs=("$pkg=$ver")
	# 7.x: the image and its modules are two packages
	case $pkg in linux-binary-*) pkgs+=("linux-modules-$r=$ver") ;; esac
	echo "fetch: $r ($suite)" >&2
	if ! (cd "$KCACHE/debs" && apt-get "${KAPT_OPTS[@]}" -qq download "${pkgs[@]}"); then
		# indexes older than the list: refresh once
		[ $updated = 0 ] || kdie "$suite does not offer ${pkgs[*]}"
		kapt_update
		(cd "$KCACHE/debs" && apt-get "${KAPT_OPTS[@]}" -qq download "${pkgs[@]}") ||
			kdie "$suite does not offer ${pkgs[*]} (tests/kernels/fetch.sh --bump?)"
	fi
	rm -rf "$root.new"
	mkdir -p "$root.new"
	for p in "${pkgs[@]}"; do
		n=${p%%=*} v=${p#*=}
		dpkg-deb -x "$KCACHE/debs/${n}_${v//:/%3a}_$KARCH.deb" "$root.new"
	done
	[ -e "$root.new/boot/vmlinuz-$r" ] || [ -e "$root.new/usr/lib/modules/$r/vmlinuz" ] ||
		kdie "$pkg $ver holds no /boot/vmlinuz-$r nor /usr/lib/modules/$r/vmlinuz"
	echo "$want" >"$root.new/.fetched"
	rm -rf "$root"
	mv "$root.new" "$root"
done
