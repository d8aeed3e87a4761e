/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rseqdbg step, inside: the state of one stepping session and the parts that share it.
 *
 *   ../step.c   the command: options, setup, the main loop, teardown
 *   loop.c      the ptrace loop: one step of the current thread, events of the others
 *   stepover.c  a critical section run at full speed between breakpoints at its exits
 *   tree.c      straight-line code run between breakpoints at the leaves of a planned tree
 *   planner.c   the tree of paths ahead (pure logic, planner.h)
 *   sections.c  the known critical sections: tables of mapped modules, rseq_cs at run time
 *   output.c    steps, passages and events as text or JSON lines
 *
 * and, with their own headers: breakpoint.c (the temporary breakpoints, removable from a
 * signal handler), pin.c (the stepped thread and rseqdbg held on one CPU), guard.c (the
 * process the user sees, so that killing it still detaches cleanly). The process itself is
 * reached through rseqdbg/proc/, the instructions through rseqdbg/arch/. What these files
 * share is named rd_step_* (the planner's rd_plan_*); everything else in them is static.
 */
#ifndef RSEQDBG_STEP_STEPPER_H
#define RSEQDBG_STEP_STEPPER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "arch/arch.h"
#include "proc/maps.h"
#include "proc/ptrace.h"
#include "proc/rseqarea.h"
#include "step/planner.h"

/* A passage whose thread has run this much CPU time without hitting one of its breakpoints,
 * or sleeps in the kernel, is interrupted to see where it is; a section whose passage was
 * found still going gets twice the time from then on. Counted in the thread's own CPU time,
 * a bound no load on the machine uses up; doubled, one no slow CPU decides twice. */
#define SAFETY_NET_MS 200
#define MAX_EXITS 32
#define MAX_EXCLUSIVE 72 /* bytes of an exclusive sequence: a load, 16 more, the end */
#define DCACHE 4096	 /* decoded instructions of module code, by address */
#define SYMCACHE 4096
#define CODECACHE 32 /* pages of code kept: one pread per page, not per step */
#define KEEP_BPS 64  /* breakpoints left planted between trees, at most */
/* Passages in a row that did not commit before a section's retries run at full speed. */
#define RETRY_LOOP_PASSAGES 8

enum sec_source {
	SRC_TABLE,     /* a descriptor table of a mapped module */
	SRC_RSEQ_CS,   /* the descriptor a thread's rseq_cs pointed to */
	SRC_EXCLUSIVE, /* no section: an exclusive sequence, run whole (rd_step_exclusive) */
};

struct section {
	uint64_t start, post_commit, abort, desc;
	enum sec_source src;
	char *func, *file;
	int line;
	char *label;  /* the text output's name: "func (file:line)", or the inline chain's */
	bool inlined; /* its start is in inlined code: the label gives the chain */
	uint64_t exits[MAX_EXITS]; /* exit points of the table, then branch targets outside */
	size_t nexits;
	bool exits_known;
	unsigned int failed;	   /* passages in a row that did not commit */
	unsigned int failed_exits; /* how many of them left by an exit */
	bool retry_loop; /* our stops undo what it checks: run its retries to the commit */
	uint64_t net_ns; /* CPU time a passage may take before the safety net looks */
	int fold;	 /* runs inside a tree (section_ways): 1 yes, -1 no, 0 not known */
	uint32_t wregs;	 /* with fold 1: the registers its code writes (wregs bits) */
};

enum result {
	RES_COMMIT,
	RES_ABORT,
	RES_EXIT,
	RES_LOST, /* left by a way no breakpoint covered: found by the safety net */
	RES_NONE, /* the section was not entered after all */
};

/* The places a name has in the modules searched so far. A module is searched once, not at
 * each change of the modules (its DWARF read again each time would cost more than stepping),
 * and forgotten when it is no longer mapped. */
struct place {
	uint64_t addr, start; /* runtime address; start of its module */
	dev_t dev;	      /* and the module's file */
	ino_t ino;
};

struct places {
	const char *spec; /* a function name or FILE:LINE */
	struct place *v;
	size_t n;
	struct place *searched; /* the modules searched (addr unused) */
	size_t nsearched;
	bool seen; /* some module had it */
};

struct opts {
	pid_t pid, tid;
	const char *from, *until;
	uint64_t count;
	bool finish, quiet, detach, lock_others, no_signals, single_step, no_pin;
	char **argv;
};

struct dcache_ent {
	uint64_t addr;
	struct elfscan_insn in;
};

struct symline {
	uint64_t pc;
	char *text; /* "module+0x12 func+0x4 (file.S:42)" */
};

struct stepper {
	struct opts o;
	struct rd_tracee tr;
	struct rd_modules mods;
	struct elfscan_decoder *dec;
	struct section *secs;
	size_t nsecs, capsecs;
	uint64_t seen_desc[256]; /* rseq_cs values already looked at */
	size_t nseen;
	struct rd_thread *cur;
	pid_t cur_tid;
	struct rd_rseq_config rcfg;
	bool have_rcfg;
	int cur_sig; /* to deliver on the next resume of cur */
	uint64_t until_addr;
	int depth; /* --finish: calls minus returns since the start */
	bool maps_dirty;
	bool in_exec;	 /* stopped in exec: the first step only leaves the system call */
	bool last_store; /* the last instruction stepped stored a 64-bit word */
	rd_regs_t regs;	 /* the stepped thread's registers, as its last stop left them */
	bool regs_valid;
	uint64_t unknown_pages[256];
	size_t nunknown;
	struct symline *symcache;
	struct codepage {
		uint64_t page; /* page address + 1; 0 when empty */
		uint8_t bytes[4096];
	} * code;
	struct dcache_ent *dcache;
	struct plan plan;
	struct plan_env penv;	    /* the planner's view of this process */
	const rd_regs_t *penv_regs; /* the registers at the root of the tree being planned */
	bool slot_read, slot_ok;    /* the word at the root's stack pointer, read once a tree */
	uint64_t slot_word;
	const char *end;
	/* --until, a name or FILE:LINE: looked up again as the modules change; until_addr is 0
	 * while it names nothing mapped. */
	struct places until_places;
	/* Counts for the summary. */
	uint64_t steps, passages, res[RES_NONE + 1], stops_in_passages, signals;
	struct timespec t0;
};

enum how {
	HOW_STEP,
	HOW_CONT,
};

enum step_status {
	STEP_OK,
	STEP_END, /* the end: st->end says why */
	STEP_ERR, /* rd_errmsg() says what went wrong; the command reports it */
};

/* Why our output could not be written (a closed pipe: SIGPIPE is ignored); 0 while it can. */
extern int rd_step_out_errno;

/* output.c */
void rd_step_check_output(void);
uint64_t rd_step_now_ns(void);
const char *rd_step_base_name(const char *p);
const char *rd_step_place(struct stepper *st, uint64_t pc);
const char *rd_step_sec_name(const struct section *s, char *buf, size_t len);
void rd_step_print_step(struct stepper *st, const struct elfscan_insn *in);
void rd_step_print_passage(struct stepper *st, const struct section *s, enum result r, uint64_t at,
			   uint64_t ns, bool net, bool retries);
void rd_step_print_inside(struct stepper *st, pid_t tid, uint64_t pc, const struct section *s);
/* A one-off event: new thread, signal, fork, exec, exit, safety net. */
void rd_step_print_event(struct stepper *st, const char *kind, pid_t tid, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rd_step_print_summary(struct stepper *st);

/* Whether a is one of the n addresses of v (a section's exits, a tree's ways). */
static inline bool addr_in(uint64_t a, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == a)
			return true;
	return false;
}

/* sections.c */
void rd_step_sec_free(struct section *s);
struct section *rd_step_sec_find(struct stepper *st, uint64_t addr);
void rd_step_symcache_clear(struct stepper *st);
int rd_step_load_modules(struct stepper *st);
void rd_step_learn_desc(struct stepper *st, uint64_t desc);
void rd_step_check_rseq_cs(struct stepper *st);
void rd_step_compute_exits(struct stepper *st, struct section *s);
/* Whether spec is a number or FILE:LINE (resolved once), not a function name. */
bool rd_step_spec_is_place(const char *spec);
/* Forget the places of p in modules no longer mapped (each given to gone(), which may be
 * NULL), then search the modules mapped now that were not searched yet: a function's
 * out-of-line code and inlined instances, or a FILE:LINE. Returns the index in p->v of the
 * first new place, or -ENOMEM. */
int rd_step_places_update(struct stepper *st, struct places *p, void (*gone)(uint64_t addr));
void rd_step_places_free(struct places *p);
/* --until's place: the lowest address of its places in the modules mapped now (a library
 * loaded, moved or gone changes it), 0 while none has it. */
void rd_step_until_update(struct stepper *st);

/* loop.c */
void rd_step_set_cur(struct stepper *st, struct rd_thread *t);
struct rd_thread *rd_step_cur(struct stepper *st);
void rd_step_report_if_inside(struct stepper *st, pid_t tid);
void rd_step_release_child(struct stepper *st, const struct rd_event *ev);
void rd_step_handle_exec(struct stepper *st, const struct rd_event *ev);
uint64_t rd_step_undo_bp_trap(pid_t tid, const struct rd_event *ev, rd_regs_t *r, bool ever);
bool rd_step_any_held(const struct stepper *st);
void rd_step_release_held(struct stepper *st);
/* Held threads taken past their breakpoints, which stay planted, and let go. */
void rd_step_pass_held(struct stepper *st);
int rd_step_resume_cur(struct stepper *st, enum how how, int sig);
int rd_step_wait_cur(struct stepper *st, struct rd_event *ev, unsigned int timeout_ms, enum how how,
		     bool want_stop);
int rd_step_wait_quitting(struct stepper *st, struct rd_event *ev, enum how how);
enum step_status rd_step_cur_exec(struct stepper *st, const struct rd_event *ev);
enum step_status rd_step_cur_lost(struct stepper *st);
enum step_status rd_step_cur_gone(struct stepper *st, const struct rd_event *ev);
bool rd_step_trap_queued(const rd_regs_t *r);
const char *rd_step_plant_error(int err);
enum step_status rd_step_once(struct stepper *st);
void rd_step_stop_thread(struct stepper *st, pid_t tid, bool teardown);
void rd_step_stop_all(struct stepper *st);
void rd_step_finish_tracee(struct stepper *st, bool detach);

/* stepover.c */
/* The thread is at pc, in front of section s or inside it. */
enum step_status rd_step_over(struct stepper *st, struct section *s, uint64_t pc,
			      const uint64_t *other, size_t nother);
/* Section s ran inside a tree and was left at at (its commit, abort handler or an exit),
 * within ns of the tree's run: report the passage. */
void rd_step_passage_in_tree(struct stepper *st, struct section *s, uint64_t at, uint64_t ns);
/* The exclusive sequence opened by the load-exclusive in, run whole; *done false when it
 * cannot be (then step it). */
enum step_status rd_step_exclusive(struct stepper *st, const struct elfscan_insn *in, bool *done);

/* tree.c */
bool rd_step_page_checked(struct stepper *st, uint64_t pc);
const struct elfscan_insn *rd_step_insn_at(struct stepper *st, uint64_t pc);
void rd_step_tree_env_init(struct stepper *st);
bool rd_step_tree_plan(struct stepper *st, const struct elfscan_insn *root, const rd_regs_t *regs,
		       const uint64_t *succ, size_t nsucc, uint64_t left);
bool rd_step_tree_plant(struct stepper *st);
enum step_status rd_step_tree_run(struct stepper *st, const struct elfscan_insn *root);

#endif
