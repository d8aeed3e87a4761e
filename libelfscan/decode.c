// SPDX-License-Identifier: LGPL-2.1-or-later
/* Decode instructions with capstone into struct elfscan_insn. The machine table (arch.c)
 * names each machine's backend (decode-ARCH.c); what follows holds for every machine. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode-backend.h"
#include "internal.h"

bool elfscan_decode_supported(uint16_t machine)
{
	return es_machine_isa(machine) != NULL;
}

int elfscan_decoder_new(uint16_t machine, int elfclass, bool big_endian,
			struct elfscan_decoder **res)
{
	const struct es_isa *isa = es_machine_isa(machine);
	struct es_isa_mode m = {.min_insn = 4};
	struct elfscan_decoder *d;
	const char *name = es_machine_name(machine);

	*res = NULL;
	if (!isa && name)
		return es_err(EOPNOTSUPP, "%s: not decoded (capstone %d.%d)", name, CS_API_MAJOR,
			      CS_API_MINOR);
	if (!isa)
		return es_err(EOPNOTSUPP, "EM_%u: not decoded (capstone %d.%d)", machine,
			      CS_API_MAJOR, CS_API_MINOR);
	m.mode = big_endian ? CS_MODE_BIG_ENDIAN : CS_MODE_LITTLE_ENDIAN;
	isa->mode(machine, elfclass, big_endian, &m);
	d = calloc(1, sizeof(*d));
	if (!d)
		return es_err(ENOMEM, "out of memory");
	if (cs_open(m.arch, m.mode, &d->h) != CS_ERR_OK) {
		free(d);
		return es_err(EOPNOTSUPP, "capstone cannot decode machine %u", machine);
	}
	cs_option(d->h, CS_OPT_DETAIL, CS_OPT_ON);
	d->ci = cs_malloc(d->h);
	d->isa = isa;
	d->min_insn = m.min_insn;
	d->runs = m.runs;
	if (!d->ci || (isa->init && isa->init(d) < 0)) {
		elfscan_decoder_free(d);
		return es_err(ENOMEM, "out of memory");
	}
	*res = d;
	return 0;
}

int elfscan_decoder_for(const struct elfscan *es, struct elfscan_decoder **res)
{
	bool be = elfscan_big_endian(es);

	/* BE8 images (linked big-endian ARMv6+) keep instructions little-endian */
	if (elfscan_machine(es) == EM_ARM && (es->ehdr.e_flags & EF_ARM_BE8))
		be = false;
	return elfscan_decoder_new(elfscan_machine(es), elfscan_class(es), be, res);
}

void elfscan_decoder_free(struct elfscan_decoder *d)
{
	if (!d)
		return;
	if (d->ci)
		cs_free(d->ci, 1);
	cs_close(&d->h);
	free(d->priv);
	free(d);
}

unsigned int elfscan_decoder_min_insn(const struct elfscan_decoder *d)
{
	return d->min_insn;
}

bool elfscan_decode_runs(const struct elfscan_decoder *d)
{
	return d->runs;
}

bool es_starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

bool es_starts_any(const char *s, const char *const *prefixes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (es_starts(s, prefixes[i]))
			return true;
	return false;
}

bool es_cs_group(const cs_insn *ci, uint8_t g)
{
	const cs_detail *dt = ci->detail;

	for (int i = 0; i < dt->groups_count; i++)
		if (dt->groups[i] == g)
			return true;
	return false;
}

/* Registers the instruction writes, explicit and implicit, when capstone knows them. */
bool es_cs_writes(struct elfscan_decoder *d, const cs_insn *ci, unsigned int reg1,
		  unsigned int reg2)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (cs_regs_access(d->h, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		for (int i = 0; i < ci->detail->regs_write_count; i++)
			if (ci->detail->regs_write[i] == reg1 || ci->detail->regs_write[i] == reg2)
				return true;
		return false;
	}
	for (int i = 0; i < nwr; i++)
		if (wr[i] == reg1 || wr[i] == reg2)
			return true;
	return false;
}

static void no_mem(struct elfscan_mem *m)
{
	m->seg = m->base = m->index = ELFSCAN_NOREG;
}

/* How control leaves it, from the flags, for a backend that says no more. */
static enum elfscan_flow flow_of(uint32_t flags)
{
	if (flags & ELFSCAN_INSN_RET)
		return ELFSCAN_FLOW_RET;
	if (flags & ELFSCAN_INSN_CALL)
		return ELFSCAN_FLOW_CALL;
	if (flags & ELFSCAN_INSN_BRANCH)
		return flags & ELFSCAN_INSN_COND ? ELFSCAN_FLOW_COND : ELFSCAN_FLOW_JUMP;
	return flags & ELFSCAN_INSN_SYSCALL ? ELFSCAN_FLOW_SYSCALL : ELFSCAN_FLOW_NEXT;
}

