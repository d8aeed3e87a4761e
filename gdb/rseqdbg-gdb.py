# SPDX-License-Identifier: GPL-2.0-only
"""rseqdbg gdb extension: step through code that uses restartable sequences (rseq).

Load it with `source /path/to/rseqdbg-gdb.py` (or from ~/.gdbinit). It adds:

  rseq info          the rseq critical sections of every loaded object, at runtime addresses
  rseq stepi [N]     stepi N instructions, never stopping inside a critical section
  rseq nexti [N]     the same, stepping over calls
  rseq step [N]      step N source lines, never stopping inside a critical section

Why: a ptrace stop (a single-step trap, a breakpoint) with the instruction pointer inside an
armed critical section makes the kernel move the thread to the section's abort handler when
it resumes. Plain `stepi` into a section therefore never reaches its commit. Before each
instruction these commands look at where it can go; when that is inside a section they set
temporary breakpoints at every exit of the section (post-commit address, abort handler, the
exit points of __rseq_exit_point_array, branch targets leaving it) and let the thread run
through, then report:

  stepped over rseq critical section wl_counter_add (rseq_workload.S:41): committed

The extension also warns when gdb stops inside a section (resuming will abort it) and when a
breakpoint is set inside one (each hit aborts the section, which then never completes).

Sections come from rseqdbg, which decodes the tables, relocates them and finds each module's
load bias: `rseqdbg scan --pid PID --json` once the program runs, `rseqdbg scan --json FILE`
on each object file before, `rseqdbg scan --core CORE --json` on a core file (where `rseq
info` also shows each thread's rseq state when the core was written); and from the descriptor the thread's rseq area points to at the
moment. rseqdbg is $RSEQDBG, else the one installed or built beside this script, else the
first in PATH. Without a working rseqdbg the extension reads the __rseq_cs sections from the
inferior's memory instead, and says so.
Settings: `set rseq verbose on|off` prints each step-over's breakpoints; `set rseq timeout
SECONDS` bounds a step-over (an exit that decoding cannot see, such as an indirect jump, ends
it by interrupting the thread; default 2).

Ctrl-C stops a command at once, with the program stopped and the thread that was being
stepped selected again (the SIGINT may have stopped another one); `rseq: interrupted` says so.

Limits: the other threads keep running during a step-over (gdb's default), so a stop they
cause (their own breakpoint, a signal gdb stops on) ends the step-over early and is reported.
A timer signal faster than gdb can single-step (well under a millisecond) keeps gdb's own
stepping busy delivering signals, with or without this extension.
"""

import json
import os
import re
import shutil
import signal
import struct
import subprocess
import threading

import gdb

RSEQ_CS_SIZE = 32
RSEQ_AREA_CS = 8


def _find_rseqdbg():
    """$RSEQDBG, else the rseqdbg installed (PREFIX/bin) or built (build/) beside this
    script, else the first in PATH; None when there is none."""
    cand = os.environ.get("RSEQDBG")
    if cand:
        return cand if os.access(cand, os.X_OK) else None
    here = os.path.dirname(os.path.realpath(__file__))
    for rel in ("../../bin/rseqdbg", "../build/rseqdbg"):
        cand = os.path.normpath(os.path.join(here, rel))
        if os.access(cand, os.X_OK):
            return cand
    return shutil.which("rseqdbg")


class Section:
    """One critical section at runtime addresses."""

    def __init__(self, start, post_commit, abort, exit_ips, function, file, line, module):
        self.start = start
        self.post_commit = post_commit
        self.abort = abort
        self.exit_ips = sorted(set(exit_ips))
        self.function = function
        self.file = file
        self.line = line
        self.module = module
        self.decoded_exits = None  # branch targets leaving the section, decoded on first use
        self.indirect = False

    def contains(self, addr):
        return self.start <= addr < self.post_commit

    def where(self):
        name = self.function or "0x%x" % self.start
        if self.file and self.line:
            return "%s (%s:%d)" % (name, os.path.basename(self.file), self.line)
        return name


def _loc_name(addr):
    """Function name, file and line of a runtime address, as gdb knows them."""
    func = None
    try:
        block = gdb.block_for_pc(addr)
        while block is not None and block.function is None:
            block = block.superblock
        if block is not None:
            func = block.function.name
    except RuntimeError:
        pass
    if func is None:
        try:
            out = gdb.execute("info symbol 0x%x" % addr, to_string=True)
            m = re.match(r"(\S+)( \+ \d+)? in section", out)
            if m:
                func = m.group(1)
        except gdb.error:
            pass
    sal = gdb.find_pc_line(addr)
    file = sal.symtab.filename if sal.symtab else None
    return func, file, sal.line if sal.symtab else None


