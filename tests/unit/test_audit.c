// SPDX-License-Identifier: GPL-2.0-only
/*
 * Instruction classification (x86_64 and aarch64 encodings written out by hand from the
 * architecture manuals), the check list, and elfscan_audit() on the committed aarch64 audit
 * fixtures, whose audit_expect symbol (read here with libelf) marks the faulty instruction.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "elfscan-audit.h"
#include "elfscan-decode.h"
#include "elfscan.h"
#include "unit.h"

#define A64 FIXTURE_DIR "/audit/aarch64/"

/* The value of symbol name in path's .symtab, with libelf alone. */
static uint64_t sym(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	uint64_t v = 0;
	GElf_Shdr sh;
	Elf *e;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, i, &s))
				continue;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name))
				v = s.st_value;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(v != 0);
	return v;
}

static uint32_t decode(struct elfscan_decoder *d, const void *b, size_t n, uint64_t addr,
		       struct elfscan_insn *in)
{
	assert_int_equal(elfscan_decode_one(d, b, n, addr, in), 0);
	return in->flags;
}

#define F(x) ELFSCAN_INSN_##x

static void test_decode_x86_64(void **state)
{
	struct elfscan_decoder *d;
	struct elfscan_insn in;

	assert_int_equal(elfscan_decoder_new(EM_X86_64, 64, false, &d), 0);
	assert_int_equal(decode(d, "\x0f\x05", 2, 0x1000, &in), F(SYSCALL));
	assert_int_equal(decode(d, "\xcd\x80", 2, 0x1000, &in), F(SYSCALL));
	assert_int_equal(decode(d, "\xcc", 1, 0x1000, &in), F(TRAP));
	/* call rel32 to 0x1000 + 5 + 0xfb */
	assert_int_equal(decode(d, "\xe8\xfb\x00\x00\x00", 5, 0x1000, &in),
			 F(CALL) | F(HAS_TARGET) | F(WRITES_SP));
	assert_int_equal(in.target, 0x1100);
	assert_int_equal(in.size, 5);
	assert_int_equal(decode(d, "\xc3", 1, 0x1000, &in), F(RET) | F(WRITES_SP));
	/* jne rel8 -2: a loop on itself */
	assert_int_equal(decode(d, "\x75\xfe", 2, 0x2000, &in),
			 F(BRANCH) | F(COND) | F(HAS_TARGET));
	assert_int_equal(in.target, 0x2000);
	assert_int_equal(decode(d, "\xeb\x10", 2, 0x2000, &in), F(BRANCH) | F(HAS_TARGET));
	assert_int_equal(in.target, 0x2012);
	assert_int_equal(decode(d, "\xff\xe0", 2, 0x2000, &in),
			 F(BRANCH) | F(INDIRECT));			  /* jmp *%rax */
	assert_int_equal(decode(d, "\x48\x89\x11", 3, 0, &in), F(STORE)); /* mov %rdx,(%rcx) */
	assert_int_equal(decode(d, "\x48\x8b\x11", 3, 0, &in), 0);	  /* mov (%rcx),%rdx */
	assert_int_equal(decode(d, "\x48\x8d\x01", 3, 0, &in), 0);	  /* lea (%rcx),%rax */
	assert_int_equal(decode(d, "\x50", 1, 0, &in), F(STORE) | F(WRITES_SP));  /* push %rax */
	assert_int_equal(decode(d, "\x58", 1, 0, &in), F(WRITES_SP));		  /* pop %rax */
	assert_int_equal(decode(d, "\x48\x83\xec\x08", 4, 0, &in), F(WRITES_SP)); /* sub $8,%rsp */
	assert_int_equal(decode(d, "\x48\xff\x07", 3, 0, &in), F(STORE));	  /* incq (%rdi) */
	/* librseq's abort signature, ud1 with the signature as displacement: capstone 4 reads
	 * ud1 without its ModRM (2 bytes), then cmp $imm32, %eax (5): still 7 bytes in all */
	assert_int_equal(decode(d, "\x0f\xb9\x3d\x53\x30\x05\x53", 7, 0, &in), F(TRAP));
	assert_int_equal(in.size, 2);
	assert_int_equal(decode(d, "\x3d\x53\x30\x05\x53", 5, 2, &in), 0);
	assert_int_equal(in.size, 5);
	assert_int_equal(elfscan_decode_one(d, "\x0f", 1, 0, &in), -EILSEQ);
	assert_int_equal(elfscan_decoder_min_insn(d), 1);
	elfscan_decoder_free(d);
}