int elfscan_decode_one(struct elfscan_decoder *d, const void *buf, size_t len, uint64_t addr,
		       struct elfscan_insn *insn)
{
	const uint8_t *p = buf;
	uint64_t a = addr;
	cs_insn *ci = d->ci;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->ind_reg = insn->st_reg = ELFSCAN_NOREG;
	no_mem(&insn->ind);
	no_mem(&insn->st);
	no_mem(&insn->memw_op);
	if (!cs_disasm_iter(d->h, &p, &len, &a, ci)) {
		strcpy(insn->text, "(bad)");
		return -EILSEQ;
	}
	insn->size = ci->size;
	snprintf(insn->text, sizeof(insn->text), "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "",
		 ci->op_str);
	d->isa->classify(d, ci, insn);
	if (!d->runs)
		insn->flow = flow_of(insn->flags);
	return 0;
}

int elfscan_decode_range(struct elfscan_decoder *d, const struct elfscan *es, uint64_t lo,
			 uint64_t hi, struct elfscan_insn **insns, size_t *n)
{
	struct elfscan_insn *v = NULL, *nv;
	size_t cap = 0, cnt = 0, len, off = 0;
	unsigned char *buf;
	int err = 0;

	*insns = NULL;
	*n = 0;
	if (hi <= lo || hi - lo > (1u << 26))
		return es_err(EINVAL, "cannot decode [0x%llx, 0x%llx)", (unsigned long long)lo,
			      (unsigned long long)hi);
	/* Up to 15 more bytes, as many as the file has, so that an instruction straddling hi
	 * decodes whole. */
	buf = malloc(hi - lo + 15);
	if (!buf)
		return es_err(ENOMEM, "out of memory");
	for (len = hi - lo + 15;; len--) {
		if (!elfscan_read(es, lo, buf, len))
			break;
		if (len == hi - lo) {
			free(buf);
			return es_err(EFAULT, "bytes at 0x%llx..0x%llx are not in the file",
				      (unsigned long long)lo, (unsigned long long)hi);
		}
	}
	while (lo + off < hi) {
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = es_err(ENOMEM, "out of memory");
				goto out;
			}
			v = nv;
		}
		if (elfscan_decode_one(d, buf + off, len - off, lo + off, &v[cnt])) {
			err = es_err(EILSEQ, "no valid instruction at 0x%llx",
				     (unsigned long long)(lo + off));
			break;
		}
		off += v[cnt++].size;
	}
out:
	free(buf);
	if (err && err != -EILSEQ) {
		free(v);
		return err;
	}
	*insns = v;
	*n = cnt;
	return err;
}

int elfscan_exclusive_ends(struct elfscan_decoder *d, const void *code, size_t len, uint64_t addr,
			   uint64_t *ends, size_t max, size_t *n)
{
	const uint8_t *p = code;
	uint64_t out[16];
	size_t nout = 0, off;
	struct elfscan_insn in;
	int ret;

	*n = 0;
	ret = elfscan_decode_one(d, p, len, addr, &in);
	if (ret)
		return ret;
	if (!(in.run & ELFSCAN_RUN_EXCL_LOAD))
		return es_err(EINVAL, "%#" PRIx64 ": no load-exclusive", addr);
	off = in.size;
	for (size_t k = 1; k <= 16 && off + d->min_insn <= len; k++) {
		uint64_t at = addr + off, end;

		ret = elfscan_decode_one(d, p + off, len - off, at, &in);
		if (ret)
			return ret;
		off += in.size;
		end = at + in.size;
		if (in.run & ELFSCAN_RUN_EXCL_STORE) {
			/* The instruction after the store-exclusive, then the branches out. */
			if (!max)
				return -ENOSPC;
			ends[(*n)++] = end;
			for (size_t i = 0; i < nout; i++) {
				bool seen = out[i] >= addr && out[i] <= at;

				for (size_t j = 0; j < *n && !seen; j++)
					seen = ends[j] == out[i];
				if (seen)
					continue;
				if (*n == max)
					return -ENOSPC;
				ends[(*n)++] = out[i];
			}
			return 0;
		}
		if ((in.run & ELFSCAN_RUN_KERNEL) ||
		    (in.flow != ELFSCAN_FLOW_NEXT && in.flow != ELFSCAN_FLOW_JUMP &&
		     in.flow != ELFSCAN_FLOW_COND) ||
		    (in.flow != ELFSCAN_FLOW_NEXT && !(in.flags & ELFSCAN_INSN_HAS_TARGET)))
			return es_err(EINVAL,
				      "%#" PRIx64 ": %s inside the exclusive sequence at %#" PRIx64,
				      at, in.text, addr);
		if (in.flow != ELFSCAN_FLOW_NEXT)
			out[nout++] = in.target;
	}
	return -ENOENT;
}
