// SPDX-License-Identifier: LGPL-2.1-or-later
/* Audit: check descriptors, signatures, tables and critical-section code of one ELF file. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "elfscan-audit.h"
#include "elfscan-decode.h"
#include "internal.h"

enum check_id {
	C_VERSION,
	C_FLAGS,
	C_ALIGN,
	C_EMPTY,
	C_OVERFLOW,
	C_ABORT_INSIDE,
	C_NOT_EXEC,
	C_SIG_UNKNOWN,
	C_SIG_DIFFER,
	C_SIG_REGISTERED,
	C_PTR_DANGLING,
	C_UNLISTED,
	C_DUPLICATE,
	C_EXIT_NO_SECTION,
	C_EXIT_INSIDE,
	C_NO_PTR_ARRAY,
	C_NO_EXIT_ARRAY,
	C_OVERLAP,
	C_PC_BOUNDARY,
	C_ABORT_BOUNDARY,
	C_CALL,
	C_SYSCALL,
	C_TRAP,
	C_RET,
	C_SP_WRITE,
	C_UNDECLARED_EXIT,
	C_JUMP_INTO,
	C_SPANS_FUNCS,
	C_NO_COMMIT,
	C_ORPHAN_SIG,
	C_NCHECKS
};

#define E ELFSCAN_SEV_ERROR
#define W ELFSCAN_SEV_WARNING
#define I ELFSCAN_SEV_INFO

static const struct elfscan_check checks[C_NCHECKS] = {
    [C_VERSION] = {"RSEQ001", "descriptor", E, "descriptor version is not 0",
		   "The kernel accepts only struct rseq_cs version 0 and kills the thread "
		   "(SIGSEGV) when it finds another version in an armed descriptor.",
		   "Emit the descriptor with version 0."},
    [C_FLAGS] = {"RSEQ002", "descriptor", E, "descriptor flags are not 0",
		 "The RSEQ_CS_FLAG_NO_RESTART_ON_* flags are deprecated; since Linux 6.0 the "
		 "kernel kills a thread whose armed descriptor has flags set.",
		 "Set the descriptor's flags field to 0."},
    [C_ALIGN] = {"RSEQ003", "descriptor", W, "descriptor is not 32-byte aligned",
		 "struct rseq_cs is declared aligned(32) by the ABI; table walkers step "
		 "__rseq_cs by 32 bytes from an aligned start and miss a misaligned entry.",
		 "Align the descriptor with .balign 32 in the __rseq_cs section."},
    [C_EMPTY] = {"RSEQ004", "descriptor", E, "post_commit_offset is 0",
		 "An empty section [start_ip, start_ip) contains no instruction: the kernel "
		 "never restarts it, so nothing is protected.",
		 "Set post_commit_offset to the commit label minus the start label."},
    [C_OVERFLOW] = {"RSEQ005", "descriptor", E, "start_ip + post_commit_offset overflows",
		    "The kernel rejects (SIGSEGV) a descriptor whose end wraps around the "
		    "address space or lies above the user address range.",
		    "Compute post_commit_offset as a label difference within one section."},
    [C_ABORT_INSIDE] = {"RSEQ006", "descriptor", E, "abort_ip is inside the section",
			"The kernel requires abort_ip outside [start_ip, post_commit_ip) and "
			"kills the thread otherwise.",
			"Place the abort handler (and its signature) outside the section."},
    [C_NOT_EXEC] = {"RSEQ007", "descriptor", E,
		    "start, post-commit or abort address outside every executable segment",
		    "A section or abort handler that is not in executable memory cannot run; "
		    "the descriptor points at data, at nothing, or was not relocated.",
		    "Check the descriptor's relocations and that the labels are in .text."},
    [C_SIG_UNKNOWN] = {"RSEQ010", "signature", E,
		       "the 4 bytes before abort_ip are not a known signature",
		       "On abort the kernel compares the 4 bytes before abort_ip with the "
		       "signature the thread registered and kills the thread when they differ.",
		       "Emit the architecture's RSEQ_SIG (for example 0x53053053 on x86) "
		       "immediately before the abort label."},
    [C_SIG_DIFFER] = {"RSEQ011", "signature", E, "signatures differ between sections of one file",
		      "A thread registers one signature; a section whose signature differs "
		      "from it kills the thread on its first abort.",
		      "Use one RSEQ_SIG value for every section of the program."},
    [C_SIG_REGISTERED] = {"RSEQ012", "signature", E,
			  "signature differs from the one the thread registered",
			  "The process registered another signature (rseq(2) sig argument, "
			  "glibc uses RSEQ_SIG): this section's first abort kills the thread.",
			  "Emit the signature the process registers before abort_ip, or "
			  "register the one the section carries."},
    [C_PTR_DANGLING] = {"RSEQ020", "tables", E,
			"pointer-array entry points to no descriptor in __rseq_cs",
			"Debuggers and instrumentation follow __rseq_cs_ptr_array; an entry "
			"that points elsewhere gives them a bogus section.",
			"Make every __rseq_cs_ptr_array entry the address of a descriptor "
			"emitted in __rseq_cs."},
    [C_UNLISTED] = {"RSEQ021", "tables", W,
		    "descriptor in __rseq_cs that the pointer array does not list",
		    "Tools that read only __rseq_cs_ptr_array do not see this section.",
		    "Emit a pointer-array entry next to every descriptor."},
    [C_DUPLICATE] = {"RSEQ022", "tables", W, "duplicate table entries",
		     "The same descriptor listed twice, two descriptors for one section or "
		     "a repeated exit point: table consumers count the section twice.",
		     "Emit each descriptor, pointer and exit point once."},
    [C_EXIT_NO_SECTION] = {"RSEQ023", "tables", W, "exit point whose start_ip matches no section",
			   "An exit point names its section by start_ip; one that matches no "
			   "descriptor is lost on debuggers.",
			   "Use the section's start label as the exit point's start_ip."},
    [C_EXIT_INSIDE] = {"RSEQ024", "tables", W, "exit point inside its section",
		       "An exit point's exit_ip must lie outside [start_ip, post_commit_ip); "
		       "one inside is no exit, so a debugger stops inside the section.",
		       "Point exit_ip at the label the section branches to."},
    [C_NO_PTR_ARRAY] = {"RSEQ025", "tables", I, "__rseq_cs_ptr_array is missing",
			"Debuggers and instrumentation read the pointer array to find "
			"critical sections; --gc-sections drops it when nothing keeps it.",
			"Keep the section: KEEP(*(__rseq_cs_ptr_array)) in the linker script, "
			"or SHF_GNU_RETAIN (.section ...,\"aR\")."},
    [C_NO_EXIT_ARRAY] = {"RSEQ026", "tables", I, "__rseq_exit_point_array is missing",
			 "Sections branch to addresses other than post-commit and abort, "
			 "but no exit-point array declares them; debuggers and "
			 "instrumentation read it, and --gc-sections drops it.",
			 "Declare every exit in __rseq_exit_point_array and keep the section "
			 "from garbage collection."},
    [C_OVERLAP] = {"RSEQ027", "tables", W, "overlapping sections",
		   "Two different sections cover the same code; the kernel uses only the "
		   "armed one, and a debugger cannot tell which applies.",
		   "Give each critical section its own code range."},
    [C_PC_BOUNDARY] = {"RSEQ030", "code", E, "post_commit_ip is not on an instruction boundary",
		       "The section's end splits an instruction: the commit instruction is "
		       "partly outside the section, or the offset is wrong.",
		       "Compute post_commit_offset from the label after the commit store."},
    [C_ABORT_BOUNDARY] = {"RSEQ031", "code", E, "abort_ip is not on an instruction boundary",
			  "The kernel jumps to abort_ip; an address inside an instruction "
			  "executes garbage.",
			  "Point abort_ip at the label right after the signature."},
    [C_CALL] = {"RSEQ032", "code", E, "call inside the section",
		"The callee runs outside [start_ip, post_commit_ip): preemption there is "
		"not detected, and an abort cannot unwind the call.",
		"Inline the code or move the call out of the critical section."},
    [C_SYSCALL] = {"RSEQ033", "code", E, "system call inside the section",
		   "A system call inside a critical section is not allowed: the kernel kills "
		   "the thread (CONFIG_DEBUG_RSEQ) or the section restarts forever.",
		   "Make the system call before or after the section."},
    [C_TRAP] = {"RSEQ034", "code", E, "software interrupt or trap inside the section",
		"A trap enters the kernel and aborts the section on every pass.",
		"Remove the trap instruction from the section."},
    [C_RET] = {"RSEQ035", "code", W, "return inside the section",
	       "A return leaves the section for an address no table declares; a debugger "
	       "does not know it is an exit.",
	       "Leave the section through post_commit_ip or a declared exit point."},
    [C_SP_WRITE] = {"RSEQ036", "code", W, "stack pointer written inside the section",
		    "The abort handler runs with whatever the section left in the stack "
		    "pointer; push, pop and stack adjustments make it unbalanced.",
		    "Adjust the stack before the section, not inside it."},
    [C_UNDECLARED_EXIT] = {"RSEQ037", "code", W,
			   "branch leaves the section to an undeclared "
			   "address",
			   "A branch to an address that is neither post_commit_ip, abort_ip "
			   "nor a declared exit point: a debugger stepping over the section "
			   "would miss it and lose control.",
			   "Declare the target in __rseq_exit_point_array."},
    [C_JUMP_INTO] = {"RSEQ038", "code", E, "code outside the section jumps into its middle",
		     "Entering a section anywhere but start_ip runs that path without "
		     "rseq_cs armed: it is never restarted.",
		     "Branch to start_ip (re-arming rseq_cs) instead."},
    [C_SPANS_FUNCS] = {"RSEQ039", "code", W, "section spans two functions",
		       "The section runs past the end of the function that contains its start.",
		       "Keep a critical section inside one function."},
    [C_NO_COMMIT] = {"RSEQ040", "code", W, "last instruction is not a store",
		     "A critical section ends with its commit: a single store. Without one "
		     "the section commits nothing.",
		     "End the section with the commit store and place post_commit right "
		     "after it."},
    [C_ORPHAN_SIG] = {"RSEQ050", "orphans", I,
		      "signature followed by code that no descriptor uses as abort target",
		      "An abort handler with no descriptor pointing at it: a table may have "
		      "been lost (discarded section, stripped, or never emitted).",
		      "Check that every critical section's descriptor reaches the binary."},
};

#undef E
#undef W
#undef I

#define ES_MAX_BYTES (UINT64_C(1) << 30)

struct elfscan_finding {
	const struct elfscan_check *check;
	const struct elfscan_cs *cs;
	size_t csidx; /* index for sorting; SIZE_MAX for the file */
	uint64_t addr;
	char *msg;
	size_t detail; /* offset of the text after the "section ...: " prefix */
	size_t count;  /* how many occurrences the finding stands for */
};