def _symbol(addr):
    """' <symbol+offset>' for an address, or ''."""
    try:
        out = gdb.execute("info symbol 0x%x" % addr, to_string=True)
    except gdb.error:
        return ""
    m = re.match(r"(\S+)(?: \+ (\d+))? in section", out)
    if not m:
        return ""
    return " <%s%s>" % (m.group(1), "+" + m.group(2) if m.group(2) else "")


class Registry:
    """The sections of the inferior, rebuilt when objects are loaded or the process changes."""

    def __init__(self):
        self.file_cache = {}  # (realpath, mtime, size) -> sections of the file, file addresses
        self.sections = None
        self.pid = None
        self.core_doc = None  # ((core, program), rseqdbg scan --core's document)
        self.warned = set()
        self.rseqdbg = _find_rseqdbg()

    def invalidate(self, *_):
        self.sections = None
        self.core_doc = None
        _AREAS.clear()

    def _warn_once(self, key, why):
        if key not in self.warned:
            self.warned.add(key)
            gdb.write("rseq: %s; reading __rseq_cs from memory\n" % why, gdb.STDERR)

    def _scan(self, args, what):
        """rseqdbg scan ARGS --json, parsed; None (and a warning once) when it fails."""
        if not self.rseqdbg:
            env = os.environ.get("RSEQDBG")
            self._warn_once(None, "RSEQDBG=%s is not an executable" % env if env else
                            "rseqdbg not found beside this script nor in PATH (set RSEQDBG "
                            "to its path)")
            return None
        res = None
        try:
            res = subprocess.run([self.rseqdbg, "scan"] + args + ["--json"],
                                 capture_output=True, text=True, timeout=60)
            doc = json.loads(res.stdout) if res.stdout.strip() else {}
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            doc = {"error": str(e)}
        if res is None or res.returncode != 0 or "error" in doc:
            why = doc.get("error") or (res.stderr.strip() if res else "") or "no output"
            self._warn_once(what, "rseqdbg scan %s failed (%s)" % (what, why))
            return None
        return doc

    def _scan_file(self, path):
        """The sections of an object file at its file addresses, or None."""
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError:
            return None
        key = (real, st.st_mtime_ns, st.st_size)
        if key not in self.file_cache:
            doc = self._scan([real], real)
            self.file_cache[key] = None if doc is None else [
                s for f in doc.get("files", []) for s in f.get("sections", [])]
        return self.file_cache[key]

    def _objfiles(self):
        seen = set()
        for objfile in gdb.objfiles():
            if not objfile.is_valid() or objfile.owner is not None or not objfile.filename:
                continue
            if not os.path.exists(objfile.filename) or objfile.filename in seen:
                continue
            seen.add(objfile.filename)
            yield objfile.filename

    def _from_memory(self, module):
        """Descriptors read from the running process's __rseq_cs of one object."""
        out = gdb.execute("info files", to_string=True)
        real = os.path.realpath(module)
        found, exits = [], []
        for m in re.finditer(r"0x([0-9a-f]+) - 0x([0-9a-f]+) is (__rseq_cs|__rseq_exit_point_array)"
                             r"(?: in (\S+))?", out):
            where = m.group(4)
            if (where and os.path.realpath(where) != real) or (not where and
                                                              real != self._main_file()):
                continue
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            try:
                mem = bytes(gdb.selected_inferior().read_memory(lo, hi - lo))
            except gdb.MemoryError:
                continue
            if m.group(3) == "__rseq_exit_point_array":
                for off in range(0, len(mem) - 15, 16):
                    exits.append(struct.unpack_from("<QQ", mem, off))
                continue
            base = (lo + RSEQ_CS_SIZE - 1) & ~(RSEQ_CS_SIZE - 1)
            for off in range(base - lo, len(mem) - RSEQ_CS_SIZE + 1, RSEQ_CS_SIZE):
                ver, flags, start, pco, abort = struct.unpack_from("<IIQQQ", mem, off)
                if ver or flags or not start or not pco:
                    continue
                found.append((start, start + pco, abort))
        return [Section(start, post, abort, [e for st, e in exits if st == start],
                        *_loc_name(start), module) for start, post, abort in found]

    def _main_file(self):
        prog = gdb.current_progspace().filename
        return os.path.realpath(prog) if prog else None

    def scan_core(self, core):
        """rseqdbg scan --core's document of the core gdb has loaded (cached), or None."""
        prog = gdb.current_progspace().filename
        key = (core, prog)
        if self.core_doc is None or self.core_doc[0] != key:
            args = ["--core", core] + (["--exe", prog] if prog else [])
            self.core_doc = (key, self._scan(args, "--core %s" % core))
        return self.core_doc[1]

    def load(self):
        inf = gdb.selected_inferior()
        pid = inf.pid if inf and inf.is_valid() else 0
        core = _core_file()
        if self.sections is not None and self.pid == (pid, core):
            return self.sections
        if core:
            # The process is gone: rseqdbg reads the modules from the core's NT_FILE note.
            doc = self.scan_core(core)
            tables = None if doc is None else [
                (m["path"], s) for m in doc.get("modules", []) for s in m.get("sections", [])]
        elif pid:
            # Run-time addresses: rseqdbg finds each module's load bias.
            doc = self._scan(["--pid", str(pid)], "--pid %d" % pid)
            tables = None if doc is None else [
                (m["path"], s) for m in doc.get("modules", []) for s in m.get("sections", [])]
        else:
            # Before the program runs gdb shows file addresses.
            tables = []
            for path in self._objfiles():
                found = self._scan_file(path)
                tables += [(path, s) for s in found or []]
        if tables is None:
            sections = [s for path in self._objfiles() for s in self._from_memory(path)]
        else:
            sections = [_section(module, s) for module, s in tables]
        sections.sort(key=lambda s: s.start)
        self.sections, self.pid = sections, (pid, core)
        return sections

    def find(self, addr, thread_desc=None):
        for s in self.load():
            if s.contains(addr):
                return s
        if thread_desc and thread_desc.contains(addr):
            return thread_desc
        return None