/* What a debugger runs 64-bit x86 code by: flow, how it runs, registers and memory written,
 * indirect operands and the 64-bit store that arms rseq_cs. */
static void test_decode_x86_64_runs(void **state)
{
	struct elfscan_decoder *d;
	struct elfscan_insn in;
	uint64_t ends[2];
	size_t n;

	assert_int_equal(elfscan_decoder_new(EM_X86_64, 64, false, &d), 0);
	assert_true(elfscan_decode_runs(d));
	/* mov %rax, 8(%rdi): the way rseq_cs is armed */
	decode(d, "\x48\x89\x47\x08", 4, 0, &in);
	assert_int_equal(in.flow, ELFSCAN_FLOW_NEXT);
	assert_true(in.run & ELFSCAN_RUN_PLAIN);
	assert_true(in.store);
	assert_int_equal(in.st.base, ELFSCAN_X86_RDI);
	assert_int_equal(in.st.index, ELFSCAN_NOREG);
	assert_int_equal(in.st.disp, 8);
	assert_int_equal(in.st.regs, 1u << ELFSCAN_X86_RDI);
	assert_int_equal(in.st_reg, ELFSCAN_X86_RAX);
	assert_int_equal(in.memw, ELFSCAN_MEMW_OP);
	assert_int_equal(in.memw_size, 8);
	assert_int_equal(in.writes, 0);
	/* movq $5, 0x10(%rip) */
	decode(d, "\x48\xc7\x05\x10\x00\x00\x00\x05\x00\x00\x00", 11, 0, &in);
	assert_true(in.store);
	assert_int_equal(in.st.base, ELFSCAN_X86_RIP);
	assert_int_equal(in.st_reg, ELFSCAN_NOREG);
	assert_int_equal(in.st_imm, 5);
	/* mov %fs:0x28, %rax */
	decode(d, "\x64\x48\x8b\x04\x25\x28\x00\x00\x00", 9, 0, &in);
	assert_true(in.run & ELFSCAN_RUN_PLAIN);
	assert_int_equal(in.writes, 1u << ELFSCAN_X86_RAX);
	assert_int_equal(in.memw, ELFSCAN_MEMW_NONE);
	/* jmp *0x1000(,%rax,8) */
	decode(d, "\xff\x24\xc5\x00\x10\x00\x00", 7, 0, &in);
	assert_int_equal(in.flow, ELFSCAN_FLOW_JUMP);
	assert_true(in.ind_mem);
	assert_int_equal(in.ind.index, ELFSCAN_X86_RAX);
	assert_int_equal(in.ind.scale, 8);
	assert_int_equal(in.ind.disp, 0x1000);
	/* call *%rbx: writes below the stack pointer and moves it */
	decode(d, "\xff\xd3", 2, 0, &in);
	assert_int_equal(in.flow, ELFSCAN_FLOW_CALL);
	assert_int_equal(in.ind_reg, ELFSCAN_X86_RBX);
	assert_true(in.writes & (1u << ELFSCAN_X86_RSP));
	assert_int_equal(in.memw, ELFSCAN_MEMW_ANY);
	decode(d, "\xc3", 1, 0, &in); /* ret: the word at the stack pointer */
	assert_int_equal(in.flow, ELFSCAN_FLOW_RET);
	assert_int_equal(in.ind_reg, ELFSCAN_NOREG);
	decode(d, "\xf3\xa4", 2, 0, &in); /* rep movsb */
	assert_int_equal(in.run & (ELFSCAN_RUN_REPEATS | ELFSCAN_RUN_PLAIN), ELFSCAN_RUN_REPEATS);
	assert_int_equal(in.memw, ELFSCAN_MEMW_ANY);
	decode(d, "\x0f\xa2", 2, 0, &in); /* cpuid */
	assert_true(in.run & ELFSCAN_RUN_LATE_TRAP);
	decode(d, "\x0f\x05", 2, 0, &in); /* syscall */
	assert_int_equal(in.flow, ELFSCAN_FLOW_SYSCALL);
	assert_int_equal(in.run & (ELFSCAN_RUN_KERNEL | ELFSCAN_RUN_PLAIN), ELFSCAN_RUN_KERNEL);
	decode(d, "\xf3\x48\x0f\xae\xd0", 5, 0, &in); /* wrfsbase %rax */
	assert_true(in.writes & (1u << ELFSCAN_X86_FS));
	assert_false(in.run & ELFSCAN_RUN_PLAIN);
	/* No exclusive monitor on x86: nothing opens one. */
	assert_int_equal(elfscan_exclusive_ends(d, "\x90\x90\x90\x90", 4, 0, ends, 2, &n), -EINVAL);
	assert_int_equal(elfscan_decode_one(d, "\x0f", 1, 0, &in), -EILSEQ);
	assert_int_equal(in.size, 0);
	assert_string_equal(in.text, "(bad)");
	elfscan_decoder_free(d);

	/* i386: flow from the flags, nothing more */
	assert_int_equal(elfscan_decoder_new(EM_386, 32, false, &d), 0);
	assert_false(elfscan_decode_runs(d));
	decode(d, "\xe8\xfb\x00\x00\x00", 5, 0x1000, &in);
	assert_int_equal(in.flow, ELFSCAN_FLOW_CALL);
	assert_int_equal(in.run, 0);
	elfscan_decoder_free(d);
}

