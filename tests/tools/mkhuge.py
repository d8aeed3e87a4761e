#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""mkhuge: an ELF file one of whose sections claims a huge size at a huge offset.

    mkhuge.py FIXTURE OUT SECTION [--size N] [--offset N] [--total N] [--segment]

Copies FIXTURE (ELF64 little endian) to OUT, moves SECTION's file bytes to OFFSET (default
1 GiB) and declares SIZE bytes there (default 50 GiB), then extends OUT to TOTAL bytes
(default 100 GiB) with truncate: a sparse file, every header true to the file's size, whose
section holds nothing but zeros. --segment does the same to the PT_LOAD that holds the
section. With small numbers (--offset 0x10000 --size 0x1000 --total 0x12000) the same
damage fits a fuzz seed or a unit test.
"""
import argparse
import os
import struct
import sys


def num(s):
    return int(s, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture")
    ap.add_argument("out")
    ap.add_argument("section")
    ap.add_argument("--size", type=num, default=50 << 30)
    ap.add_argument("--offset", type=num, default=1 << 30)
    ap.add_argument("--total", type=num, default=100 << 30)
    ap.add_argument("--segment", action="store_true")
    a = ap.parse_args()

    b = bytearray(open(a.fixture, "rb").read())
    if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
        sys.exit("mkhuge: %s: expected an ELF64 little-endian file" % a.fixture)
    if a.offset < len(b) or a.total < a.offset + a.size:
        sys.exit("mkhuge: offset 0x%x must follow the file (0x%x bytes) and offset + size "
                 "fit in 0x%x" % (a.offset, len(b), a.total))
    phoff, shoff = struct.unpack_from("<QQ", b, 32)
    phnum, _, shnum, shstrndx = struct.unpack_from("<HHHH", b, 56)

    def shdr(i):
        return shoff + 64 * i

    stroff = struct.unpack_from("<Q", b, shdr(shstrndx) + 24)[0]
    for i in range(1, shnum):
        name = struct.unpack_from("<I", b, shdr(i))[0]
        end = b.index(b"\0", stroff + name)
        if b[stroff + name:end].decode() == a.section:
            break
    else:
        sys.exit("mkhuge: %s: no section %s" % (a.fixture, a.section))
    old = struct.unpack_from("<Q", b, shdr(i) + 24)[0]
    addr = struct.unpack_from("<Q", b, shdr(i) + 16)[0]
    struct.pack_into("<QQ", b, shdr(i) + 24, a.offset, a.size)
    if a.segment:
        for k in range(phnum):
            p = phoff + 56 * k
            ptype, _, poff, vaddr = struct.unpack_from("<IIQQ", b, p)
            filesz = struct.unpack_from("<Q", b, p + 32)[0]
            if ptype == 1 and poff <= old < poff + filesz:
                # the section's address keeps its place in the segment
                struct.pack_into("<Q", b, p + 8, a.offset - (addr - vaddr))
                struct.pack_into("<QQQ", b, p + 24, vaddr, a.size + (addr - vaddr),
                                 a.size + (addr - vaddr))
                break
        else:
            sys.exit("mkhuge: no PT_LOAD holds %s" % a.section)
    with open(a.out, "wb") as f:
        f.write(b)
    os.truncate(a.out, a.total)


main()
