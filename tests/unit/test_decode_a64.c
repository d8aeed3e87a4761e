// SPDX-License-Identifier: GPL-2.0-only
/*
 * The aarch64 instruction record of libelfscan on real instruction words (as an assembler
 * encodes the text in each comment): how control leaves, which registers are written, what
 * memory is written, the plain 64-bit store, the exclusive monitor, and where a
 * load-exclusive/store-exclusive sequence run as a unit ends.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elfscan-decode.h"

#define BASE 0x400000ull

static struct elfscan_decoder *dec(void)
{
	struct elfscan_decoder *d = NULL;

	assert_int_equal(elfscan_decoder_new(EM_AARCH64, 64, false, &d), 0);
	assert_true(elfscan_decode_runs(d));
	return d;
}

/* Decode one word (little endian) at addr. */
static void one(struct elfscan_decoder *d, uint32_t word, uint64_t addr, struct elfscan_insn *in)
{
	uint8_t b[4] = {word & 0xff, (word >> 8) & 0xff, (word >> 16) & 0xff, word >> 24};

	assert_int_equal(elfscan_decode_one(d, b, sizeof(b), addr, in), 0);
	assert_int_equal(in->size, 4);
}

static void test_flow_and_targets(void **state)
{
	struct elfscan_decoder *d = dec();
	struct elfscan_insn in;

	one(d, 0x54000061, BASE + 0xc, &in); /* b.ne +0xc */
	assert_int_equal(in.flow, ELFSCAN_FLOW_COND);
	assert_int_equal(in.target, BASE + 0x18);
	one(d, 0x35ffff62, BASE + 0x14, &in); /* cbnz w2, -0x14 */
	assert_int_equal(in.flow, ELFSCAN_FLOW_COND);
	assert_int_equal(in.target, BASE);
	one(d, 0x94000000, BASE + 0x3c, &in); /* bl . */
	assert_int_equal(in.flow, ELFSCAN_FLOW_CALL);
	assert_int_equal(in.target, BASE + 0x3c);
	assert_true(in.writes & (1u << 30));
	one(d, 0xd63f0120, BASE, &in); /* blr x9 */
	assert_int_equal(in.flow, ELFSCAN_FLOW_CALL);
	assert_int_equal(in.ind_reg, 9);
	assert_true(in.writes & (1u << 30));
	one(d, 0xd61f0140, BASE, &in); /* br x10 */
	assert_int_equal(in.flow, ELFSCAN_FLOW_JUMP);
	assert_int_equal(in.ind_reg, 10);
	one(d, 0xd65f03c0, BASE, &in); /* ret */
	assert_int_equal(in.flow, ELFSCAN_FLOW_RET);
	assert_int_equal(in.ind_reg, 30);
	one(d, 0xd4000001, BASE, &in); /* svc #0 */
	assert_int_equal(in.flow, ELFSCAN_FLOW_SYSCALL);
	one(d, 0xd4200000, BASE, &in); /* brk #0 */
	assert_true(in.run & ELFSCAN_RUN_KERNEL);
	assert_false(in.run & ELFSCAN_RUN_PLAIN);
	one(d, 0x91000421, BASE, &in); /* add x1, x1, #1 */
	assert_int_equal(in.flow, ELFSCAN_FLOW_NEXT);
	assert_true(in.run & ELFSCAN_RUN_PLAIN);
	assert_int_equal(in.writes, 1u << 1);
	assert_int_equal(in.memw, ELFSCAN_MEMW_NONE);
	elfscan_decoder_free(d);
}

static void test_stores_and_writes(void **state)
{
	struct elfscan_decoder *d = dec();
	struct elfscan_insn in;

	one(d, 0xf90004a4, BASE, &in); /* str x4, [x5, #8]: the way rseq_cs is armed */
	assert_true(in.store);
	assert_int_equal(in.st.base, 5);
	assert_int_equal(in.st.disp, 8);
	assert_int_equal(in.st.regs, 1u << 5);
	assert_int_equal(in.st_reg, 4);
	assert_int_equal(in.memw, ELFSCAN_MEMW_OP);
	assert_int_equal(in.memw_size, 8);
	assert_int_equal(in.writes, 0);
	one(d, 0xf90004bf, BASE, &in); /* str xzr, [x5, #8] */
	assert_true(in.store);
	assert_int_equal(in.st_reg, ELFSCAN_NOREG);
	/* str d0, [x1, #8]: 8 bytes, but from a vector register, not a general one (nor zero) */
	one(d, 0xfd000420, BASE, &in);
	assert_false(in.store);
	assert_int_equal(in.memw, ELFSCAN_MEMW_OP);
	assert_int_equal(in.memw_size, 8);
	one(d, 0x3d800420, BASE, &in); /* str q0, [x1, #16] */
	assert_false(in.store);
	assert_int_equal(in.memw_size, 16);
	one(d, 0xb9000cc4, BASE, &in); /* str w4, [x6, #12] */
	assert_false(in.store);
	assert_int_equal(in.memw, ELFSCAN_MEMW_OP);
	assert_int_equal(in.memw_size, 4);
	assert_int_equal(in.memw_op.disp, 12);
	one(d, 0x390000c4, BASE, &in); /* strb w4, [x6] */
	assert_int_equal(in.memw_size, 1);
	/* stp x29, x30, [sp, #-32]!: writes below sp and sp itself */
	one(d, 0xa9be7bfd, BASE, &in);
	assert_false(in.store);
	assert_int_equal(in.memw, ELFSCAN_MEMW_ANY);
	assert_true(in.writes & (1u << ELFSCAN_A64_SP));
	/* ldp x29, x30, [sp], #32: no memory written, three registers */
	one(d, 0xa8c27bfd, BASE, &in);
	assert_int_equal(in.memw, ELFSCAN_MEMW_NONE);
	assert_int_equal(in.writes, (1u << 29) | (1u << 30) | (1u << ELFSCAN_A64_SP));
	one(d, 0xf9400107, BASE, &in); /* ldr x7, [x8] */
	assert_int_equal(in.memw, ELFSCAN_MEMW_NONE);
	assert_int_equal(in.writes, 1u << 7);
	one(d, 0x910003eb, BASE, &in); /* mov x11, sp */
	assert_int_equal(in.writes, 1u << 11);
	elfscan_decoder_free(d);
}