static uint32_t a64(struct elfscan_decoder *d, uint32_t word, uint64_t addr,
		    struct elfscan_insn *in)
{
	unsigned char b[4] = {word, word >> 8, word >> 16, word >> 24};

	return decode(d, b, 4, addr, in);
}

static void test_decode_aarch64(void **state)
{
	struct elfscan_decoder *d;
	struct elfscan_insn in;

	assert_int_equal(elfscan_decoder_new(EM_AARCH64, 64, false, &d), 0);
	assert_int_equal(a64(d, 0xd4000001, 0, &in), F(SYSCALL));		    /* svc #0 */
	assert_int_equal(a64(d, 0xd4200000, 0, &in), F(TRAP));			    /* brk #0 */
	assert_int_equal(a64(d, 0x94000040, 0x1000, &in), F(CALL) | F(HAS_TARGET)); /* bl +0x100 */
	assert_int_equal(in.target, 0x1100);
	assert_int_equal(a64(d, 0xd65f03c0, 0, &in), F(RET)); /* ret */
	assert_int_equal(a64(d, 0x54000041, 0x1000, &in), F(BRANCH) | F(COND) | F(HAS_TARGET));
	assert_int_equal(in.target, 0x1008); /* b.ne +8 */
	assert_int_equal(a64(d, 0xb5000041, 0x1000, &in), F(BRANCH) | F(COND) | F(HAS_TARGET));
	assert_int_equal(in.target, 0x1008); /* cbnz x1, +8 */
	assert_int_equal(a64(d, 0x14000004, 0x1000, &in), F(BRANCH) | F(HAS_TARGET));
	assert_int_equal(in.target, 0x1010);				       /* b +16 */
	assert_int_equal(a64(d, 0xd61f0200, 0, &in), F(BRANCH) | F(INDIRECT)); /* br x16 */
	assert_int_equal(a64(d, 0xf90000a2, 0, &in), F(STORE));		       /* str x2, [x5] */
	assert_int_equal(a64(d, 0xf9400020, 0, &in), 0);		       /* ldr x0, [x1] */
	assert_int_equal(a64(d, 0xd10043ff, 0, &in), F(WRITES_SP));	       /* sub sp, sp, #16 */
	/* stp x29, x30, [sp, #-16]! */
	assert_int_equal(a64(d, 0xa9bf7bfd, 0, &in), F(STORE) | F(WRITES_SP));
	assert_int_equal(a64(d, 0x91000400, 0, &in), 0); /* add x0, x0, #1 */
	assert_int_equal(elfscan_decoder_min_insn(d), 4);
	elfscan_decoder_free(d);
}

