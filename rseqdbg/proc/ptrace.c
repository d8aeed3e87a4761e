// SPDX-License-Identifier: GPL-2.0-only
/* ptrace wrappers: launch or seize a process, track its threads, decode wait events. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common.h"
#include "proc/ptrace.h"
#include "proc/spawn.h"
#include "proc/status.h"
#include "proc/tasks.h"

volatile sig_atomic_t rd_pt_quit;

static const long seize_opts =
    PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC;

void rd_tracee_init(struct rd_tracee *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->memfd = -1;
}

void rd_tracee_free(struct rd_tracee *tr)
{
	if (!tr)
		return;
	if (tr->memfd >= 0)
		close(tr->memfd);
	free(tr->t);
	rd_tracee_init(tr);
}

struct rd_thread *rd_pt_thread(struct rd_tracee *tr, pid_t tid)
{
	for (size_t i = 0; i < tr->nt; i++)
		if (tr->t[i].tid == tid)
			return &tr->t[i];
	return NULL;
}

struct rd_thread *rd_pt_add_thread(struct rd_tracee *tr, pid_t tid, enum rd_tstate st)
{
	struct rd_thread *t = rd_pt_thread(tr, tid);

	if (t) {
		t->state = st;
		return t;
	}
	if (tr->nt == tr->capt) {
		size_t cap = tr->capt ? tr->capt * 2 : 16;
		struct rd_thread *v = realloc(tr->t, cap * sizeof(*v));

		if (!v)
			return NULL;
		tr->t = v;
		tr->capt = cap;
	}
	t = &tr->t[tr->nt++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->state = st;
	return t;
}

/* The process's memory, through a live thread when the main thread has exited. The file
 * holds on to the memory, not to the thread: it reads on after that thread exits too. */
static int open_mem(struct rd_tracee *tr)
{
	char path[64];
	pid_t via;
	int ret;

	if (tr->memfd >= 0)
		close(tr->memfd);
	tr->memfd = -1;
	ret = rd_proc_live_thread(tr->pid, &via);
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)via);
	tr->memfd = open(path, O_RDWR | O_CLOEXEC);
	return tr->memfd < 0 ? -errno : 0;
}

/* Until the exec stop of a launched program: let signals sent meanwhile through. 0, or
 * -errno, the reason in rd_errmsg(); the program has exited or must be killed. */
static int wait_exec(struct rd_tracee *tr, struct rd_spawn *child, const char *prog)
{
	struct rd_event ev;
	int ret;

	for (;;) {
		ret = rd_pt_wait(tr, &ev, 0);
		if (ret < 0 && ret != -EINTR) {
			rd_seterr("waiting for %s: %s", prog, strerror(-ret));
			return ret;
		}
		if (ev.kind == RD_EV_NONE) {
			if (!rd_pt_quit)
				continue;
			rd_seterr("interrupted");
			return -EINTR;
		}
		if (ev.kind == RD_EV_EXEC)
			return 0;
		if (ev.kind == RD_EV_EXITED) {
			ret = rd_spawn_result(child);
			rd_seterr("cannot execute %s: %s", prog, ret ? strerror(-ret) : "exited");
			return ret ? ret : -ECHILD;
		}
		rd_pt_cont(tr, rd_pt_thread(tr, ev.tid), ev.kind == RD_EV_SIGNAL ? ev.sig : 0);
	}
}

int rd_pt_launch(struct rd_tracee *tr, char **argv)
{
	struct rd_spawn child;
	int ret;

	/* Held before exec until it is seized: the exec stop is its first. */
	ret = rd_spawn(argv, &child);
	if (ret < 0) {
		rd_seterr("cannot start %s: %s", argv[0], strerror(-ret));
		return ret;
	}
	tr->pid = child.pid;
	tr->launched = true;
	if (ptrace(PTRACE_SEIZE, child.pid, 0, seize_opts | PTRACE_O_EXITKILL) < 0) {
		ret = -errno;
		rd_seterr("cannot trace %s (pid %d): %s", argv[0], child.pid, strerror(errno));
		rd_spawn_abort(&child);
		return ret;
	}
	if (!rd_pt_add_thread(tr, child.pid, RD_T_RUNNING)) {
		ret = -ENOMEM;
		rd_seterr("out of memory");
		goto fail;
	}
	rd_spawn_go(&child);
	ret = wait_exec(tr, &child, argv[0]);
	if (ret < 0)
		goto fail;
	rd_spawn_result(&child); /* end of file: the exec closed it */
	ret = open_mem(tr);
	if (ret < 0) {
		rd_seterr("/proc/%d/mem: %s", tr->pid, strerror(-ret));
		goto fail;
	}
	return 0;
fail:
	rd_pt_kill(tr);
	child.pid = 0; /* reaped, by the kill or by the wait that saw it exit */
	rd_spawn_abort(&child);
	return ret;
}