def _section(module, s):
    """A Section from one section of rseqdbg scan's JSON."""
    loc = s.get("start") or {}
    return Section(s["start_ip"], s["post_commit_ip"], s["abort_ip"],
                   [e["exit_ip"] for e in s.get("exit_points", [])], loc.get("function"),
                   loc.get("file"), loc.get("line"), module)


REG = Registry()


def _core_file():
    """The core file gdb is looking at (no live process behind the inferior), or None."""
    conn = getattr(gdb.selected_inferior(), "connection", None)
    if conn is not None and getattr(conn, "type", "core") != "core":
        return None
    try:
        out = gdb.execute("info target", to_string=True)
    except gdb.error:
        return None
    m = re.search(r"Local core dump file:\s*`(.+)', file type", out)
    return m.group(1) if m else None


def _core_threads(doc):
    """The per-thread rseq state of rseqdbg scan --core's document, as text lines."""
    lines = []
    sig = doc.get("signal")
    if sig:
        lines.append("signal %s (code %d)%s in thread %d%s" % (
            sig["name"], sig["code"],
            ", address 0x%x" % sig["addr"] if sig.get("addr") is not None else "", sig["tid"],
            ", raised by its instruction" if sig["fault"] else ""))
    lines.append("%d thread%s (from rseqdbg scan --core):" % (
        len(doc["threads"]), "" if len(doc["threads"]) == 1 else "s"))
    for t in doc["threads"]:
        r = t.get("rseq")
        if r:
            area = "rseq area 0x%x cpu %s rseq_cs %s" % (
                r["addr"], "?" if t["cpu_id"] is None else t["cpu_id"],
                "?" if t["rseq_cs"] is None else "0x%x" % t["rseq_cs"])
        else:
            area = "no rseq area known"
        missing = t.get("not_in_core") or []
        if missing:
            area += " (not in the core: %s)" % ", ".join(missing)
        ip = "?" if t["ip"] is None else "0x%x" % t["ip"]
        lines.append("  tid %d: %s, ip %s" % (t["tid"], area, ip))
        i = t.get("inside")
        if i:
            at = i.get("at") or {}
            src = " (%s:%d)" % (os.path.basename(at["file"]), at["line"]) \
                if at.get("file") and at.get("line") else ""
            fault = sig and sig["fault"] and sig["tid"] == t["tid"]
            lines.append("    inside %s%s, critical section [0x%x, 0x%x), abort 0x%x%s" % (
                (i.get("start") or {}).get("function") or "?", src, i["start_ip"],
                i["post_commit_ip"], i["abort_ip"],
                ": the fault is inside it, before its commit" if fault else ""))
    return lines