static void test_decode_unsupported(void **state)
{
	struct elfscan_decoder *d = (void *)1;

	assert_int_equal(elfscan_decoder_new(EM_RISCV, 64, false, &d), -EOPNOTSUPP);
	assert_null(d);
	assert_non_null(strstr(elfscan_errmsg(), "not decoded"));
	assert_false(elfscan_decode_supported(EM_RISCV));
	assert_true(elfscan_decode_supported(EM_S390));
	elfscan_decoder_free(NULL);
}

static void test_check_list(void **state)
{
	size_t n = elfscan_audit_nchecks();

	assert_true(n >= 25);
	for (size_t i = 0; i < n; i++) {
		const struct elfscan_check *k = elfscan_audit_check(i);

		assert_int_equal(strlen(k->id), 7);
		assert_memory_equal(k->id, "RSEQ", 4);
		if (i)
			assert_true(strcmp(elfscan_audit_check(i - 1)->id, k->id) < 0);
		assert_true(*k->title && *k->description && *k->hint && *k->group);
		assert_ptr_equal(elfscan_audit_find_check(k->id), k);
	}
	assert_null(elfscan_audit_check(n));
	assert_ptr_equal(elfscan_audit_find_check("rseq032"), elfscan_audit_find_check("RSEQ032"));
	assert_null(elfscan_audit_find_check("RSEQ999"));
	assert_string_equal(elfscan_severity_name(ELFSCAN_SEV_ERROR), "error");
	assert_string_equal(elfscan_severity_name(ELFSCAN_SEV_WARNING), "warning");
	assert_string_equal(elfscan_severity_name(ELFSCAN_SEV_INFO), "info");
}

/* Audit a fixture; expect exactly one finding, of id, at audit_expect. */
static void expect_one(const char *path, const char *id, const struct elfscan_audit_opts *o)
{
	struct elfscan *es;
	struct elfscan_audit *a;
	const struct elfscan_finding *f;
	size_t cnt[3];

	assert_int_equal(elfscan_open(path, NULL, &es), 0);
	assert_int_equal(elfscan_audit(es, o, &a), 0);
	assert_int_equal(elfscan_audit_count(a), 1);
	f = elfscan_audit_finding(a, 0);
	assert_string_equal(elfscan_finding_check(f)->id, id);
	assert_int_equal(elfscan_finding_addr(f), sym(path, "audit_expect"));
	assert_non_null(elfscan_finding_cs(f));
	assert_int_equal(elfscan_finding_cs(f)->start_ip, sym(path, "rseq_start_f"));
	/* named by function and source line */
	assert_non_null(strstr(elfscan_finding_message(f), "section f+0xc (aarch64.S:"));
	assert_non_null(strstr(elfscan_finding_message(f), elfscan_finding_detail(f)));
	elfscan_audit_counts(a, cnt);
	assert_int_equal(cnt[elfscan_finding_check(f)->severity], 1);
	assert_null(elfscan_audit_finding(a, 1));
	elfscan_audit_free(a);
	elfscan_close(es);
}

