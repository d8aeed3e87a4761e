#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Regenerate the symbolization fixtures in tests/fixtures/bin/symbols/ from
# tests/fixtures/src/symtest.c: one C file built with gcc -g -O2 and then stripped, split
# and linked every way a debugger meets it; and from symthumb.c an arm Thumb executable
# (clang and binutils for arm), from symlabels.S the rules on labels. The outputs are
# committed.
# Usage: scripts/gen-symbol-fixtures.sh
set -eu
cd "$(dirname "$0")/.."
SRC=tests/fixtures/src/symtest.c
OUT=tests/fixtures/bin/symbols
W=$(mktemp -d /tmp/gen-symbol-fixtures.XXXXXX)
trap 'rm -rf "$W"' EXIT

export SOURCE_DATE_EPOCH=0
# No path of this machine in the DWARF: the unit's directory becomes ".".
CFLAGS="-g -O2 -ffile-prefix-map=$PWD=."

rm -rf "$OUT"
mkdir -p "$OUT/debug" "$OUT/.debug"

# With DWARF and .symtab; and the same object before linking (ET_REL).
gcc $CFLAGS -Wl,--build-id=sha1 -o "$OUT/symtest" $SRC
gcc $CFLAGS -c -o "$OUT/symtest.o" $SRC

# Compressed debug sections (SHF_COMPRESSED): libelf decompresses them in place.
gcc $CFLAGS -gz=zlib -Wl,--build-id=sha1 -o "$OUT/symtest-gz" $SRC

# Stripped, and its debug file under a debug directory by build-id.
strip --strip-all -o "$OUT/symtest-stripped" "$OUT/symtest"
id=$(readelf -n "$OUT/symtest" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
mkdir -p "$OUT/debug/.build-id/${id:0:2}"
objcopy --only-keep-debug "$OUT/symtest" "$OUT/debug/.build-id/${id:0:2}/${id:2}.debug"

# No build-id: found only by .gnu_debuglink, in the .debug/ directory beside it.
gcc $CFLAGS -Wl,--build-id=none -o "$W/symtest-link" $SRC
objcopy --only-keep-debug "$W/symtest-link" "$OUT/.debug/symtest-link.debug"
strip --strip-all -o "$W/stripped" "$W/symtest-link"
objcopy --add-gnu-debuglink="$OUT/.debug/symtest-link.debug" "$W/stripped" "$OUT/symtest-link"

# A debuglink whose CRC does not match the file of that name: the file must be refused.
gcc $CFLAGS -O1 -Wl,--build-id=none -o "$W/symtest-badcrc" $SRC
objcopy --only-keep-debug "$W/symtest-badcrc" "$W/symtest-badcrc.debug"
strip --strip-all -o "$W/stripped-bad" "$W/symtest-badcrc"
objcopy --add-gnu-debuglink="$W/symtest-badcrc.debug" "$W/stripped-bad" "$OUT/symtest-badcrc"
cp "$OUT/.debug/symtest-link.debug" "$OUT/.debug/symtest-badcrc.debug"

# DWARF but no symbol table: function names can only come from DW_TAG_subprogram.
strip --strip-all --keep-section=".debug*" -o "$OUT/symtest-nosymtab" "$OUT/symtest"

# 32-bit arm, Thumb: function symbols carry the Thumb bit (value | 1).
clang --target=armv7a-linux-gnueabihf -mthumb $CFLAGS -ffreestanding -c -o "$W/symthumb.o" \
	tests/fixtures/src/symthumb.c
arm-linux-gnueabihf-ld -pie --build-id=sha1 -e _start -o "$OUT/symthumb" "$W/symthumb.o"

# Untyped labels, aliases, padding and local labels (x86_64 assembly, -L keeps .L labels).
as -L -o "$W/symlabels.o" tests/fixtures/src/symlabels.S
ld -pie --build-id=sha1 -e _start -o "$OUT/symlabels" "$W/symlabels.o"

for f in "$OUT"/sym* "$OUT"/.debug/* "$OUT"/debug/.build-id/*/*; do
	printf '  %-60s %s bytes\n' "$f" "$(stat -c %s "$f")"
done