static void test_exclusives(void **state)
{
	struct elfscan_decoder *d = dec();
	struct elfscan_insn in;

	one(d, 0xc85ffc01, BASE, &in); /* ldaxr x1, [x0] */
	assert_int_equal(in.run & (ELFSCAN_RUN_EXCL_LOAD | ELFSCAN_RUN_EXCL_STORE),
			 ELFSCAN_RUN_EXCL_LOAD);
	assert_int_equal(in.memw, ELFSCAN_MEMW_NONE);
	one(d, 0xc802fc01, BASE, &in); /* stlxr w2, x1, [x0] */
	assert_int_equal(in.run & (ELFSCAN_RUN_EXCL_LOAD | ELFSCAN_RUN_EXCL_STORE),
			 ELFSCAN_RUN_EXCL_STORE);
	assert_false(in.store);
	assert_int_equal(in.memw, ELFSCAN_MEMW_ANY);
	assert_true(in.writes & (1u << 2));
	one(d, 0x885f7c01, BASE, &in); /* ldxr w1, [x0] */
	assert_true(in.run & ELFSCAN_RUN_EXCL_LOAD);
	one(d, 0x88027c01, BASE, &in); /* stxr w2, w1, [x0] */
	assert_true(in.run & ELFSCAN_RUN_EXCL_STORE);
	elfscan_decoder_free(d);
}

static void put(uint8_t *code, size_t i, uint32_t word)
{
	for (int k = 0; k < 4; k++)
		code[i * 4 + k] = (uint8_t)(word >> (8 * k));
}

/* A compare-and-swap loop: it ends after its store-exclusive (at the cbnz that retries)
 * and where its compare branches out. */
static void test_exclusive_sequence_ends(void **state)
{
	static const uint32_t cas[] = {
	    0xc85ffc01, /* 0: ldaxr x1, [x0] */
	    0x91000421, /* 4: add x1, x1, #1 */
	    0xeb03003f, /* 8: cmp x1, x3 */
	    0x54000061, /* c: b.ne 0x18 */
	    0xc802fc01, /* 10: stlxr w2, x1, [x0] */
	    0x35ffff62, /* 14: cbnz w2, 0 */
	    0xd65f03c0, /* 18: ret */
	};
	uint8_t code[sizeof(cas)];
	struct elfscan_decoder *d = dec();
	uint64_t ends[4];
	size_t n;

	for (size_t i = 0; i < sizeof(cas) / 4; i++)
		put(code, i, cas[i]);
	assert_int_equal(elfscan_exclusive_ends(d, code, sizeof(code), BASE, ends, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ends[0], BASE + 0x14);
	assert_int_equal(ends[1], BASE + 0x18);
	/* Too small a room is said, not overrun. */
	assert_int_equal(elfscan_exclusive_ends(d, code, sizeof(code), BASE, ends, 1, &n), -ENOSPC);
	/* Not a load-exclusive. */
	assert_int_equal(
	    elfscan_exclusive_ends(d, code + 4, sizeof(code) - 4, BASE + 4, ends, 4, &n), -EINVAL);
	/* Cut before its store-exclusive. */
	assert_int_equal(elfscan_exclusive_ends(d, code, 0x10, BASE, ends, 4, &n), -ENOENT);

	/* A call inside the sequence: it cannot be run as a unit. */
	put(code, 1, 0x94000000); /* bl . */
	assert_int_equal(elfscan_exclusive_ends(d, code, sizeof(code), BASE, ends, 4, &n), -EINVAL);
	elfscan_decoder_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flow_and_targets),
	    cmocka_unit_test(test_stores_and_writes),
	    cmocka_unit_test(test_exclusives),
	    cmocka_unit_test(test_exclusive_sequence_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