static void test_audit_aarch64(void **state)
{
	expect_one(A64 "call", "RSEQ032", NULL);
	expect_one(A64 "svc", "RSEQ033", NULL);
	expect_one(A64 "sp", "RSEQ036", NULL);
	expect_one(A64 "undeclared", "RSEQ037", NULL);
}

static size_t count(const char *path, const struct elfscan_audit_opts *o, int *err)
{
	struct elfscan *es;
	struct elfscan_audit *a = NULL;
	size_t n;

	assert_int_equal(elfscan_open(path, NULL, &es), 0);
	*err = elfscan_audit(es, o, &a);
	n = elfscan_audit_count(a);
	elfscan_audit_free(a);
	elfscan_close(es);
	return n;
}

static void test_audit_options(void **state)
{
	static const char *const skip[] = {"RSEQ032", NULL};
	static const char *const only[] = {"RSEQ001", NULL};
	static const char *const bogus[] = {"RSEQ999", NULL};
	static const uint32_t regs[] = {0x53053053, 0x53053053, 0xd428bc00};
	struct elfscan_audit_opts o = {.sz = sizeof(o)};
	int err;

	assert_int_equal(count(A64 "clean", &o, &err), 0);
	assert_int_equal(err, 0);
	assert_int_equal(count(A64 "call", &o, &err), 1);
	o.disable = skip;
	assert_int_equal(count(A64 "call", &o, &err), 0);
	o.disable = NULL;
	o.enable = only;
	assert_int_equal(count(A64 "call", &o, &err), 0);
	o.enable = bogus;
	assert_int_equal(count(A64 "call", &o, &err), 0);
	assert_int_equal(err, -EINVAL);
	assert_non_null(strstr(elfscan_errmsg(), "RSEQ999"));
	o.enable = NULL;
	/* a process that registered the x86 signature (twice) and the right one: one finding */
	o.registered_sigs = regs;
	o.nregistered_sigs = 3;
	assert_int_equal(count(A64 "clean", &o, &err), 1);
	assert_int_equal(err, 0);
	o.nregistered_sigs = 0;
	/* an older, smaller opts struct is accepted */
	o.sz = offsetof(struct elfscan_audit_opts, registered_sigs);
	assert_int_equal(count(A64 "call", &o, &err), 1);
}

static void test_audit_bias(void **state)
{
	struct elfscan_audit_opts o = {.sz = sizeof(o), .bias = 0x7f0000000000};
	uint64_t abort_ip = sym(A64 "sig", "rseq_abort_f");
	const struct elfscan_finding *f;
	struct elfscan_audit *a;
	struct elfscan *es;
	char want[64];

	assert_int_equal(elfscan_open(A64 "sig", NULL, &es), 0);
	assert_int_equal(elfscan_audit(es, &o, &a), 0);
	assert_int_equal(elfscan_audit_count(a), 1);
	f = elfscan_audit_finding(a, 0);
	assert_string_equal(elfscan_finding_check(f)->id, "RSEQ010");
	assert_int_equal(elfscan_finding_addr(f), abort_ip - 4); /* file address */
	snprintf(want, sizeof(want), "abort_ip 0x%llx", (unsigned long long)(abort_ip + o.bias));
	assert_non_null(strstr(elfscan_finding_message(f), want)); /* runtime address */
	assert_non_null(strstr(elfscan_finding_message(f), "78 56 34 12"));
	elfscan_audit_free(a);
	elfscan_close(es);
	elfscan_audit_free(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decode_x86_64),  cmocka_unit_test(test_decode_x86_64_runs),
	    cmocka_unit_test(test_decode_aarch64), cmocka_unit_test(test_decode_unsupported),
	    cmocka_unit_test(test_check_list),	   cmocka_unit_test(test_audit_aarch64),
	    cmocka_unit_test(test_audit_options),  cmocka_unit_test(test_audit_bias),
	};

	return UNIT_MAIN(tests);
}