struct elfscan_audit {
	struct elfscan_finding *v;
	size_t n, cap;
	char note[256];
};

struct range {
	uint64_t lo, hi;
	const unsigned char *bytes; /* NULL when only the address range is known */
};

struct ctx {
	struct elfscan *es;
	const struct elfscan_audit_opts *o;
	struct elfscan_audit *a;
	bool on[C_NCHECKS];
	struct elfscan_decoder *dec;
	struct range *x; /* executable ranges, sorted */
	size_t nx;
	struct range *sw; /* what the sweep decodes: the sections' functions, sorted */
	size_t nsw;
	bool sw_disjoint;      /* no two of sw overlap: bit() searches them by halves */
	unsigned char *starts; /* instruction-start bitmap per swept byte */
	size_t *xoff;	       /* bit offset of each swept range in starts */
	uint64_t *bogus;       /* descriptor addresses only dangling slots lead to */
	size_t nbogus;
	int err;
};

size_t elfscan_audit_nchecks(void)
{
	return C_NCHECKS;
}

const struct elfscan_check *elfscan_audit_check(size_t i)
{
	return i < C_NCHECKS ? &checks[i] : NULL;
}

const struct elfscan_check *elfscan_audit_find_check(const char *id)
{
	for (size_t i = 0; i < C_NCHECKS; i++)
		if (id && !strcasecmp(checks[i].id, id))
			return &checks[i];
	return NULL;
}

const char *elfscan_severity_name(enum elfscan_severity sev)
{
	switch (sev) {
	case ELFSCAN_SEV_ERROR:
		return "error";
	case ELFSCAN_SEV_WARNING:
		return "warning";
	default:
		return "info";
	}
}

size_t elfscan_audit_count(const struct elfscan_audit *a)
{
	return a ? a->n : 0;
}

const struct elfscan_finding *elfscan_audit_finding(const struct elfscan_audit *a, size_t i)
{
	return a && i < a->n ? &a->v[i] : NULL;
}

void elfscan_audit_counts(const struct elfscan_audit *a, size_t counts[3])
{
	counts[0] = counts[1] = counts[2] = 0;
	for (size_t i = 0; a && i < a->n; i++)
		counts[a->v[i].check->severity]++;
}

const char *elfscan_audit_code_note(const struct elfscan_audit *a)
{
	return a ? a->note : "";
}

const struct elfscan_check *elfscan_finding_check(const struct elfscan_finding *f)
{
	return f->check;
}

const char *elfscan_finding_message(const struct elfscan_finding *f)
{
	return f->msg;
}

const char *elfscan_finding_detail(const struct elfscan_finding *f)
{
	return f->msg + f->detail;
}

const struct elfscan_cs *elfscan_finding_cs(const struct elfscan_finding *f)
{
	return f->cs;
}

uint64_t elfscan_finding_addr(const struct elfscan_finding *f)
{
	return f->addr;
}

size_t elfscan_finding_count(const struct elfscan_finding *f)
{
	return f->count;
}

void elfscan_audit_free(struct elfscan_audit *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].msg);
	free(a->v);
	free(a);
}

/* "func+0x10 (file.S:12)", "func+0x10" or "0x401000", with the caller's bias added. */
/* snprintf() at buf + *n, keeping *n within len. */
static void append(char *buf, size_t len, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n + 1 >= len)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = (size_t)r >= len - *n ? len - 1 : *n + (size_t)r;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "f+0x12 (x.S:42)"; "inl (bits.h:35) inlined in f+0x12 (x.c:120)" in inlined code;
 * "__rseq_failure+0x2b (x.h:40)" for code no symbol covers; else the address. */
static void where(struct ctx *c, uint64_t addr, char *buf, size_t len)
{
	struct elfscan_loc loc;
	const char *name;
	uint64_t off;
	size_t n = 0;

	if (elfscan_symbolize(c->es, addr, &loc) || (!loc.func && !loc.section)) {
		snprintf(buf, len, "0x%" PRIx64, addr + c->o->bias);
		return;
	}
	buf[0] = '\0';
	if (loc.func && loc.inlined) {
		append(buf, len, &n, "%s", loc.inlined);
		if (loc.file && loc.line > 0)
			append(buf, len, &n, " (%s:%d)", base_name(loc.file), loc.line);
		append(buf, len, &n, " inlined in ");
	}
	name = loc.func ? loc.func : loc.section;
	off = loc.func ? loc.func_off : loc.section_off;
	if (off)
		append(buf, len, &n, "%s+0x%" PRIx64, name, off);
	else
		append(buf, len, &n, "%s", name);
	if (loc.func && loc.inlined) {
		if (loc.call_file && loc.call_line > 0)
			append(buf, len, &n, " (%s:%d)", base_name(loc.call_file), loc.call_line);
	} else if (loc.file && loc.line > 0) {
		append(buf, len, &n, " (%s:%d)", base_name(loc.file), loc.line);
	}
}