/*
 * Seize every thread listed in /proc/PID/task; returns how many were seized here (threads
 * they create are traced already), or -errno. A thread that exits meanwhile is skipped,
 * whether the seize saw it gone (ESRCH) or exiting (EPERM on a zombie); so is the zombie
 * leader of a process whose other threads live on.
 */
static int seize_tasks(struct rd_tracee *tr)
{
	int added = 0, ret;
	pid_t *tids;
	char who[96];
	size_t n;

	ret = rd_proc_threads(tr->pid, &tids, &n);
	if (ret < 0) {
		rd_seterr("no process %d (/proc/%d/task: %s)", tr->pid, tr->pid, strerror(-ret));
		return ret;
	}
	for (size_t i = 0; i < n; i++) {
		struct rd_proc_status ps;
		pid_t tid = tids[i];
		int e;

		if (rd_pt_thread(tr, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, seize_opts) == 0) {
			if (!rd_pt_add_thread(tr, tid, RD_T_RUNNING)) {
				ret = -ENOMEM;
				rd_seterr("out of memory");
				break;
			}
			added++;
			continue;
		}
		e = errno;
		if (e == ESRCH || rd_proc_status(tr->pid, tid, &ps) < 0 || ps.state == '?' ||
		    ps.state == 'X')
			continue; /* exited meanwhile */
		if (e == EPERM && ps.tracer == getpid()) {
			/* Created since by a thread we trace: traced already, its stop will come.
			 */
			if (!rd_pt_add_thread(tr, tid, RD_T_RUNNING)) {
				ret = -ENOMEM;
				rd_seterr("out of memory");
				break;
			}
			continue;
		}
		if (e == EPERM && ps.state == 'Z')
			continue; /* exiting; a whole zombie process is told apart by the caller */
		ret = -e;
		if (e == EPERM && ps.tracer) {
			rd_proc_name(ps.tracer, who, sizeof(who));
			rd_seterr("cannot trace process %d (thread %d): already traced by "
				  "PID %s",
				  tr->pid, tid, who);
		} else {
			rd_seterr("cannot trace process %d (thread %d): %s%s", tr->pid, tid,
				  strerror(e),
				  e == EPERM ? " (needs CAP_SYS_PTRACE or the same user; see "
					       "/proc/sys/kernel/yama/ptrace_scope)"
					     : "");
		}
		break;
	}
	free(tids);
	return ret < 0 ? ret : added;
}

/* Threads may be created while we seize: passes until one finds none new. 0 or -errno. */
static int seize_all(struct rd_tracee *tr)
{
	int ret;

	do {
		ret = seize_tasks(tr);
	} while (ret > 0);
	return ret;
}

static bool any_running(const struct rd_tracee *tr)
{
	for (size_t i = 0; i < tr->nt; i++)
		if (tr->t[i].state == RD_T_RUNNING)
			return true;
	return false;
}

/*
 * A thread that had begun a clone() when it was seized makes a child nobody traces
 * (PTRACE_O_TRACECLONE counts as the clone starts), and the child may show in /proc/PID/task
 * only after the last pass read it: running into a breakpoint, it would kill the program
 * with SIGTRAP. Once every seized thread has stopped, each such clone has returned, and one
 * more pass finds its child. The threads then run on, with their signals; a thread of a
 * stopped program stays stopped. A thread that does not stop within a second is left running.
 */
static int settle(struct rd_tracee *tr)
{
	struct rd_event ev;
	int ret;

	for (size_t i = 0; i < tr->nt; i++)
		rd_pt_interrupt(&tr->t[i]);
	while (any_running(tr) && rd_pt_wait(tr, &ev, 1000) == 0 && ev.kind != RD_EV_NONE) {
		struct rd_thread *t = rd_pt_thread(tr, ev.tid);

		if (!t || t->state != RD_T_STOPPED)
			continue;
		if (ev.kind == RD_EV_SIGNAL)
			t->pending_sig = ev.sig;
		else if (ev.kind == RD_EV_STOP && ev.sig != SIGTRAP)
			t->group_stop = true;
	}
	ret = seize_all(tr);
	for (size_t i = 0; i < tr->nt; i++) {
		struct rd_thread *t = &tr->t[i];

		if (t->state != RD_T_STOPPED)
			continue;
		if (t->group_stop) {
			/* Stopped by the program's own SIGSTOP: it reports when continued. */
			if (ptrace(PTRACE_LISTEN, t->tid, 0, 0) == 0)
				t->state = RD_T_RUNNING;
			continue;
		}
		rd_pt_cont(tr, t, t->pending_sig);
		t->pending_sig = 0;
	}
	return ret;
}