_AREAS = {}


def _rseq_area():
    """Address of the selected thread's struct rseq (glibc registration), or None."""
    thread = gdb.selected_thread()
    key = (thread.inferior.pid, thread.ptid[1]) if thread else None
    if key in _AREAS:
        return _AREAS[key]
    try:
        off = int(gdb.parse_and_eval("*(long *)&__rseq_offset"))
        size = int(gdb.parse_and_eval("*(unsigned int *)&__rseq_size"))
        area = int(gdb.parse_and_eval("$fs_base")) + off if size else None
    except (gdb.error, RuntimeError):
        area = None
    if key is not None:
        _AREAS[key] = area
    return area


def _thread_descriptor():
    """The section whose descriptor the selected thread's rseq_cs points to, or None.

    This finds sections that no table lists (stripped binaries, generated code)."""
    area = _rseq_area()
    if area is None:
        return None
    try:
        inf = gdb.selected_inferior()
        ptr, = struct.unpack("<Q", bytes(inf.read_memory(area + RSEQ_AREA_CS, 8)))
        if not ptr:
            return None
        ver, flags, start, pco, abort = struct.unpack("<IIQQQ",
                                                      bytes(inf.read_memory(ptr, RSEQ_CS_SIZE)))
    except (gdb.MemoryError, gdb.error):
        return None
    if ver or flags or not pco:
        return None
    func, file, line = _loc_name(start)
    return Section(start, start + pco, abort, [], func, file, line, None)


_BRANCH = re.compile(r"^(?:(?:bnd|notrack|rep|repz|repnz|data16|addr32|cs|ds)\s+)*"
                     r"(j[a-z]+|call[lq]?|loop[a-z]*|xbegin|b|bl|b\.[a-z]+|cbn?z|tbn?z)\s+(.*)$")
_TARGET = re.compile(r"0x([0-9a-f]+)")


class Insn:
    __slots__ = ("addr", "length", "asm", "targets", "is_call", "indirect", "falls_through")

    def __init__(self, d):
        self.addr = d["addr"]
        self.length = d["length"]
        self.asm = d["asm"]
        self.targets = []
        self.is_call = False
        self.indirect = False
        self.falls_through = True
        text = self.asm.strip()
        mnem = text.split()[0] if text else ""
        if mnem in ("ret", "retq", "ud2", "hlt"):
            self.falls_through = False
        m = _BRANCH.match(text)
        if m:
            op, operand = m.group(1), m.group(2)
            self.is_call = op.startswith("call") or op == "bl"
            t = _TARGET.match(operand)
            if t and not operand.startswith("*"):
                self.targets.append(int(t.group(1), 16))
            else:
                self.indirect = True
            if op in ("jmp", "jmpq", "b"):
                self.falls_through = False

    def successors(self):
        succ = list(self.targets)
        if self.falls_through:
            succ.append(self.addr + self.length)
        return succ


