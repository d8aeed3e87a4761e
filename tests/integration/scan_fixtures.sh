#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `rseqdbg scan --json` on every committed fixture, compared with what the fixture's own
# symbols say (tests/tools/symdump, libelf only), its ELF header bytes, readelf, and the
# source lines of the labels: never with an earlier run of the scanner.
# See tests/fixtures/README for the symbol convention and what each fixture holds.
source "$(dirname "$0")/../lib.sh"

SYMDUMP="$BUILD/tests/tools/symdump"
if [ ! -x "$RSEQDBG" ] || [ ! -x "$SYMDUMP" ]; then
	fail scan_fixtures "build first: $RSEQDBG or $SYMDUMP missing"
	finish
	exit
fi

# The table fixtures of scripts/gen-fixtures.sh (other directories under bin/ serve other tests).
ARCHES="x86_64 i386 aarch64 arm armeb ppc64le ppc64 ppc s390x riscv64 unknown"
mapfile -t FILES < <(for a in $ARCHES; do find "$FIX/bin/$a" -maxdepth 1 -type f; done | sort)

python3 - "$RSEQDBG" "$SYMDUMP" "$FIX" "${FILES[@]}" <<'PYEOF' || _fails=$((_fails + 1))
import json, os, re, struct, subprocess, sys

rseqdbg, symdump, fixdir, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
fails = 0

def result(name, ok, why=""):
    global fails
    if ok:
        print("PASS: %s" % name)
    else:
        fails += 1
        print("FAIL: %s: %s" % (name, why))

# Per architecture: e_machine, class, byte order, the 4 signature bytes as the file holds them.
ARCH = {
    "x86_64":  (62, 64, "little", "53 30 05 53"),
    "i386":    (3, 32, "little", "53 30 05 53"),
    "aarch64": (183, 64, "little", "00 bc 28 d4"),
    "arm":     (40, 32, "little", "f3 de f5 e7"),
    "armeb":   (40, 32, "big", "f3 de f5 e7"),
    "ppc64le": (21, 64, "little", "0b 00 e5 0f"),
    "ppc64":   (21, 64, "big", "0f e5 00 0b"),
    "ppc":     (20, 32, "big", "0f e5 00 0b"),
    "s390x":   (22, 64, "big", "b2 ff 0f ff"),
    "riscv64": (243, 64, "little", "73 10 40 f1"),
    "unknown": (32343, 64, "little", "53 30 05 53"),
}
PTR, CS, EXITS = "__rseq_cs_ptr_array", "__rseq_cs", "__rseq_exit_point_array"
T2018, T2016, S2015 = "__rseq_table(2018)", "__rseq_table(2016)", "__rseq_sections(2015)"
LEGACY = {"table2018": T2018, "table2016": T2016, "sections2015": S2015}
# Which descriptor has two pointer-array slots.
DUP = "dup"

def expect(arch, name):
    """What the scanner must find in fixture arch/name (tests/fixtures/README)."""
    e = {"tables": {PTR, EXITS}, "absent": {T2018, T2016, S2015}, "sig": "match",
         "exits": True, "ptr": True, "table_section": CS}
    if name in ("cs-gc", "cs-lld-gc"):
        # --gc-sections dropped the arrays; only __rseq_cs, walked by stride, remains.
        e.update(tables={CS}, exits=False, ptr=False)
        e["absent"] = e["absent"] | {PTR, EXITS}
    name = name.split("-")[0]   # table2018-lld is table2018 linked by lld
    if name in LEGACY:
        t = LEGACY[name]
        e.update(tables={t}, absent={PTR, CS, EXITS} | (set(LEGACY.values()) - {t}),
                 exits=False, ptr=False,
                 table_section="__rseq_sections" if name == "sections2015" else "__rseq_table")
        if name != "table2018":
            e["sig"] = "mismatch"   # these formats predate abort signatures
    if arch == "unknown":
        e["sig"] = "unknown-arch"
    return e