static void add(struct ctx *c, enum check_id id, const struct elfscan_cs *cs, uint64_t addr,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The finding add() made last, when it made one since there were before findings, stands
 * for count occurrences. */
static void set_count(struct ctx *c, size_t before, size_t count)
{
	if (c->a->n > before)
		c->a->v[c->a->n - 1].count = count;
}

static void add(struct ctx *c, enum check_id id, const struct elfscan_cs *cs, uint64_t addr,
		const char *fmt, ...)
{
	struct elfscan_audit *a = c->a;
	struct elfscan_finding *f;
	char detail[512], sec[256];
	va_list ap;

	if (!c->on[id] || c->err)
		return;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		struct elfscan_finding *nv = realloc(a->v, cap * sizeof(*nv));

		if (!nv) {
			c->err = es_err(ENOMEM, "out of memory");
			return;
		}
		a->v = nv;
		a->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	f = &a->v[a->n];
	f->check = &checks[id];
	f->cs = cs;
	f->csidx = cs ? (size_t)(cs - elfscan_get(c->es, 0)) : SIZE_MAX;
	f->addr = addr;
	f->count = 1;
	if (cs) {
		where(c, cs->start_ip, sec, sizeof(sec));
		if (asprintf(&f->msg, "section %s: %s", sec, detail) < 0)
			f->msg = NULL;
		f->detail = strlen(sec) + strlen("section : ");
	} else {
		f->msg = strdup(detail);
		f->detail = 0;
	}
	if (!f->msg) {
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	a->n++;
}

static uint64_t rd_word(const struct elfscan *es, const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k = elfscan_big_endian(es) ? i : n - 1 - i;

		v = v << 8 | p[k];
	}
	return v;
}

/* A section by name: its address as the library lays it out, and its size. */
static bool find_section(const struct elfscan *es, const char *name, uint64_t *addr, uint64_t *size)
{
	for (size_t i = 1; i < es->shnum; i++) {
		Elf_Scn *scn = elf_getscn(es->elf, i);
		GElf_Shdr sh;
		const char *nm;

		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		nm = elf_strptr(es->elf, es->shstrndx, sh.sh_name);
		if (!nm || strcmp(nm, name))
			continue;
		*addr = es->secaddr ? es->secaddr[i] : sh.sh_addr;
		*size = sh.sh_size;
		return true;
	}
	return false;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Executable code: SHF_EXECINSTR sections (with their bytes); PT_LOAD PF_X segments when the
 * file has no section headers. */
static int exec_ranges(struct ctx *c)
{
	struct elfscan *es = c->es;
	size_t cap = es->shnum + elfscan_nsegments(es) + 1;

	c->x = calloc(cap, sizeof(*c->x));
	if (!c->x)
		return es_err(ENOMEM, "out of memory");
	for (size_t i = 1; i < es->shnum; i++) {
		Elf_Scn *scn = elf_getscn(es->elf, i);
		GElf_Shdr sh;
		struct range *r = &c->x[c->nx];

		if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		r->lo = es->secaddr ? es->secaddr[i] : sh.sh_addr;
		r->hi = r->lo + sh.sh_size;
		/* code as the file holds it: enough to decode, call targets in .o files aside */
		if (sh.sh_offset <= es->size && es->size - sh.sh_offset >= sh.sh_size)
			r->bytes = es->image + sh.sh_offset;
		c->nx++;
	}
	if (!c->nx) {
		for (size_t i = 0; i < elfscan_nsegments(es); i++) {
			const struct elfscan_segment *s = elfscan_segment(es, i);

			if (!(s->flags & PF_X) || !s->memsz)
				continue;
			c->x[c->nx].lo = s->vaddr;
			c->x[c->nx].hi = s->vaddr + s->memsz;
			if (s->offset <= es->size && es->size - s->offset >= s->filesz &&
			    s->filesz == s->memsz)
				c->x[c->nx].bytes = es->image + s->offset;
			c->nx++;
		}
	}
	es_qsort(c->x, c->nx, sizeof(*c->x), cmp_range);
	return 0;
}

/* The executable range holding addr (end_ok: addr may be the range's end). */
static const struct range *in_exec(const struct ctx *c, uint64_t addr, bool end_ok)
{
	for (size_t i = 0; i < c->nx; i++)
		if (addr >= c->x[i].lo && (addr < c->x[i].hi || (end_ok && addr == c->x[i].hi)))
			return &c->x[i];
	return NULL;
}

/* A pointer-array slot leads here, to no descriptor of __rseq_cs: the bytes decoded there
 * are not a descriptor, so only the pointer (RSEQ020) and its alignment are reported. */
static bool is_bogus(const struct ctx *c, const struct elfscan_cs *cs)
{
	for (size_t i = 0; i < c->nbogus; i++)
		if (c->bogus[i] == cs->desc_addr && !(cs->sources & ELFSCAN_SRC_CS))
			return true;
	return false;
}

static bool is_rseq_cs_format(const struct elfscan_cs *cs)
{
	return cs->sources & (ELFSCAN_SRC_CS_PTR_ARRAY | ELFSCAN_SRC_CS | ELFSCAN_SRC_TABLE_2018);
}

/* The 2016 and 2015 RFC tables predate the merged ABI: no signature, restart at begin. */
static bool is_legacy(const struct elfscan_cs *cs)
{
	return !is_rseq_cs_format(cs);
}

/* librseq's big-endian arm signature: the bytes of udf #24035 read big endian. */
#define ARMEB_SIG 0xf3def5e7u

static size_t known_sigs(const struct elfscan *es, uint32_t *sigs, size_t max)
{
	size_t n = elfscan_known_signatures(elfscan_machine(es), sigs, max);

	if (elfscan_machine(es) == EM_ARM && elfscan_big_endian(es) && n < max)
		sigs[n++] = ARMEB_SIG;
	return n;
}

static bool sig_known(const struct elfscan *es, const struct elfscan_cs *cs)
{
	uint32_t sigs[8];
	size_t n = known_sigs(es, sigs, 8);

	if (cs->sig_status == ELFSCAN_SIG_MATCH)
		return true;
	for (size_t i = 0; cs->sig_status == ELFSCAN_SIG_MISMATCH && i < n; i++)
		if (sigs[i] == cs->signature)
			return true;
	return false;
}

/* --- descriptor ------------------------------------------------------------------------- */

static void check_descriptor(struct ctx *c, const struct elfscan_cs *cs)
{
	uint64_t b = c->o->bias;
	bool wraps = cs->start_ip + cs->post_commit_offset < cs->start_ip;

	if (is_bogus(c, cs)) {
		if (cs->desc_addr % 32)
			add(c, C_ALIGN, cs, cs->desc_addr,
			    "descriptor at 0x%" PRIx64
			    " is not 32-byte aligned (address %% 32 = %u)",
			    cs->desc_addr + b, (unsigned int)(cs->desc_addr % 32));
		return;
	}
	if (is_rseq_cs_format(cs)) {
		if (cs->version)
			add(c, C_VERSION, cs, cs->desc_addr,
			    "descriptor at 0x%" PRIx64 " has version %u, expected 0",
			    cs->desc_addr + b, cs->version);
		if (cs->flags)
			add(c, C_FLAGS, cs, cs->desc_addr,
			    "descriptor at 0x%" PRIx64 " has flags 0x%x, expected 0",
			    cs->desc_addr + b, cs->flags);
		if (cs->desc_addr % 32)
			add(c, C_ALIGN, cs, cs->desc_addr,
			    "descriptor at 0x%" PRIx64
			    " is not 32-byte aligned (address %% 32 = %u)",
			    cs->desc_addr + b, (unsigned int)(cs->desc_addr % 32));
	}
	if (!cs->post_commit_offset)
		add(c, C_EMPTY, cs, cs->start_ip, "post_commit_offset is 0: the section is empty");
	if (wraps || (elfscan_class(c->es) == 32 &&
		      cs->start_ip + cs->post_commit_offset > UINT64_C(0xffffffff)))
		add(c, C_OVERFLOW, cs, cs->start_ip,
		    "start_ip 0x%" PRIx64 " + post_commit_offset 0x%" PRIx64
		    " overflows the %d-bit address space",
		    cs->start_ip + b, cs->post_commit_offset, wraps ? 64 : 32);
	else if (cs->post_commit_offset && cs->abort_ip - cs->start_ip < cs->post_commit_offset &&
		 !is_legacy(cs))
		add(c, C_ABORT_INSIDE, cs, cs->abort_ip,
		    "abort_ip 0x%" PRIx64 " is inside the section [0x%" PRIx64 ", 0x%" PRIx64 ")",
		    cs->abort_ip + b, cs->start_ip + b, cs->post_commit_ip + b);
	if (!in_exec(c, cs->start_ip, false))
		add(c, C_NOT_EXEC, cs, cs->start_ip,
		    "start_ip 0x%" PRIx64 " is not in an executable segment", cs->start_ip + b);
	else if (cs->post_commit_offset && !wraps && !in_exec(c, cs->post_commit_ip, true))
		add(c, C_NOT_EXEC, cs, cs->post_commit_ip,
		    "post_commit_ip 0x%" PRIx64 " is not in an executable segment",
		    cs->post_commit_ip + b);
	if (!in_exec(c, cs->abort_ip, false))
		add(c, C_NOT_EXEC, cs, cs->abort_ip,
		    "abort_ip 0x%" PRIx64 " is not in an executable segment", cs->abort_ip + b);
}

/* --- signature -------------------------------------------------------------------------- */

static void check_signatures(struct ctx *c)
{
	uint16_t m = elfscan_machine(c->es);
	size_t n = elfscan_count(c->es), nknown, best_n = 0;
	uint32_t known[8], best = 0;
	char list[128] = "";

	nknown = known_sigs(c->es, known, 8);
	(void)m;
	for (size_t i = 0, off = 0; i < nknown && off < sizeof(list); i++)
		off +=
		    snprintf(list + off, sizeof(list) - off, "%s0x%08x", i ? " or " : "", known[i]);
	/* The most common signature is the file's; the others differ from it. */
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_cs *cs = elfscan_get(c->es, i);
		size_t cnt = 0;

		if (cs->sig_status > ELFSCAN_SIG_MISMATCH || is_legacy(cs) || is_bogus(c, cs) ||
		    (best_n && cs->signature == best))
			continue;
		for (size_t j = 0; j < n; j++) {
			const struct elfscan_cs *o = elfscan_get(c->es, j);

			if (o->sig_status <= ELFSCAN_SIG_MISMATCH && !is_legacy(o) &&
			    !is_bogus(c, o) && o->signature == cs->signature)
				cnt++;
		}
		if (cnt > best_n) {
			best_n = cnt;
			best = cs->signature;
		}
		if (best_n * 2 > n)
			break;
	}
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_cs *cs = elfscan_get(c->es, i);
		const uint8_t *s = cs->sig_bytes;

		if (is_legacy(cs) || is_bogus(c, cs))
			continue;
		if (cs->sig_status == ELFSCAN_SIG_MISMATCH && !sig_known(c->es, cs))
			add(c, C_SIG_UNKNOWN, cs, cs->abort_ip - 4,
			    "the 4 bytes before abort_ip 0x%" PRIx64 " are %02x %02x %02x %02x "
			    "(0x%08x), not a %s signature (%s)",
			    cs->abort_ip + c->o->bias, s[0], s[1], s[2], s[3], cs->signature,
			    elfscan_arch_name(c->es), list);
		else if (cs->sig_status == ELFSCAN_SIG_UNREADABLE)
			add(c, C_SIG_UNKNOWN, cs, cs->abort_ip - 4,
			    "the 4 bytes before abort_ip 0x%" PRIx64 " are not in the file",
			    cs->abort_ip + c->o->bias);
		if (cs->sig_status > ELFSCAN_SIG_MISMATCH)
			continue;
		if (best_n && cs->signature != best)
			add(c, C_SIG_DIFFER, cs, cs->abort_ip - 4,
			    "signature 0x%08x differs from 0x%08x carried by %zu other section%s "
			    "of "
			    "this file",
			    cs->signature, best, best_n, best_n == 1 ? "" : "s");
		for (size_t r = 0; r < c->o->nregistered_sigs; r++) {
			bool seen = false;

			for (size_t q = 0; q < r; q++)
				seen |= c->o->registered_sigs[q] == c->o->registered_sigs[r];
			if (!seen && c->o->registered_sigs[r] != cs->signature)
				add(c, C_SIG_REGISTERED, cs, cs->abort_ip - 4,
				    "signature 0x%08x differs from 0x%08x that the process "
				    "registered",
				    cs->signature, c->o->registered_sigs[r]);
		}
	}
}