def _sigint_pending(pid):
    """Whether a SIGINT waits in the process's shared queue for a thread to take it."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("ShdPnd:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


class Stepper:
    """The step-over rule shared by rseq stepi/nexti/step."""

    def __init__(self):
        self.insns = {}
        self.active = False
        self.interrupted = False  # the user's Ctrl-C (SIGINT) ended the command
        self.timer_fired = False  # the SIGINT of the step-over bound, not the user's
        self.wakeup = None  # (read, write) pipe that records the SIGINTs gdb receives
        self.draining = None  # steps done since, until the SIGINT gdb passed on arrives
        self.passage_bps = []  # the step-over's breakpoints and timer, for a cleanup that a
        self.passage_timer = None  # Ctrl-C cut short (KeyboardInterrupt strikes anywhere)
        self.verbose = False
        self.timeout = 2.0
        self.stats = {"committed": 0, "aborted": 0, "exited": 0, "interrupted": 0}

    def insn(self, arch, pc):
        i = self.insns.get(pc)
        if i is None:
            i = Insn(arch.disassemble(pc)[0])
            self.insns[pc] = i
        return i

    def section_exits(self, arch, sec):
        if sec.decoded_exits is None:
            exits, pc = set(), sec.start
            while pc < sec.post_commit:
                i = self.insn(arch, pc)
                exits.update(t for t in i.targets if not sec.contains(t))
                sec.indirect |= i.indirect
                pc += i.length
            sec.decoded_exits = sorted(exits)
        return sec.decoded_exits

    def step_over(self, arch, thread, sec, others):
        """Run the thread through sec with breakpoints on its exits; return the outcome line."""
        addrs = {sec.post_commit: "committed", sec.abort: "aborted"}
        for e in sec.exit_ips:
            addrs.setdefault(e, "exited")
        for e in self.section_exits(arch, sec):
            addrs.setdefault(e, "exited")
        for o in others:
            addrs.setdefault(o, "not-entered")
        bps = self.passage_bps = []
        pid = gdb.selected_inferior().pid
        tid = thread.ptid[1]
        self.timer_fired = False

        def interrupt():
            self.timer_fired = True
            try:
                os.kill(tid or pid, signal.SIGINT)
            except OSError:
                pass

        timer = self.passage_timer = threading.Timer(self.timeout, interrupt)
        try:
            for a in addrs:
                bp = gdb.Breakpoint("*0x%x" % a, internal=True)
                bp.silent = True
                bp.thread = thread.global_num
                bps.append(bp)
            if self.verbose:
                gdb.write("rseq: %s: breakpoints at %s\n" % (sec.where(), ", ".join(
                    "0x%x (%s)" % (a, w) for a, w in sorted(addrs.items()))))
            timer.start()
            gdb.execute("continue", to_string=True)
        finally:
            timer.cancel()
            for bp in bps:
                if bp.is_valid():
                    bp.delete()
        if not thread.is_valid():
            return None, "the thread exited"
        pc = int(gdb.selected_frame().pc()) if gdb.selected_thread() == thread else None
        what = addrs.get(pc) if pc is not None else None
        if what is None:
            self.stats["interrupted"] += 1
            if self.interrupted:
                why = "interrupted by the user (SIGINT)"
            elif self.timer_fired:
                why = ("no exit breakpoint hit within %gs (an exit decoding cannot see?); "
                       "stopped at 0x%x" % (self.timeout, pc or 0))
            else:
                why = "stopped for another reason"
            return "interrupted", why
        if what == "not-entered":
            return what, None
        self.stats[what] += 1
        if what == "aborted":
            return what, "aborted (abort handler 0x%x)" % sec.abort
        if what == "exited":
            return what, "exited (to 0x%x%s)" % (pc, _symbol(pc))
        return what, "committed"

    def _enters(self, insn, desc):
        """The section one of insn's successors lies in, or None."""
        for a in insn.successors():
            sec = REG.find(a, desc)
            if sec is not None:
                return sec
        return None

    def one(self, over_calls=False, limit=1):
        """Execute up to limit instructions of the selected thread; a section passage is one.

        Straight-line instructions that cannot lead into a section go to gdb as one
        `stepi K`, which costs far less than K commands. Returns the number of steps done,
        0 when stepping has to stop (program exited, interrupted)."""
        thread = gdb.selected_thread()
        if thread is None or not thread.is_valid():
            raise gdb.GdbError("The program is not being run.")
        frame = gdb.selected_frame()
        arch = frame.architecture()
        pc = int(frame.pc())
        desc = _thread_descriptor()
        i = self.insn(arch, pc)
        sec = REG.find(pc, desc) or self._enters(i, desc)
        if sec is not None:
            others = [a for a in i.successors() if not sec.contains(a)]
            what, line = self.step_over(arch, thread, sec, others)
            if what is None:
                gdb.write("rseq: %s\n" % line)
                return 0
            if what != "not-entered":
                gdb.write("stepped over rseq critical section %s: %s\n" % (sec.where(), line))
            return 0 if what == "interrupted" else 1
        if over_calls and i.is_call:
            gdb.execute("nexti", to_string=True)
            self.reselect(thread)
            return 1
        path = [pc]
        while (len(path) < min(limit, 64) and not i.targets and not i.indirect and
               i.falls_through and not i.is_call):
            nxt = self.insn(arch, i.addr + i.length)
            if REG.find(nxt.addr, desc) or self._enters(nxt, desc):
                break
            path.append(nxt.addr)
            i = nxt
        if len(path) == 1:
            gdb.execute("stepi", to_string=True)
            self.reselect(thread)
            return 1
        gdb.execute("stepi %d" % len(path), to_string=True)
        self.reselect(thread)
        try:
            now = int(gdb.selected_frame().pc())
        except gdb.error:
            return len(path)
        # stopped early (a breakpoint, a signal): count what ran
        return path.index(now) if now in path[1:] else len(path)

    def note_stop(self, event):
        """A SIGINT stop during a command that the step-over bound did not send is the user's
        Ctrl-C (sent by the terminal to the program, or passed on by gdb)."""
        if getattr(event, "stop_signal", None) == "SIGINT" and not self.timer_fired:
            self.interrupted = True

    def user_interrupted(self):
        """Whether the user pressed Ctrl-C. A SIGINT that gdb itself receives may never show
        as a stop: gdb drops it when no thread runs at that moment, and a KeyboardInterrupt
        raised in an event handler is only printed (into the string gdb.execute captures).
        Python's wakeup fd records it in every case. But gdb may also have passed it on to
        the program while every thread was stopped: then it is pending there, in the kernel
        or in gdb, and would stop the user's next command. So stepping goes on, a few steps
        at most, until that SIGINT stop is seen."""
        if self.interrupted:
            return True
        if self.draining is not None:
            self.draining += 1
            self.interrupted = self.draining >= 200 or (
                self.draining >= 8 and not _sigint_pending(gdb.selected_inferior().pid))
            return self.interrupted
        if self.wakeup is None:
            return False
        try:
            if signal.SIGINT in os.read(self.wakeup[0], 512):
                self.draining = 0
        except BlockingIOError:
            pass
        return False

    def reselect(self, thread):
        """After an interrupt, which any thread of the process may have received, select the
        stepped thread again: the command ends where the user was stepping."""
        if self.interrupted and thread.is_valid() and gdb.selected_thread() != thread:
            thread.switch()

    def _watch_sigint(self, on):
        if on:
            r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                self.old_wakeup = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
            except ValueError:  # not the main thread: stop events alone tell
                os.close(r)
                os.close(w)
                return
            self.wakeup = (r, w)
        elif self.wakeup is not None:
            signal.set_wakeup_fd(self.old_wakeup)
            for fd in self.wakeup:
                os.close(fd)
            self.wakeup = None

    def run(self, count, over_calls=False, lines=False):
        thread = gdb.selected_thread()
        if not gdb.selected_inferior().pid or thread is None:
            raise gdb.GdbError("The program is not being run.")
        self.stats = dict.fromkeys(self.stats, 0)
        self.interrupted = self.timer_fired = False
        self.draining = None
        self.active = True
        quiet = gdb.parameter("suppress-cli-notifications")
        gdb.execute("set suppress-cli-notifications on")
        done, exited = 0, False
        try:
            self._watch_sigint(True)
            if lines:
                for _ in range(count):
                    if not self.line_step():
                        break
                    done += 1
            else:
                while done < count and not self.user_interrupted():
                    n = self.one(over_calls, count - done)
                    if not n:
                        break
                    done += n
            self.interrupted |= self.draining is not None
        except KeyboardInterrupt:
            # Ctrl-C while gdb, not the program, was running: the program is stopped already.
            # The terminal echoed ^C, maybe in the middle of a line of ours.
            self.interrupted = True
            gdb.write("\n")
        except (gdb.error, gdb.GdbError):
            if gdb.selected_inferior().pid and gdb.selected_thread() is not None:
                raise
            exited = True
        finally:
            self.active = False
            self._watch_sigint(False)
            if self.passage_timer is not None:
                self.passage_timer.cancel()
            for bp in self.passage_bps:
                if bp.is_valid():
                    bp.delete()
            self.passage_bps, self.passage_timer = [], None
            gdb.execute("set suppress-cli-notifications %s" % ("on" if quiet else "off"))
        s = self.stats
        passages = s["committed"] + s["aborted"] + s["exited"]
        if exited:
            gdb.write("rseq: the program exited\n")
        elif self.interrupted and thread.is_valid():
            self.reselect(thread)
            gdb.write("rseq: interrupted (SIGINT): thread %d stopped\n" % thread.num)
        if count > 1 or passages or exited:
            gdb.write("rseq: %d %s, %d critical section passages (%d committed, %d aborted, "
                      "%d exited)\n" % (done, "lines" if lines else "steps", passages,
                                        s["committed"], s["aborted"], s["exited"]))
        if not exited:
            gdb.execute("x/i $pc")
        if self.interrupted and not exited:
            _on_stop(None)  # the warning a stop inside a section deserves

    def line_step(self, limit=1000000):
        """Step until the source line changes, finishing out of functions without lines."""
        frame = gdb.selected_frame()
        start = frame.find_sal()
        start_line = (start.symtab.filename if start.symtab else None, start.line)
        thread = gdb.selected_thread()
        for _ in range(limit):
            if not self.one() or self.user_interrupted():
                return False
            frame = gdb.selected_frame()
            sal = frame.find_sal()
            if sal.symtab is None:
                if frame.older() is not None:
                    gdb.execute("finish", to_string=True)
                    if self.interrupted:
                        self.reselect(thread)
                        return False
                continue
            if (sal.symtab.filename, sal.line) != start_line and sal.pc == frame.pc():
                return True
        return True