def symbols(path):
    out = subprocess.run([symdump, path], capture_output=True, text=True, check=True).stdout
    syms, funcs = {}, []
    for line in out.splitlines():
        v, sz, typ, shndx, name = line.split(" ", 4)
        v, sz = int(v, 16), int(sz, 16)
        if typ == "FUNC":
            funcs.append((v, sz, name))
        if name.startswith("rseq_"):
            syms[name] = v
    return syms, funcs

def elf_header(path):
    with open(path, "rb") as f:
        b = f.read(64)
    cls = {1: 32, 2: 64}[b[4]]
    end = {1: "little", 2: "big"}[b[5]]
    fmt = "<" if end == "little" else ">"
    etype, machine = struct.unpack(fmt + "HH", b[16:20])
    return cls, end, etype, machine

def readelf_sections(path):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True).stdout
    secs = {}
    for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", out):
        secs[m.group(1)] = (int(m.group(2), 16), int(m.group(4), 16))
    return secs

def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None

def func_of(funcs, addr):
    for v, sz, name in funcs:
        if v <= addr < v + sz:
            return name, addr - v
    return None, None

def label_line(src, label):
    """Line of the instruction that follows 'label:' in src (1-based), None if not direct."""
    lines = open(src).read().split("\n")
    for i, l in enumerate(lines):
        if l.startswith(label + ":"):
            nxt = lines[i + 1].strip()
            if nxt and not nxt.endswith(":") and nxt[0] not in "#./":
                return i + 2
    return None

