# SPDX-License-Identifier: GPL-2.0-only
"""What the benchmark drivers share: the input file lists."""
import os


def elf_files(top, maxf):
    """Up to maxf regular ELF files under top (no symlinks), in a stable sorted order."""
    files = []
    for root, dirs, names in os.walk(top):
        dirs.sort()
        for name in sorted(names):
            p = os.path.join(root, name)
            try:
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        files.append(p)
            except OSError:
                pass
            if len(files) >= maxf:
                return files
    return files
