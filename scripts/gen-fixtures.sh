#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Regenerate the ELF fixtures in tests/fixtures/bin/<arch>/ from tests/fixtures/src/.
# Needs gcc (x86_64 sources use the C preprocessor), GNU binutils for every architecture
# (Debian binutils-<triplet> packages) and ld.lld; no C library. The outputs are committed so
# that the tests need none of these tools.
# Usage: scripts/gen-fixtures.sh [ARCH...]   (default: every architecture)
set -eu
cd "$(dirname "$0")/.."
SRC=tests/fixtures/src
OUT=tests/fixtures/bin
W=$(mktemp -d /tmp/gen-fixtures.XXXXXX)
trap 'rm -rf "$W"' EXIT

# Deterministic output: no paths of this machine in the files, fixed build-ids.
export SOURCE_DATE_EPOCH=0

say() { printf '  %-28s %s\n' "$1" "$(stat -c %s "$1") bytes"; }

# Patch the 16-bit e_machine field of an ELF file (little-endian header) in place.
set_machine_le() {
	printf "$(printf '\\x%02x\\x%02x' $(($2 & 255)) $(($2 >> 8)))" |
		dd of="$1" bs=1 seek=18 conv=notrunc status=none
}

gen_x86_64() {
	local d=$OUT/x86_64 o=$W/x86_64
	mkdir -p "$d" "$o"
	# One object, linked every way a binary is linked in the wild.
	gcc -c -o "$d/cs.o" $SRC/cs-x86_64.S
	gcc -c -g -fdebug-prefix-map="$PWD"=. -o "$o/cs-g.o" $SRC/cs-x86_64.S
	ld -shared --build-id=sha1 -soname cs.so -o "$d/cs.so" "$d/cs.o"
	ld -pie --build-id=sha1 -e _start --dynamic-linker /lib64/ld-linux-x86-64.so.2 \
		-o "$d/cs-pie" "$d/cs.o"
	ld -pie --build-id=sha1 -e _start --dynamic-linker /lib64/ld-linux-x86-64.so.2 \
		-o "$d/cs-pie-dwarf" "$o/cs-g.o"
	# The same with zlib-compressed .debug_* sections (SHF_COMPRESSED), as distributions ship.
	ld -pie --build-id=sha1 -e _start --dynamic-linker /lib64/ld-linux-x86-64.so.2 \
		--compress-debug-sections=zlib -o "$d/cs-pie-zdebug" "$o/cs-g.o"
	# A classic dynamically linked executable (PT_INTERP, DT_NEEDED) at a fixed address.
	ld -no-pie --build-id=sha1 -e _start --dynamic-linker /lib64/ld-linux-x86-64.so.2 \
		-o "$d/cs-nopie" "$d/cs.o" "$d/cs.so"
	ld -static --build-id=sha1 -e _start -o "$d/cs-static" "$d/cs.o"
	# lld leaves zeros where RELATIVE relocations apply (no --apply-dynamic-relocs).
	ld.lld -pie --build-id=sha1 -e _start --dynamic-linker /lib64/ld-linux-x86-64.so.2 \
		-o "$d/cs-lld-pie" "$d/cs.o"
	# lld shared object: RELATIVE and the symbolic R_X86_64_64 both with zeros in place.
	ld.lld -shared --build-id=sha1 -soname cs.so -o "$d/cs-lld.so" "$d/cs.o"
	# DT_RELR: GNU ld 2.40 cannot pack relative relocations, lld can.
	ld.lld -pie --build-id=sha1 -e _start --pack-dyn-relocs=relr \
		--dynamic-linker /lib64/ld-linux-x86-64.so.2 -o "$d/cs-relr" "$d/cs.o"
	# Garbage collection keeps __rseq_cs (code refers to it) and drops the arrays.
	ld -pie --gc-sections --build-id=sha1 -e _start \
		--dynamic-linker /lib64/ld-linux-x86-64.so.2 -o "$d/cs-gc" "$d/cs.o"
	ld.lld -pie --gc-sections --build-id=sha1 -e _start \
		--dynamic-linker /lib64/ld-linux-x86-64.so.2 -o "$d/cs-lld-gc" "$d/cs.o"

	local f
	for f in table2018 table2016; do
		gcc -c -o "$o/$f.o" $SRC/$f-x86_64.S
		ld -pie --build-id=sha1 -e _start --dynamic-linker /lib64/ld-linux-x86-64.so.2 \
			-o "$d/$f" "$o/$f.o"
		ld.lld -pie --build-id=sha1 -e _start \
			--dynamic-linker /lib64/ld-linux-x86-64.so.2 -o "$d/$f-lld" "$o/$f.o"
	done
	# 2015 code was linked at fixed addresses (its table is read-only: no relocations).
	gcc -c -o "$o/sections2015.o" $SRC/sections2015-x86_64.S
	ld -static --build-id=sha1 -e _start -o "$d/sections2015" "$o/sections2015.o"
	for f in "$d"/*; do say "$f"; done
}

# cross ARCH TRIPLET AS-FLAGS LD-FLAGS INTERP: cs.o, cs-pie and cs.so from cs-generic.s
cross() {
	local t=$2 asf=$3 ldf=$4 interp=$5 d=$OUT/$1 inc=${6:-$1}
	mkdir -p "$d"
	$t-as $asf -o "$d/cs.o" $SRC/arch/$inc.inc $SRC/cs-generic.s
	# 4 KiB pages keep the files small on targets whose default is 64 KiB.
	$t-ld $ldf -z max-page-size=4096 -pie --build-id=sha1 -e _start \
		--dynamic-linker "$interp" -o "$d/cs-pie" "$d/cs.o"
	$t-ld $ldf -z max-page-size=4096 -shared --build-id=sha1 -soname cs.so \
		-o "$d/cs.so" "$d/cs.o"
}

gen_i386() { cross i386 i686-linux-gnu --32 "-m elf_i386" /lib/ld-linux.so.2; }
gen_aarch64() {
	cross aarch64 aarch64-linux-gnu "" "" /lib/ld-linux-aarch64.so.1
	ld.lld -pie --build-id=sha1 -e _start --dynamic-linker /lib/ld-linux-aarch64.so.1 \
		-o $OUT/aarch64/cs-lld-pie $OUT/aarch64/cs.o
}
gen_arm() { cross arm arm-linux-gnueabihf "" "" /lib/ld-linux-armhf.so.3; }
# Big-endian ARMv7 (BE8: big-endian data, instructions swapped to little endian by ld).
gen_armeb() { cross armeb arm-linux-gnueabihf -EB "-EB --be8" /lib/ld-linux-armhf.so.3; }
gen_ppc64le() { cross ppc64le powerpc64le-linux-gnu "" "" /lib64/ld64.so.2 ppc64; }
gen_ppc64() { cross ppc64 powerpc64-linux-gnu "" "" /lib64/ld64.so.2; }
# 32-bit big-endian PowerPC, with the 64-bit toolchain in 32-bit mode.
gen_ppc() { cross ppc powerpc64-linux-gnu "-a32 -mbig" "-m elf32ppclinux" /lib/ld.so.1; }
gen_s390x() { cross s390x s390x-linux-gnu "" "" /lib/ld64.so.1; }
gen_riscv64() { cross riscv64 riscv64-linux-gnu "" "" /lib/ld-linux-riscv64-lp64d.so.1; }

gen_unknown() {
	local d=$OUT/unknown
	mkdir -p "$d"
	# cs-static with an e_machine nobody assigned: nothing to relocate, no known signature.
	cp $OUT/x86_64/cs-static "$d/cs-em32343"
	set_machine_le "$d/cs-em32343" 32343
	say "$d/cs-em32343"
}

ARCHES=${*:-x86_64 i386 aarch64 arm armeb ppc64le ppc64 ppc s390x riscv64 unknown}
for a in $ARCHES; do
	echo "$a:"
	"gen_$a"
	case $a in x86_64 | unknown) ;; *) for f in "$OUT/$a"/*; do say "$f"; done ;; esac
done