/* --- tables ----------------------------------------------------------------------------- */

static const struct elfscan_cs *cs_by_desc(const struct elfscan *es, uint64_t desc)
{
	for (size_t i = 0; i < elfscan_count(es); i++)
		if (elfscan_get(es, i)->desc_addr == desc)
			return elfscan_get(es, i);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool same_section(const struct elfscan_cs *a, const struct elfscan_cs *b)
{
	return a->start_ip == b->start_ip && a->post_commit_offset == b->post_commit_offset &&
	       a->abort_ip == b->abort_ip;
}

/* arm and mips place an inline copy of a descriptor in .text beside the one in __rseq_cs */
static bool inline_copy(const struct ctx *c, const struct elfscan_cs *a, const struct elfscan_cs *b)
{
	return es_inline_descriptors(elfscan_machine(c->es)) &&
	       (in_exec(c, a->desc_addr, false) || in_exec(c, b->desc_addr, false));
}

static int cmp_exit(const void *a, const void *b)
{
	const struct elfscan_exit *x = *(const struct elfscan_exit *const *)a;
	const struct elfscan_exit *y = *(const struct elfscan_exit *const *)b;

	if (x->start_ip != y->start_ip)
		return x->start_ip < y->start_ip ? -1 : 1;
	if (x->exit_ip != y->exit_ip)
		return x->exit_ip < y->exit_ip ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void dangling(struct ctx *c, uint64_t slot, uint64_t v, const char *why)
{
	uint64_t *nv = realloc(c->bogus, (c->nbogus + 1) * sizeof(*nv));

	if (!nv) {
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	c->bogus = nv;
	c->bogus[c->nbogus++] = v;
	add(c, C_PTR_DANGLING, cs_by_desc(c->es, v), slot,
	    "__rseq_cs_ptr_array entry at 0x%" PRIx64 " points to 0x%" PRIx64 ", %s",
	    slot + c->o->bias, v + c->o->bias, why);
}

/* Each slot must point at one of the descriptors a 32-byte walk of __rseq_cs finds. */
static void check_ptr_array(struct ctx *c)
{
	struct elfscan *es = c->es;
	uint64_t pa, pasz, ca = 0, casz = 0, a0;
	bool have_cs = find_section(es, "__rseq_cs", &ca, &casz);
	uint16_t m = elfscan_machine(es);
	unsigned char *pb, *cb = NULL;
	char why[128];

	if (!find_section(es, "__rseq_cs_ptr_array", &pa, &pasz) || pasz > ES_MAX_BYTES ||
	    casz > ES_MAX_BYTES)
		return;
	pb = malloc(pasz + 1);
	if (have_cs)
		cb = malloc(casz + 1);
	if (!pb || (have_cs && !cb)) {
		free(pb);
		free(cb);
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	/* relocations applied */
	if (elfscan_read(es, pa, pb, pasz) || (cb && elfscan_read(es, ca, cb, casz)))
		goto out;
	a0 = ca % 32 ? ca + 32 - ca % 32 : ca;
	for (uint64_t off = 0; off + 8 <= pasz && !c->err; off += 8) {
		uint64_t v = rd_word(es, pb + off, 8), d;

		if (elfscan_class(es) == 32)
			v &= 0xffffffff;
		if (!v)
			continue;
		if (have_cs && v >= ca && v < ca + casz) {
			d = v >= a0 ? a0 + (v - a0) / 32 * 32 : v;
			if (d == v || d + 32 > ca + casz || all_zero(cb + (d - ca), 32))
				continue;
			snprintf(why, sizeof(why), "inside the descriptor at 0x%" PRIx64,
				 d + c->o->bias);
			dangling(c, pa + off, v, why);
			continue;
		}
		/* arm and mips keep an inline copy of the descriptor in .text */
		if (es_inline_descriptors(m) && in_exec(c, v, false))
			continue;
		dangling(c, pa + off, v,
			 have_cs ? "outside __rseq_cs" : "but there is no __rseq_cs");
	}
out:
	free(pb);
	free(cb);
}

static int cmp_exit_ip(const void *a, const void *b)
{
	const struct elfscan_exit *x = *(const struct elfscan_exit *const *)a;
	const struct elfscan_exit *y = *(const struct elfscan_exit *const *)b;

	if (x->exit_ip != y->exit_ip)
		return x->exit_ip < y->exit_ip ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Exit points of cs whose exit_ip lies inside it: one finding per exit_ip. */
static void exits_inside(struct ctx *c, const struct elfscan_cs *cs)
{
	const struct elfscan_exit **v;
	uint64_t b = c->o->bias;
	size_t n = 0;

	if (!cs->nexits || !c->on[C_EXIT_INSIDE])
		return;
	v = malloc(cs->nexits * sizeof(*v));
	if (!v) {
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	for (size_t e = 0; e < cs->nexits; e++)
		if (cs->exits[e].exit_ip - cs->start_ip < cs->post_commit_offset)
			v[n++] = &cs->exits[e];
	es_qsort(v, n, sizeof(*v), cmp_exit_ip);
	for (size_t e = 0, k; e < n; e += k) {
		size_t before = c->a->n;

		for (k = 1; e + k < n && v[e + k]->exit_ip == v[e]->exit_ip; k++)
			;
		if (k == 1)
			add(c, C_EXIT_INSIDE, cs, v[e]->addr,
			    "exit point at 0x%" PRIx64 " has exit_ip 0x%" PRIx64
			    " inside the section",
			    v[e]->addr + b, v[e]->exit_ip + b);
		else
			add(c, C_EXIT_INSIDE, cs, v[e]->addr,
			    "%zu exit points from 0x%" PRIx64 " have exit_ip 0x%" PRIx64
			    " inside the section",
			    k, v[e]->addr + b, v[e]->exit_ip + b);
		set_count(c, before, k);
	}
	free(v);
}

/* Each descriptor: listed in the pointer array, once; no other describing its section; no
 * section overlapping it; no exit point inside it. */
static void check_descriptors(struct ctx *c)
{
	struct elfscan *es = c->es;
	size_t n = elfscan_count(es);
	uint32_t src = elfscan_sources(es);
	uint64_t b = c->o->bias;

	for (size_t i = 0; i < n; i++) {
		const struct elfscan_cs *cs = elfscan_get(es, i);
		uint64_t first = 0;
		size_t nptr = 0;

		if (is_bogus(c, cs))
			continue;

		if ((src & ELFSCAN_SRC_CS_PTR_ARRAY) && (cs->sources & ELFSCAN_SRC_CS) &&
		    !(cs->sources & ELFSCAN_SRC_CS_PTR_ARRAY))
			add(c, C_UNLISTED, cs, cs->desc_addr,
			    "descriptor at 0x%" PRIx64
			    " in __rseq_cs is not in __rseq_cs_ptr_array",
			    cs->desc_addr + b);
		for (size_t s = 0; s < cs->nsites; s++) {
			if (cs->sites[s].source != ELFSCAN_SRC_CS_PTR_ARRAY)
				continue;
			if (nptr++ == 0)
				first = cs->sites[s].addr;
			else
				add(c, C_DUPLICATE, cs, cs->sites[s].addr,
				    "__rseq_cs_ptr_array entries at 0x%" PRIx64 " and 0x%" PRIx64
				    " list the same descriptor 0x%" PRIx64,
				    first + b, cs->sites[s].addr + b, cs->desc_addr + b);
		}
		/* the same section described twice (sorted by start_ip: neighbours) */
		for (size_t j = i + 1; j < n; j++) {
			const struct elfscan_cs *o = elfscan_get(es, j);

			if (o->start_ip != cs->start_ip)
				break;
			if (same_section(cs, o) && !inline_copy(c, cs, o) && !is_bogus(c, o))
				add(c, C_DUPLICATE, o, o->desc_addr,
				    "descriptors at 0x%" PRIx64 " and 0x%" PRIx64
				    " describe the same section",
				    cs->desc_addr + b, o->desc_addr + b);
		}
		/* overlap: a later section starting before this one ends */
		for (size_t j = i + 1; j < n; j++) {
			const struct elfscan_cs *o = elfscan_get(es, j);

			if (o->start_ip >= cs->post_commit_ip || cs->post_commit_ip < cs->start_ip)
				break;
			if ((o->start_ip == cs->start_ip &&
			     o->post_commit_offset == cs->post_commit_offset) ||
			    !o->post_commit_offset || o->post_commit_ip < o->start_ip ||
			    is_bogus(c, o))
				continue;
			add(c, C_OVERLAP, o, o->start_ip,
			    "[0x%" PRIx64 ", 0x%" PRIx64 ") overlaps the section [0x%" PRIx64
			    ", 0x%" PRIx64 ") of descriptor 0x%" PRIx64,
			    o->start_ip + b, o->post_commit_ip + b, cs->start_ip + b,
			    cs->post_commit_ip + b, cs->desc_addr + b);
		}
		exits_inside(c, cs);
	}
}

/* Each exit point: its start_ip names a section; identical ones, one finding per run. */
static void check_exit_points(struct ctx *c)
{
	struct elfscan *es = c->es;
	size_t n = elfscan_count(es), ne = elfscan_nexits(es);
	uint64_t b = c->o->bias, *starts;
	const struct elfscan_exit **ex;

	starts = malloc((n + 1) * sizeof(*starts));
	ex = malloc((ne + 1) * sizeof(*ex));
	if (!starts || !ex) {
		free(starts);
		free(ex);
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		starts[i] = elfscan_get(es, i)->start_ip;
	for (size_t e = 0; e < ne; e++)
		ex[e] = elfscan_exit_point(es, e);
	/* Identical exit points are neighbours once sorted: one finding per run of them. */
	es_qsort(ex, ne, sizeof(*ex), cmp_exit);
	for (size_t e = 0, k; e < ne; e += k) {
		const struct elfscan_exit *x = ex[e], *y;
		size_t before = c->a->n;

		for (k = 1; e + k < ne && ex[e + k]->start_ip == x->start_ip &&
			    ex[e + k]->exit_ip == x->exit_ip;
		     k++)
			;
		y = k > 1 ? ex[e + 1] : NULL;
		if (!n || !bsearch(&x->start_ip, starts, n, sizeof(*starts), cmp_u64)) {
			if (k == 1)
				add(c, C_EXIT_NO_SECTION, NULL, x->addr,
				    "exit point at 0x%" PRIx64 " (start_ip 0x%" PRIx64
				    ", exit_ip 0x%" PRIx64 ") matches no section",
				    x->addr + b, x->start_ip + b, x->exit_ip + b);
			else
				add(c, C_EXIT_NO_SECTION, NULL, x->addr,
				    "%zu exit points from 0x%" PRIx64 " (start_ip 0x%" PRIx64
				    ", exit_ip 0x%" PRIx64 ") match no section",
				    k, x->addr + b, x->start_ip + b, x->exit_ip + b);
			set_count(c, before, k);
		}
		before = c->a->n;
		if (k == 2)
			add(c, C_DUPLICATE, elfscan_lookup(es, x->start_ip), y->addr,
			    "exit points at 0x%" PRIx64 " and 0x%" PRIx64
			    " are the same {start_ip 0x%" PRIx64 ", exit_ip 0x%" PRIx64 "}",
			    x->addr + b, y->addr + b, x->start_ip + b, x->exit_ip + b);
		else if (k > 2)
			add(c, C_DUPLICATE, elfscan_lookup(es, x->start_ip), y->addr,
			    "exit points at 0x%" PRIx64 ", 0x%" PRIx64 " and %zu more are the "
			    "same {start_ip 0x%" PRIx64 ", exit_ip 0x%" PRIx64 "}",
			    x->addr + b, y->addr + b, k - 2, x->start_ip + b, x->exit_ip + b);
		set_count(c, before, k - 1);
	}
	free(ex);
	free(starts);
}

static void check_tables(struct ctx *c)
{
	struct elfscan *es = c->es;
	uint32_t src = elfscan_sources(es);

	check_descriptors(c);
	if (c->err)
		return;
	check_exit_points(c);
	if (c->err)
		return;
	if ((src & ELFSCAN_SRC_CS) && !(src & ELFSCAN_SRC_CS_PTR_ARRAY))
		add(c, C_NO_PTR_ARRAY, NULL, 0,
		    "%s has __rseq_cs but no __rseq_cs_ptr_array: debuggers and instrumentation "
		    "read "
		    "the pointer array to find critical sections (--gc-sections drops it)",
		    elfscan_path(es));
}

/* --- code ------------------------------------------------------------------------------- */

/* The caller's progress: decoding the sections' functions is the first half of the work, the
 * checks of each section's code the second; step i of n in that half. */
static void progress(const struct ctx *c, bool second, size_t i, size_t n)
{
	uint64_t half = elfscan_count(c->es);

	if (!c->o->progress || i % 256 || !n)
		return;
	c->o->progress(c->o->progress_ctx, (second ? half : 0) + (uint64_t)i * half / n, 2 * half);
}

/* The first swept range in sorted order holding addr. Ranges that do not overlap (every
 * file but a relocatable object, whose sections all start at 0) are searched in O(log n): one
 * lookup per section made a file of 100,000 sections cost seconds. */
static const struct range *swept(const struct ctx *c, uint64_t addr, size_t *idx)
{
	size_t lo = 0, hi = c->nsw;

	if (c->sw_disjoint) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (c->sw[mid].lo <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		lo = lo ? lo - 1 : 0;
		hi = lo + (c->nsw > 0);
	}
	for (size_t i = lo; i < hi; i++) {
		if (addr >= c->sw[i].lo && addr < c->sw[i].hi) {
			*idx = i;
			return &c->sw[i];
		}
	}
	return NULL;
}

static bool bit(const struct ctx *c, uint64_t addr)
{
	size_t i, k;
	const struct range *r = swept(c, addr, &i);

	if (!r)
		return false;
	k = c->xoff[i] + (addr - r->lo);
	return c->starts[k / 8] & (1u << (k % 8));
}

/* A function of more than FUNC_MAX bytes is no symbol to trust for the extent of code. */
#define FUNC_MAX (1u << 20)
/* Code swept whole for want of a function symbol: tens of seconds of decoding at most. */
#define SWEEP_MAX (64u << 20)

/*
 * What the sweep decodes: the function holding each section (its symbol's extent), or, when
 * no symbol bounds it, the executable range holding it; sorted, overlaps merged. Never the
 * whole of a file's code for its sake: that is what a section concerns.
 */
static int sweep_ranges(struct ctx *c)
{
	size_t n = elfscan_count(c->es), k = 0;

	c->sw = calloc(n + 1, sizeof(*c->sw));
	if (!c->sw)
		return es_err(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_cs *cs = elfscan_get(c->es, i);
		const struct range *x = in_exec(c, cs->start_ip, false);
		uint64_t lo, hi;

		if (!x || !x->bytes)
			continue;
		if (elfscan_func_range(c->es, cs->start_ip, &lo, &hi) || lo < x->lo || hi > x->hi ||
		    hi - lo > FUNC_MAX) {
			lo = x->lo;
			hi = x->hi;
		}
		if (hi - lo > SWEEP_MAX) {
			if (!c->a->note[0])
				snprintf(c->a->note, sizeof(c->a->note),
					 "RSEQ038 for the section at 0x%" PRIx64
					 ": no function symbol bounds it, and its code "
					 "[0x%" PRIx64 ", 0x%" PRIx64 ") is over 0x%x bytes",
					 cs->start_ip + c->o->bias, lo + c->o->bias,
					 hi + c->o->bias, SWEEP_MAX);
			continue;
		}
		c->sw[k++] = (struct range){lo, hi, x->bytes + (lo - x->lo)};
	}
	es_qsort(c->sw, k, sizeof(*c->sw), cmp_range);
	for (size_t i = 0; i < k; i++) {
		struct range *last = c->nsw ? &c->sw[c->nsw - 1] : NULL;

		/* Merged only within one range of bytes: the same function twice, or a
		 * function and the whole range around it. */
		if (last && c->sw[i].lo < last->hi &&
		    c->sw[i].bytes == last->bytes + (c->sw[i].lo - last->lo)) {
			if (c->sw[i].hi > last->hi)
				last->hi = c->sw[i].hi;
			continue;
		}
		c->sw[c->nsw++] = c->sw[i];
	}
	c->sw_disjoint = true;
	for (size_t i = 1; i < c->nsw; i++)
		c->sw_disjoint &= c->sw[i - 1].hi <= c->sw[i].lo;
	return 0;
}

/* Decode the code of every section's function once: mark instruction starts, and report
 * direct branches from outside a section into its middle. */
static void sweep(struct ctx *c)
{
	size_t total = 0;

	c->err = sweep_ranges(c);
	if (c->err)
		return;
	c->xoff = calloc(c->nsw + 1, sizeof(*c->xoff));
	if (!c->xoff) {
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < c->nsw; i++) {
		c->xoff[i] = total;
		total += c->sw[i].hi - c->sw[i].lo;
	}
	c->starts = calloc(total / 8 + 1, 1);
	if (!c->starts) {
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < c->nsw; i++) {
		const struct range *r = &c->sw[i];
		uint64_t len = r->hi - r->lo, off = 0;
		unsigned int step = elfscan_decoder_min_insn(c->dec);
		struct elfscan_insn in;

		progress(c, false, i, c->nsw);
		while (off < len) {
			const struct elfscan_cs *cs;
			size_t k = c->xoff[i] + off;

			if (elfscan_decode_one(c->dec, r->bytes + off, len - off, r->lo + off,
					       &in)) {
				off += step;
				continue;
			}
			c->starts[k / 8] |= 1u << (k % 8);
			off += in.size;
			if (!(in.flags & ELFSCAN_INSN_HAS_TARGET))
				continue;
			cs = elfscan_lookup(c->es, in.target);
			if (!cs || in.target == cs->start_ip ||
			    in.addr - cs->start_ip < cs->post_commit_offset)
				continue;
			{
				char src[256], dst[256];

				where(c, in.addr, src, sizeof(src));
				where(c, in.target, dst, sizeof(dst));
				add(c, C_JUMP_INTO, cs, in.addr,
				    "'%s' at %s jumps into the middle of the section (to %s)",
				    in.text, src, dst);
			}
		}
	}
}

static bool declared_exit(const struct elfscan_cs *cs, uint64_t t)
{
	if (t == cs->post_commit_ip || t == cs->abort_ip)
		return true;
	for (size_t e = 0; e < cs->nexits; e++)
		if (cs->exits[e].exit_ip == t)
			return true;
	return false;
}

/* abort_ip starts an instruction: the sweep says so, the instruction whose operand is the
 * signature ends there (x86's ud1 or nopl), or decoding its function from the start reaches
 * it. */
static bool abort_on_boundary(struct ctx *c, const struct elfscan_cs *cs)
{
	uint16_t m = elfscan_machine(c->es);
	unsigned char buf[16];
	struct elfscan_insn *v;
	uint64_t lo, hi;
	size_t n;
	bool ok = false;
	int err;

	if (elfscan_decoder_min_insn(c->dec) > 1)
		return cs->abort_ip % elfscan_decoder_min_insn(c->dec) == 0;
	if (c->starts && bit(c, cs->abort_ip))
		return true;
	if (es_sig_in_insn(m) &&
	    !elfscan_read(c->es, cs->abort_ip - 4 - ES_SIG_OPCODE, buf, 4 + ES_SIG_OPCODE) &&
	    es_sig_opcode(m, buf))
		return true;
	if (elfscan_func_range(c->es, cs->abort_ip, &lo, &hi) || hi - lo > FUNC_MAX)
		return true; /* nothing to decide with: do not guess */
	err = elfscan_decode_range(c->dec, c->es, lo, cs->abort_ip + 1, &v, &n);
	if (err && err != -EILSEQ)
		return true;
	for (size_t i = 0; i < n; i++)
		if (v[i].addr == cs->abort_ip)
			ok = true;
	if (err == -EILSEQ && (!n || v[n - 1].addr + v[n - 1].size < cs->abort_ip))
		ok = true; /* stopped before reaching it: undecided */
	free(v);
	return ok;
}

/* A short stub at addr outside the section that a debugger planting breakpoints only at the
 * declared exits would miss: up to STUB_MAX instructions that neither branch nor call (a
 * library restores registers there, in a section of its own), then an unconditional jump to a
 * declared exit. Returns how many instructions it has (0 when addr is no such stub) and the
 * exit it reaches in *exit. */
#define STUB_MAX 8

static size_t exit_stub(struct ctx *c, const struct elfscan_cs *cs, uint64_t addr, uint64_t *exit)
{
	const uint32_t stop = ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_CALL | ELFSCAN_INSN_RET |
			      ELFSCAN_INSN_SYSCALL | ELFSCAN_INSN_TRAP;

	for (size_t i = 0; i < STUB_MAX; i++) {
		struct elfscan_insn *v = NULL;
		uint32_t f;
		size_t n = 0;

		if (addr - cs->start_ip < cs->post_commit_offset ||
		    elfscan_decode_range(c->dec, c->es, addr, addr + 1, &v, &n) || !n) {
			free(v);
			return 0;
		}
		f = v[0].flags;
		*exit = v[0].target;
		addr += v[0].size;
		free(v);
		if (!(f & stop))
			continue;
		if ((f & (stop | ELFSCAN_INSN_COND | ELFSCAN_INSN_INDIRECT |
			  ELFSCAN_INSN_HAS_TARGET)) ==
			(ELFSCAN_INSN_BRANCH | ELFSCAN_INSN_HAS_TARGET) &&
		    declared_exit(cs, *exit))
			return i + 1;
		return 0;
	}
	return 0;
}

/* RSEQ037 for a branch out of the section to target, an undeclared address. */
static void undeclared_exit(struct ctx *c, const struct elfscan_cs *cs,
			    const struct elfscan_insn *in, const char *at)
{
	char to[256], exit_at[256];
	uint64_t exit = 0;
	size_t stub = exit_stub(c, cs, in->target, &exit);

	where(c, in->target, to, sizeof(to));
	if (!stub) {
		add(c, C_UNDECLARED_EXIT, cs, in->addr,
		    "'%s' at %s branches to %s, which is neither post_commit_ip, abort_ip nor a "
		    "declared exit point",
		    in->text, at, to);
		return;
	}
	where(c, exit, exit_at, sizeof(exit_at));
	add(c, C_UNDECLARED_EXIT, cs, in->addr,
	    "'%s' at %s leaves the section through a %zu-instruction stub at %s that jumps to %s "
	    "%s: a debugger that plants breakpoints only at the declared exits misses the stub",
	    in->text, at, stub, to,
	    exit == cs->abort_ip	 ? "abort_ip"
	    : exit == cs->post_commit_ip ? "post_commit_ip"
					 : "the declared exit point",
	    exit_at);
}

static bool check_code(struct ctx *c, const struct elfscan_cs *cs)
{
	uint64_t b = c->o->bias, lo, hi;
	struct elfscan_insn *v;
	bool undeclared = false;
	char at[256];
	size_t n;
	int err;

	if (!cs->post_commit_offset || cs->post_commit_ip < cs->start_ip ||
	    cs->post_commit_offset > FUNC_MAX || !in_exec(c, cs->start_ip, false) ||
	    is_bogus(c, cs))
		return false;
	if (in_exec(c, cs->abort_ip, false) &&
	    !(cs->abort_ip - cs->start_ip < cs->post_commit_offset) && !abort_on_boundary(c, cs)) {
		where(c, cs->abort_ip, at, sizeof(at));
		add(c, C_ABORT_BOUNDARY, cs, cs->abort_ip,
		    "abort_ip 0x%" PRIx64 " (%s) is inside an instruction", cs->abort_ip + b, at);
	}
	if (!elfscan_func_range(c->es, cs->start_ip, &lo, &hi) && cs->post_commit_ip > hi) {
		char fn[256];

		where(c, hi, fn, sizeof(fn));
		add(c, C_SPANS_FUNCS, cs, hi,
		    "the section [0x%" PRIx64 ", 0x%" PRIx64 ") runs past its function's end at "
		    "0x%" PRIx64 " into %s",
		    cs->start_ip + b, cs->post_commit_ip + b, hi + b, fn);
	}
	err = elfscan_decode_range(c->dec, c->es, cs->start_ip, cs->post_commit_ip, &v, &n);
	if (err && err != -EILSEQ)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_insn *in = &v[i];
		uint64_t end = in->addr + in->size;

		if (in->flags & (ELFSCAN_INSN_CALL | ELFSCAN_INSN_SYSCALL | ELFSCAN_INSN_TRAP |
				 ELFSCAN_INSN_RET | ELFSCAN_INSN_WRITES_SP | ELFSCAN_INSN_BRANCH) ||
		    end > cs->post_commit_ip)
			where(c, in->addr, at, sizeof(at));
		if (end > cs->post_commit_ip)
			add(c, C_PC_BOUNDARY, cs, cs->post_commit_ip,
			    "post_commit_ip 0x%" PRIx64 " splits '%s' at %s (%u bytes)",
			    cs->post_commit_ip + b, in->text, at, in->size);
		if (in->flags & ELFSCAN_INSN_CALL)
			add(c, C_CALL, cs, in->addr, "'%s' at %s", in->text, at);
		if (in->flags & ELFSCAN_INSN_SYSCALL)
			add(c, C_SYSCALL, cs, in->addr, "'%s' at %s", in->text, at);
		if (in->flags & ELFSCAN_INSN_TRAP)
			add(c, C_TRAP, cs, in->addr, "'%s' at %s", in->text, at);
		if (in->flags & ELFSCAN_INSN_RET)
			add(c, C_RET, cs, in->addr, "'%s' at %s", in->text, at);
		if ((in->flags & ELFSCAN_INSN_WRITES_SP) &&
		    !(in->flags & (ELFSCAN_INSN_CALL | ELFSCAN_INSN_RET)))
			add(c, C_SP_WRITE, cs, in->addr, "'%s' at %s writes the stack pointer",
			    in->text, at);
		if ((in->flags & ELFSCAN_INSN_BRANCH) && (in->flags & ELFSCAN_INSN_HAS_TARGET) &&
		    in->target - cs->start_ip >= cs->post_commit_offset &&
		    !declared_exit(cs, in->target)) {
			undeclared = true;
			undeclared_exit(c, cs, in, at);
		} else if ((in->flags & ELFSCAN_INSN_BRANCH) &&
			   (in->flags & ELFSCAN_INSN_INDIRECT) && !(in->flags & ELFSCAN_INSN_RET)) {
			undeclared = true;
			add(c, C_UNDECLARED_EXIT, cs, in->addr,
			    "indirect branch '%s' at %s may leave the section for any address",
			    in->text, at);
		}
	}
	if (!err && n && v[n - 1].addr + v[n - 1].size == cs->post_commit_ip &&
	    !(v[n - 1].flags & ELFSCAN_INSN_STORE)) {
		where(c, v[n - 1].addr, at, sizeof(at));
		add(c, C_NO_COMMIT, cs, v[n - 1].addr,
		    "the last instruction '%s' at %s is not a store", v[n - 1].text, at);
	}
	free(v);
	return undeclared;
}

/* --- orphans ---------------------------------------------------------------------------- */

static void check_orphans(struct ctx *c)
{
	uint16_t m = elfscan_machine(c->es);
	bool carried = es_sig_in_insn(m); /* the operand of an instruction: x86 */
	size_t nk, n = elfscan_count(c->es), na = 0;
	unsigned int align = c->dec ? elfscan_decoder_min_insn(c->dec) : 2;
	uint32_t known[8];
	uint64_t *aborts;

	nk = known_sigs(c->es, known, 8);
	if (!nk)
		return;
	aborts = malloc((n + 1) * sizeof(*aborts));
	if (!aborts) {
		c->err = es_err(ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		aborts[na++] = elfscan_get(c->es, i)->abort_ip;
	es_qsort(aborts, na, sizeof(*aborts), cmp_u64);
	for (size_t i = 0; i < c->nx; i++) {
		const struct range *r = &c->x[i];
		uint64_t len = r->hi - r->lo;

		if (!r->bytes || len < 8)
			continue;
		for (size_t s = 0; s < nk; s++) {
			unsigned char pat[4];
			const unsigned char *p = r->bytes, *end = r->bytes + len;

			for (int k = 0; k < 4; k++)
				pat[k] = elfscan_big_endian(c->es) ? known[s] >> (24 - 8 * k)
								   : known[s] >> (8 * k);
			while ((p = memmem(p, end - p, pat, 4))) {
				uint64_t off = p - r->bytes, abort = r->lo + off + 4;
				struct elfscan_insn in;

				p++;
				if (carried && (off < ES_SIG_OPCODE ||
						!es_sig_opcode(m, r->bytes + off - ES_SIG_OPCODE)))
					continue;
				if (!carried && off % align)
					continue;
				if (abort >= r->hi)
					continue;
				/* followed by code */
				if (c->dec && elfscan_decode_one(c->dec, r->bytes + off + 4,
								 len - off - 4, abort, &in))
					continue;
				if (bsearch(&abort, aborts, na, sizeof(*aborts), cmp_u64))
					continue;
				{
					char at[256];

					where(c, abort, at, sizeof(at));
					add(c, C_ORPHAN_SIG, NULL, abort,
					    "signature 0x%08x followed by code at %s, but no "
					    "descriptor "
					    "has abort_ip 0x%" PRIx64,
					    known[s], at, abort + c->o->bias);
				}
			}
		}
	}
	free(aborts);
}

/* --- driver ----------------------------------------------------------------------------- */

static int cmp_finding(const void *a, const void *b)
{
	const struct elfscan_finding *x = a, *y = b;

	if (x->csidx != y->csidx)
		return x->csidx == SIZE_MAX   ? -1
		       : y->csidx == SIZE_MAX ? 1
		       : x->csidx < y->csidx  ? -1
					      : 1;
	if (x->check != y->check)
		return x->check < y->check ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->msg, y->msg);
}

static int select_checks(struct ctx *c)
{
	const struct elfscan_audit_opts *o = c->o;
	const struct elfscan_check *k;

	for (size_t i = 0; i < C_NCHECKS; i++)
		c->on[i] = !o->enable;
	for (const char *const *p = o->enable; p && *p; p++) {
		k = elfscan_audit_find_check(*p);
		if (!k)
			return es_err(EINVAL, "unknown check '%s'", *p);
		c->on[k - checks] = true;
	}
	for (const char *const *p = o->disable; p && *p; p++) {
		k = elfscan_audit_find_check(*p);
		if (!k)
			return es_err(EINVAL, "unknown check '%s'", *p);
		c->on[k - checks] = false;
	}
	return 0;
}

/* The checks of a section's own code, which need its instructions decoded. Named one by one:
 * where a check sits in enum check_id says nothing about what it reads. */
static const enum check_id code_checks[] = {
    C_PC_BOUNDARY, C_ABORT_BOUNDARY,  C_CALL,	   C_SYSCALL,	  C_TRAP,      C_RET,
    C_SP_WRITE,	   C_UNDECLARED_EXIT, C_JUMP_INTO, C_SPANS_FUNCS, C_NO_COMMIT,
};

static bool any_on(const struct ctx *c, const enum check_id *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c->on[ids[i]])
			return true;
	return false;
}

int elfscan_audit(struct elfscan *es, const struct elfscan_audit_opts *opts,
		  struct elfscan_audit **res)
{
	struct elfscan_audit_opts o = {.sz = sizeof(o)};
	struct ctx c = {.es = es, .o = &o};
	size_t n = elfscan_count(es);
	bool undeclared = false;
	int err;

	*res = NULL;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	o.sz = sizeof(o);
	c.a = calloc(1, sizeof(*c.a));
	if (!c.a)
		return es_err(ENOMEM, "out of memory");
	err = select_checks(&c);
	if (err)
		goto out;
	err = exec_ranges(&c);
	if (err)
		goto out;
	if ((n && any_on(&c, code_checks, sizeof(code_checks) / sizeof(code_checks[0]))) ||
	    c.on[C_ORPHAN_SIG] || c.on[C_NO_EXIT_ARRAY]) {
		err = elfscan_decoder_for(es, &c.dec);
		if (err == -EOPNOTSUPP)
			snprintf(c.a->note, sizeof(c.a->note), "%s", elfscan_errmsg());
		else if (err)
			goto out;
		err = 0;
	}
	check_ptr_array(&c);
	for (size_t i = 0; i < n; i++)
		check_descriptor(&c, elfscan_get(es, i));
	if (n)
		check_signatures(&c);
	check_tables(&c);
	if (c.dec && n) {
		if (c.on[C_JUMP_INTO] || c.on[C_ABORT_BOUNDARY])
			sweep(&c);
		for (size_t i = 0; i < n && !c.err; i++) {
			progress(&c, true, i, n);
			undeclared |= check_code(&c, elfscan_get(es, i));
		}
	}
	if (undeclared && !(elfscan_sources(es) & ELFSCAN_SRC_EXIT_POINTS) &&
	    (elfscan_sources(es) & (ELFSCAN_SRC_CS | ELFSCAN_SRC_CS_PTR_ARRAY)))
		add(&c, C_NO_EXIT_ARRAY, NULL, 0,
		    "%s has sections that branch to undeclared exits but no "
		    "__rseq_exit_point_array: debuggers and instrumentation read it to follow "
		    "those exits (--gc-sections drops it)",
		    elfscan_path(es));
	if (c.on[C_ORPHAN_SIG])
		check_orphans(&c);
	err = c.err;
	if (err)
		goto out;
	if (c.a->n)
		es_qsort(c.a->v, c.a->n, sizeof(*c.a->v), cmp_finding);
	*res = c.a;
	c.a = NULL;
out:
	elfscan_audit_free(c.a);
	elfscan_decoder_free(c.dec);
	free(c.x);
	free(c.sw);
	free(c.xoff);
	free(c.starts);
	free(c.bogus);
	return err;
}