int rd_pt_attach(struct rd_tracee *tr, pid_t pid)
{
	int ret;

	tr->pid = pid;
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		rd_seterr("no process %d", pid);
		return -ESRCH;
	}
	ret = seize_all(tr);
	if (ret == 0 && tr->nt > 0)
		ret = settle(tr);
	if (ret == 0 && tr->nt == 0) {
		struct rd_proc_status ps;
		char who[96];

		if (rd_proc_status(pid, pid, &ps) == 0 && ps.state == 'Z') {
			rd_proc_name(ps.ppid, who, sizeof(who));
			rd_seterr("cannot trace process %d: it is a zombie (it exited; its "
				  "parent %s has not reaped it)",
				  pid, who);
			ret = -EPERM;
		} else {
			rd_seterr("no process %d", pid);
			ret = -ESRCH;
		}
	}
	if (ret == 0) {
		ret = open_mem(tr);
		if (ret < 0)
			rd_seterr("/proc/%d/mem: %s", pid, strerror(-ret));
	}
	if (ret < 0) {
		/* Leave nothing behind: a seized thread detaches once stopped. */
		for (size_t i = 0; i < tr->nt; i++) {
			struct rd_event ev;

			if (rd_pt_interrupt(&tr->t[i]) < 0)
				continue;
			while (tr->t[i].state == RD_T_RUNNING && rd_pt_wait(tr, &ev, 1000) == 0 &&
			       ev.kind != RD_EV_NONE) {
				struct rd_thread *o = rd_pt_thread(tr, ev.tid);

				if (o && o != &tr->t[i] && o->state == RD_T_STOPPED)
					rd_pt_cont(tr, o, ev.kind == RD_EV_SIGNAL ? ev.sig : 0);
				else if (o == &tr->t[i] && ev.kind == RD_EV_SIGNAL)
					o->pending_sig = ev.sig;
			}
			rd_pt_detach(tr, &tr->t[i]);
		}
		tr->nt = 0;
	}
	return ret;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void install_alarm(void)
{
	static volatile sig_atomic_t installed;
	struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART: EINTR */

	if (installed)
		return;
	sigaction(SIGALRM, &sa, NULL);
	installed = 1;
}