def scan(args):
    p = subprocess.run([rseqdbg, "scan"] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def check_file(path):
    arch = os.path.basename(os.path.dirname(path))
    name = os.path.basename(path)
    tag = "%s/%s" % (arch, name)
    e = expect(arch, name)
    rc, out, err = scan(["--json", path])
    result(tag + " exit 0", rc == 0 and not err.strip(), "exit %d, stderr %r" % (rc, err[:200]))
    try:
        doc = json.loads(out)
        fo = doc["files"][0]
    except Exception as ex:
        result(tag + " json", False, "unparsable output (%s): %r" % (ex, out[:200]))
        return
    result(tag + " json", len(doc["files"]) == 1 and fo.get("path") == path,
           "files=%d path=%r" % (len(doc["files"]), fo.get("path")))
    trc, tout, terr = scan([path])
    result(tag + " text", trc == 0 and tout.strip() and not terr,
           "exit %d, stderr %r" % (trc, terr[:200]))

    # File properties against the ELF header bytes and readelf.
    cls, end, etype, machine = elf_header(path)
    mach, acls, aend, sigbytes = ARCH[arch]
    tname = {1: "REL", 2: "EXEC", 3: "DYN", 4: "CORE"}.get(etype, "other")
    got = (fo.get("machine"), fo.get("class"), fo.get("endian"), fo.get("type"))
    want = (machine, cls, end, tname)
    result(tag + " header", got == want and (mach, acls, aend) == (machine, cls, end),
           "scanner %r, ELF header %r, fixture arch %r" % (got, want, (mach, acls, aend)))
    if arch == "unknown":
        result(tag + " arch name", fo.get("arch") == "EM_%d" % machine, repr(fo.get("arch")))
    pie = tname == "DYN" and not name.endswith(".so")
    result(tag + " pie", fo.get("pie") is pie, "pie=%r, expected %r" % (fo.get("pie"), pie))
    bid = build_id(path)
    result(tag + " build_id", fo.get("build_id") == bid,
           "%r, readelf says %r" % (fo.get("build_id"), bid))

    tables = set(fo.get("tables") or [])
    missing, extra = e["tables"] - tables, e["absent"] & tables
    result(tag + " tables", not missing and not extra,
           "tables %s: missing %s, unexpected %s" % (sorted(tables), sorted(missing),
                                                       sorted(extra)))

    syms, funcs = symbols(path)
    ids = sorted(n[len("rseq_start_"):] for n in syms if n.startswith("rseq_start_"))
    secs = fo.get("sections") or []
    result(tag + " count", len(secs) == len(ids),
           "%d sections, %d rseq_start_* symbols (%s)" % (len(secs), len(ids), " ".join(ids)))

    shdrs = readelf_sections(path) if tname != "REL" else {}
    all_exits = 0
    for cid in ids:
        c = "%s %s" % (tag, cid)
        start = syms["rseq_start_" + cid]
        post, abort = syms["rseq_post_commit_" + cid], syms["rseq_abort_" + cid]
        match = [s for s in secs if s.get("start_ip") == start]
        if len(match) != 1:
            result(c + " found", False, "%d sections with start_ip %#x (starts: %s)" % (
                len(match), start, " ".join("%#x" % s.get("start_ip", -1) for s in secs)))
            continue
        s = match[0]
        got = (s.get("start_ip"), s.get("post_commit_ip"), s.get("abort_ip"),
               s.get("post_commit_offset"))
        want = (start, post, abort, post - start)
        result(c + " addresses", got == want,
               "start/post_commit/abort/offset %s, symbols say %s" % (
                   " ".join("%#x" % x if isinstance(x, int) else repr(x) for x in got),
                   " ".join("%#x" % x for x in want)))
        result(c + " version/flags", (s.get("version"), s.get("flags")) == (0, 0),
               "version %r flags %r" % (s.get("version"), s.get("flags")))
        sig = s.get("signature") or {}
        result(c + " signature", sig.get("status") == e["sig"],
               "status %r, expected %r (bytes %r)" % (sig.get("status"), e["sig"],
                                                     sig.get("bytes")))
        if e["sig"] in ("match", "unknown-arch"):
            b = bytes(int(x, 16) for x in sigbytes.split())
            val = int.from_bytes(b, end)
            result(c + " signature bytes", sig.get("bytes") == sigbytes and
                   sig.get("value") == val, "bytes %r value %r, expected %r %#x" % (
                       sig.get("bytes"), sig.get("value"), sigbytes, val))

        # Symbolization: the function that covers each label, by the symbol table.
        for what, addr in (("start", start), ("post_commit", post), ("abort", abort)):
            fn, off = func_of(funcs, addr)
            loc = s.get(what) or {}
            result("%s %s function" % (c, what),
                   loc.get("addr") == addr and loc.get("function") == fn and
                   loc.get("offset") == off,
                   "%r+%r at %r, symbol table says %r+%r at %#x" % (
                       loc.get("function"), loc.get("offset"), loc.get("addr"), fn, off, addr))

        # Where the descriptor was found.
        sites = s.get("found_in") or []
        ptr_sites = [x for x in sites if x.get("table") == PTR]
        nslots = (2 if cid == DUP else 1) if e["ptr"] else 0
        result(c + " sites", len(ptr_sites) == nslots and
               len({x.get("addr") for x in ptr_sites}) == nslots and
               all(x.get("table") in tables for x in sites),
               "found_in %r, expected %d distinct %s slots" % (sites, nslots, PTR))
        if not e["ptr"]:
            # Without a pointer array the descriptor is found by walking its own table.
            want_t = e["tables"]
            result(c + " walked", sites and all(x.get("table") in want_t for x in sites),
                   "found_in %r, expected sites in %s" % (sites, sorted(want_t)))
        if shdrs:
            lo, size = shdrs.get(e["table_section"], (0, 0))
            d = s.get("descriptor", -1)
            align = 32 if e["table_section"] == CS or name.startswith("table2018") else 8
            result(c + " descriptor", lo <= d < lo + size and d % align == 0,
                   "descriptor %r not an aligned address in %s [%#x, %#x)" % (
                       d, e["table_section"], lo, lo + size))
            if ptr_sites and PTR in shdrs:
                plo, psz = shdrs[PTR]
                result(c + " slots", all(plo <= x["addr"] < plo + psz for x in ptr_sites),
                       "slot addresses %r outside %s [%#x, %#x)" % (
                           [x["addr"] for x in ptr_sites], PTR, plo, plo + psz))

        # Exit points belonging to the section.
        want_exits = sorted(v for n, v in syms.items()
                            if re.fullmatch(r"rseq_exit_%s(_\d+)?" % cid, n))
        if not e["exits"]:
            want_exits = []
        all_exits += len(want_exits)
        got_exits = s.get("exit_points") or []
        result(c + " exit points",
               sorted(x.get("exit_ip") for x in got_exits) == want_exits and
               all(x.get("start_ip") == start for x in got_exits),
               "exit_points %r, symbols say start %#x exits %s" % (
                   got_exits, start, [hex(x) for x in want_exits]))
        for x in got_exits:
            fn, off = func_of(funcs, x.get("exit_ip", -1))
            loc = x.get("exit") or {}
            ok = loc.get("function") == fn and loc.get("offset") == off
            if shdrs and EXITS in shdrs:
                elo, esz = shdrs[EXITS]
                a = x.get("addr", -1)
                ok = ok and elo <= a < elo + esz and (a - elo) % 16 == 0
            result("%s exit %#x" % (c, x.get("exit_ip", -1)), ok,
                   "entry %r: expected function %r+%r and an entry address in %s" % (
                       x, fn, off, EXITS))
    fexits = fo.get("exit_points") or []
    result(tag + " file exit points", len(fexits) == all_exits,
           "%d exit points, %d rseq_exit_* symbols" % (len(fexits), all_exits))

    # DWARF: only cs-pie-dwarf and cs-pie-zdebug have line info; lines come from the labels
    # in the source.
    dwarf = name in ("cs-pie-dwarf", "cs-pie-zdebug")
    result(tag + " dwarf", fo.get("dwarf") is dwarf and fo.get("debuginfo") is None,
           "dwarf=%r debuginfo=%r (no separate debug file exists for fixtures)" % (
               fo.get("dwarf"), fo.get("debuginfo")))
    src = os.path.join(fixdir, "src", "cs-x86_64.S")
    for s in secs:
        for what in ("start", "post_commit", "abort"):
            loc = s.get(what) or {}
            if not dwarf:
                if loc.get("file") is not None or loc.get("line") is not None:
                    result(tag + " no invented lines", False,
                           "%s at %#x has file %r line %r without DWARF" % (
                               what, s.get(what + "_ip", 0), loc.get("file"), loc.get("line")))
                    return
                continue
    if not dwarf:
        result(tag + " no invented lines", True)
        return
    for cid in ids:
        for what in ("start", "post_commit", "abort"):
            label = "rseq_%s_%s" % (what, cid)
            line = label_line(src, label)
            if line is None:
                continue
            s = [x for x in secs if x.get("start_ip") == syms["rseq_start_" + cid]]
            loc = (s[0].get(what) if s else None) or {}
            result("%s %s line" % (tag, label),
                   str(loc.get("file", "")).endswith("cs-x86_64.S") and loc.get("line") == line,
                   "%r:%r, source has %s at line %d" % (loc.get("file"), loc.get("line"),
                                                         label, line))

for f in files:
    check_file(f)

# Text mode: readable output, nothing on stderr, same exit status.
f = os.path.join(fixdir, "bin", "x86_64", "cs-pie")
rc, out, err = scan([f])
result("text mode", rc == 0 and not err and "rseq_inc" in out and "rseq_tcm" in out,
       "exit %d, stderr %r, stdout %r" % (rc, err[:200], out[:200]))

# Several files in one run: one object each, in order.
rc, out, err = scan(["--json"] + files)
try:
    paths = [x["path"] for x in json.loads(out)["files"]]
except Exception as ex:
    paths = ex
result("many files", rc == 0 and paths == files, "exit %d, paths %r" % (rc, paths))

# A file without rseq tables is not an error.
rc, out, err = scan(["--json", symdump])
try:
    fo = json.loads(out)["files"][0]
    ok = rc == 0 and fo["sections"] == [] and fo["tables"] == []
except Exception as ex:
    ok, fo = False, ex
result("no tables", ok, "exit %d: %r" % (rc, fo))
rc, out, err = scan([symdump])
result("no tables text", rc == 0 and out.strip() and not err,
       "exit %d, stdout %r, stderr %r" % (rc, out[:200], err[:200]))

sys.exit(1 if fails else 0)
PYEOF
finish