STEPPER = Stepper()


class RseqPrefix(gdb.Command):
    """Commands for code that uses Linux restartable sequences (rseq).

rseq info        list the critical sections of the loaded objects at runtime addresses
rseq stepi [N]   step N instructions, stepping over critical sections (never stopping inside)
rseq nexti [N]   the same, stepping over calls
rseq step [N]    step N source lines, stepping over critical sections

A stop inside an armed critical section makes the kernel abort it on resume, so plain stepi
never gets through one. These commands run the thread through each section with temporary
breakpoints at all of its exits and report how it left: committed, aborted or exited.
`set rseq verbose on` shows the breakpoints, `set rseq timeout S` bounds each passage."""

    def __init__(self):
        super().__init__("rseq", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE, True)


class RseqInfo(gdb.Command):
    """List the rseq critical sections of the loaded objects, at runtime addresses.

Each line: function, start, post_commit and abort addresses, exit points from the table,
branches leaving the section found by decoding it (while the program runs), source location
and object. Sections come from `rseqdbg scan --pid PID --json` (before the program runs,
`rseqdbg scan --json FILE` on each object file). On a core file, `rseqdbg scan --core CORE
--exe PROGRAM --json` gives them, and each thread's rseq state at the time of the dump: its
rseq area, cpu_id, armed descriptor, instruction pointer and the section it was inside, with
the signal that ended the process."""

    def __init__(self):
        super().__init__("rseq info", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        REG.invalidate()
        secs = REG.load()
        core = _core_file()
        live = gdb.selected_inferior().pid and not core
        desc = _thread_descriptor() if live else None
        doc = REG.scan_core(core) if core else None
        if not secs and desc is None and doc is None:
            gdb.write("No rseq critical sections in the loaded objects.\n")
            return
        gdb.write("%d rseq critical section%s:\n" % (len(secs), "" if len(secs) == 1 else "s"))
        arch = None
        try:
            if live:
                arch = gdb.selected_frame().architecture()
        except gdb.error:
            pass
        for s in secs:
            exits = " exits=" + ",".join("0x%x" % e for e in s.exit_ips) if s.exit_ips else ""
            if arch is not None:
                out = [e for e in STEPPER.section_exits(arch, s) if e not in s.exit_ips]
                if out:
                    exits += " branch_exits=" + ",".join("0x%x" % e for e in out)
            src = " %s:%d" % (s.file, s.line) if s.file and s.line else ""
            gdb.write("  %s start=0x%x post_commit=0x%x abort=0x%x%s%s in %s\n" % (
                s.function or "?", s.start, s.post_commit, s.abort, exits, src, s.module))
        if desc is not None:
            gdb.write("armed in this thread (rseq_cs): %s start=0x%x post_commit=0x%x "
                      "abort=0x%x\n" % (desc.function or "?", desc.start, desc.post_commit,
                                        desc.abort))
        if doc is not None:
            gdb.write("".join(line + "\n" for line in _core_threads(doc)))


def _count(arg, name):
    arg = arg.strip()
    if not arg:
        return 1
    try:
        n = int(gdb.parse_and_eval(arg))
    except gdb.error:
        raise gdb.GdbError("rseq %s: '%s' is not a count" % (name, arg))
    if n < 1:
        raise gdb.GdbError("rseq %s: the count must be at least 1, not %d" % (name, n))
    return n


class RseqStepi(gdb.Command):
    """Step N instructions (default 1); a critical section counts as one step.

Before each instruction, if it can lead into an rseq critical section, the thread runs
through the whole section with temporary breakpoints at its exits instead of stopping in it."""

    def __init__(self):
        super().__init__("rseq stepi", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        STEPPER.run(_count(arg, "stepi"))


class RseqNexti(gdb.Command):
    """Like rseq stepi, but calls are stepped over."""

    def __init__(self):
        super().__init__("rseq nexti", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        STEPPER.run(_count(arg, "nexti"), over_calls=True)


class RseqStep(gdb.Command):
    """Step N source lines (default 1), stepping over rseq critical sections."""

    def __init__(self):
        super().__init__("rseq step", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        STEPPER.run(_count(arg, "step"), lines=True)


class RseqSet(gdb.Command):
    """Settings of the rseq commands."""

    def __init__(self):
        super().__init__("set rseq", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE, True)


class RseqShow(gdb.Command):
    """Settings of the rseq commands."""

    def __init__(self):
        super().__init__("show rseq", gdb.COMMAND_RUNNING, gdb.COMPLETE_NONE, True)


class RseqVerbose(gdb.Parameter):
    """Whether rseq step commands print the breakpoints of each step-over."""
    set_doc = "Set whether rseq step commands print their breakpoints."
    show_doc = "Show whether rseq step commands print their breakpoints."

    def __init__(self):
        super().__init__("rseq verbose", gdb.COMMAND_RUNNING, gdb.PARAM_BOOLEAN)
        self.value = False

    def get_set_string(self):
        STEPPER.verbose = bool(self.value)
        return ""


class RseqTimeout(gdb.Parameter):
    """Seconds a step-over may run before the thread is interrupted."""
    set_doc = "Set the bound in seconds of one critical-section step-over."
    show_doc = "Show the bound in seconds of one critical-section step-over."

    def __init__(self):
        super().__init__("rseq timeout", gdb.COMMAND_RUNNING, gdb.PARAM_ZUINTEGER)
        self.value = 2

    def get_set_string(self):
        STEPPER.timeout = float(self.value or 2)
        return ""


def _armed_cs():
    """The selected thread's rseq_cs value, or None when its rseq area is unknown."""
    area = _rseq_area()
    if area is None:
        return None
    try:
        ptr, = struct.unpack("<Q", bytes(gdb.selected_inferior().read_memory(
            area + RSEQ_AREA_CS, 8)))
    except (gdb.MemoryError, gdb.error):
        return None
    return ptr


def _on_stop(event):
    if STEPPER.active:
        STEPPER.note_stop(event)
        return
    thread = gdb.selected_thread()
    if thread is None:
        return
    try:
        pc = int(gdb.selected_frame().pc())
        sec = REG.find(pc, _thread_descriptor())
        armed = _armed_cs() if sec is not None else None
    except (gdb.error, RuntimeError):
        return
    if sec is None:
        return
    if armed == 0:
        what = ("its descriptor is not armed now (rseq_cs is 0), so it runs on without the "
                "kernel's protection")
    else:
        what = "resuming it will abort the section to 0x%x" % sec.abort
    gdb.write("warning: thread %d stopped inside rseq critical section %s [0x%x, 0x%x): %s; "
              "use rseq stepi/nexti/step to step over it\n"
              % (thread.num, sec.where(), sec.start, sec.post_commit, what), gdb.STDERR)


def _bp_addresses(bp):
    try:
        return [loc.address for loc in bp.locations if loc.address is not None]
    except (AttributeError, RuntimeError):
        m = re.match(r"\*\s*(0x[0-9a-fA-F]+)$", bp.location or "")
        return [int(m.group(1), 16)] if m else []


def _on_breakpoint_created(bp):
    if STEPPER.active or bp.number < 0 or bp.type != gdb.BP_BREAKPOINT:
        return
    try:
        for addr in _bp_addresses(bp):
            sec = REG.find(addr)
            if sec is None:
                continue
            gdb.write("warning: breakpoint %d at 0x%x is inside rseq critical section %s: "
                      "each stop there ends the section: resuming aborts it to 0x%x (or, when gdb "
                      "steps the breakpoint out of line, the kernel disarms it and the rest runs "
                      "unprotected); break at 0x%x (post-commit) or 0x%x (abort) instead\n"
                      % (bp.number, addr, sec.where(), sec.abort, sec.post_commit, sec.abort),
                      gdb.STDERR)
    except (gdb.error, RuntimeError):
        pass


RseqPrefix()
RseqInfo()
RseqStepi()
RseqNexti()
RseqStep()
RseqSet()
RseqShow()
RseqVerbose()
RseqTimeout()
gdb.events.stop.connect(_on_stop)
gdb.events.breakpoint_created.connect(_on_breakpoint_created)
gdb.events.new_objfile.connect(REG.invalidate)
gdb.events.clear_objfiles.connect(REG.invalidate)
gdb.events.exited.connect(REG.invalidate)