static void arm_timer(unsigned int ms)
{
	struct itimerval it = {0};

	install_alarm();
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	/* Fire again if the first one came before waitpid blocked. */
	it.it_interval.tv_usec = 20000;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm_timer(void)
{
	struct itimerval it = {0};

	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * A quit that lands between a wait's look at rd_pt_quit and its waitpid() would leave that
 * waitpid() blocked for good when no thread can report (all stopped by --lock-others, or the
 * one running blocked on one that is). So inside that window a quit also starts a timer that
 * fires every 20 ms until the wait returns: its SIGALRM breaks the waitpid(). Outside the
 * window nothing is armed, so no other system call sees an EINTR of ours.
 */
static volatile sig_atomic_t in_wait, wake_armed;

void rd_pt_request_quit(void)
{
	struct itimerval it = {.it_value.tv_usec = 20000, .it_interval.tv_usec = 20000};
	int saved = errno;

	rd_pt_quit = 1;
	if (in_wait) {
		install_alarm();
		wake_armed = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	errno = saved;
}

int rd_pt_wait(struct rd_tracee *tr, struct rd_event *ev, unsigned int timeout_ms)
{
	struct rd_thread *t;
	bool stepping;
	int st, event;
	pid_t tid;

	memset(ev, 0, sizeof(*ev));
	if (timeout_ms)
		arm_timer(timeout_ms);
	in_wait = 1;
	tid = rd_pt_quit ? (errno = EINTR, -1) : waitpid(-1, &st, __WALL);
	in_wait = 0;
	if (timeout_ms || wake_armed) {
		disarm_timer();
		wake_armed = 0;
	}
	if (tid < 0)
		return errno == EINTR ? 0 : -errno;
	ev->tid = tid;
	ev->status = st;
	t = rd_pt_thread(tr, tid);
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		ev->kind = RD_EV_EXITED;
		if (t)
			t->state = RD_T_GONE;
		if (tid == tr->pid) {
			tr->exited = true;
			tr->exit_status = st;
		}
		return 0;
	}
	if (!WIFSTOPPED(st))
		return 0;
	tr->stops++;
	if (!t)
		t = rd_pt_add_thread(tr, tid, RD_T_STOPPED);
	if (!t)
		return -ENOMEM;
	t->state = RD_T_STOPPED;
	t->stops++;
	stepping = t->stepping;
	t->stepping = false;
	ev->sig = WSTOPSIG(st);
	event = st >> 16;
	switch (event) {
	case PTRACE_EVENT_STOP:
		ev->kind = RD_EV_STOP;
		break;
	case PTRACE_EVENT_CLONE:
		ev->kind = RD_EV_CLONE;
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &ev->msg);
		/* Its first stop may already have been seen. */
		if (!rd_pt_thread(tr, (pid_t)ev->msg))
			rd_pt_add_thread(tr, (pid_t)ev->msg, RD_T_RUNNING);
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ev->kind = RD_EV_FORK;
		ev->code = event == PTRACE_EVENT_VFORK;
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &ev->msg);
		break;
	case PTRACE_EVENT_EXEC:
		ev->kind = RD_EV_EXEC;
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &ev->msg);
		/* Every other thread is gone; the exec'ing thread now has the leader's id. */
		for (size_t i = 0; i < tr->nt; i++)
			if (tr->t[i].tid != tid)
				tr->t[i].state = RD_T_GONE;
		if (tr->pid == tid)
			open_mem(tr);
		break;
	case 0:
		if (ev->sig == SIGTRAP) {
			siginfo_t si;

			ev->kind = RD_EV_TRAP;
			if (!stepping && ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0)
				ev->code = si.si_code;
		} else {
			ev->kind = RD_EV_SIGNAL;
		}
		break;
	default:
		ev->kind = RD_EV_STOP;
		break;
	}
	return 0;
}

int rd_pt_cont(struct rd_tracee *tr, struct rd_thread *t, int sig)
{
	(void)tr;
	if (!t || t->state != RD_T_STOPPED)
		return -EINVAL;
	if (ptrace(PTRACE_CONT, t->tid, 0, (long)sig) < 0)
		return -errno;
	t->state = RD_T_RUNNING;
	t->stepping = false;
	t->last_step = false;
	return 0;
}

int rd_pt_singlestep(struct rd_tracee *tr, struct rd_thread *t, int sig)
{
	(void)tr;
	if (!t || t->state != RD_T_STOPPED)
		return -EINVAL;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, (long)sig) < 0)
		return -errno;
	t->state = RD_T_RUNNING;
	t->stepping = true;
	t->last_step = true;
	return 0;
}

int rd_pt_interrupt(struct rd_thread *t)
{
	if (!t || t->state != RD_T_RUNNING)
		return -EINVAL;
	return ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 ? -errno : 0;
}

int rd_pt_getregs(pid_t tid, rd_regs_t *regs)
{
	struct iovec iov = {regs, sizeof(*regs)};

	return ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0 ? -errno : 0;
}

int rd_pt_getpc(pid_t tid, uint64_t *pc)
{
	rd_regs_t regs;
	struct iovec iov = {.iov_base = &regs, .iov_len = sizeof(regs)};

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0)
		return -errno;
	if (iov.iov_len < sizeof(regs)) {
		/* A 32-bit program gets its own layout: i386's 17 words (eip the 13th), arm's
		 * 18 (pc the 16th). */
		uint32_t w[18];

		memcpy(w, &regs, sizeof(w));
		*pc = w[RD_ARCH_COMPAT_PC];
	} else {
		*pc = rd_arch_pc(&regs);
	}
	return 0;
}

int rd_pt_setregs(pid_t tid, const rd_regs_t *regs)
{
	struct iovec iov = {(void *)regs, sizeof(*regs)};

	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0 ? -errno : 0;
}

int rd_pt_siginfo(pid_t tid, siginfo_t *si)
{
	return ptrace(PTRACE_GETSIGINFO, tid, 0, si) < 0 ? -errno : 0;
}

int rd_pt_peek(struct rd_tracee *tr, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (tr->memfd < 0)
		return -EBADF;
	n = pread(tr->memfd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int rd_pt_poke(struct rd_tracee *tr, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n;

	if (tr->memfd < 0)
		return -EBADF;
	n = pwrite(tr->memfd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int rd_pt_detach(struct rd_tracee *tr, struct rd_thread *t)
{
	struct rd_proc_status ps;

	if (!t || t->state != RD_T_STOPPED)
		return -EINVAL;
	/* A single-step over a system call that we interrupted queues a SIGTRAP at the
	 * system call's exit: let the thread dequeue it into a stop we swallow. */
	if (t->last_step && rd_proc_status(tr->pid, t->tid, &ps) == 0 &&
	    (ps.sigpnd & (1ull << (SIGTRAP - 1))) && ptrace(PTRACE_CONT, t->tid, 0, 0) == 0) {
		int st;

		while (waitpid(t->tid, &st, __WALL) < 0 && errno == EINTR)
			;
		if (WIFSTOPPED(st) && WSTOPSIG(st) != SIGTRAP && !t->pending_sig)
			t->pending_sig = WSTOPSIG(st);
	}
	t->last_step = false;
	if (ptrace(PTRACE_DETACH, t->tid, 0, (long)t->pending_sig) < 0 && errno != ESRCH)
		return -errno;
	t->state = RD_T_GONE;
	t->pending_sig = 0;
	return 0;
}

void rd_pt_kill(struct rd_tracee *tr)
{
	int st = 0;

	if (tr->pid <= 0 || tr->exited)
		return;
	kill(tr->pid, SIGKILL);
	/* Reap every thread so nothing is left as a zombie. */
	while (waitpid(-1, &st, __WALL) > 0 || errno == EINTR)
		;
	for (size_t i = 0; i < tr->nt; i++)
		tr->t[i].state = RD_T_GONE;
	tr->exited = true;
	tr->exit_status = st;
}

int rd_pt_child_stopped(pid_t child)
{
	int st;
	pid_t r;

	while ((r = waitpid(child, &st, __WALL)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return -errno;
	return WIFSTOPPED(st) ? 0 : -ESRCH;
}

void rd_pt_child_detach(pid_t child)
{
	ptrace(PTRACE_DETACH, child, 0, 0);
}

int rd_pid_error(pid_t pid, int err)
{
	struct rd_proc_status ps = {.user_mm = true};
	bool have = rd_proc_status(pid, 0, &ps) == 0;
	pid_t via;
	char who[96];

	if (have && ps.state == 'Z') {
		/* A zombie main thread: the process is one only when no other thread lives. */
		if (rd_proc_live_thread(pid, &via) < 0) {
			rd_proc_name(ps.ppid, who, sizeof(who));
			return rd_error(
			    "cannot trace pid %d: it is a zombie (it exited; its parent "
			    "%s has not reaped it)",
			    (int)pid, who);
		}
		have = rd_proc_status(pid, via, &ps) == 0;
	}
	if (err == -ENOENT || err == -ESRCH)
		return rd_error("pid %d: no such process", (int)pid);
	if (pid == getpid())
		return rd_error("cannot trace pid %d: it is this rseqdbg process", (int)pid);
	if (err != -EPERM || !have)
		ps = (struct rd_proc_status){.user_mm = true};
	if (!ps.user_mm)
		return rd_error("cannot trace pid %d: a kernel thread, it has no user code",
				(int)pid);
	if (ps.tracer) {
		rd_proc_name(ps.tracer, who, sizeof(who));
		return rd_error("cannot trace pid %d: already traced by PID %s", (int)pid, who);
	}
	if (err == -EPERM || err == -EACCES)
		return rd_error("cannot trace pid %d: %s (need root or CAP_SYS_PTRACE; as the same "
				"user, kernel.yama.ptrace_scope 0)",
				(int)pid, strerror(EPERM));
	return rd_error("cannot trace pid %d: %s", (int)pid, strerror(-err));
}

int rd_debugger_ancestor(pid_t pid)
{
	struct rd_proc_status ps, up;
	pid_t via;

	/* Ask a live thread: the main thread may have exited. */
	if (rd_proc_live_thread(pid, &via) < 0 || rd_proc_status(pid, via, &ps) < 0)
		return 0;
	for (pid_t a = getppid(); ps.tracer && a > 1;
	     a = rd_proc_status(a, 0, &up) == 0 ? up.ppid : 0) {
		if (a == ps.tracer)
			return a;
	}
	return 0;
}
