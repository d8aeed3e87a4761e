// SPDX-License-Identifier: GPL-2.0-only
/*
 * jit_cpuid: runs a few instructions from an anonymous executable mapping (code no module
 * covers, as a JIT makes): push rbx; xor eax, eax; cpuid; pop rbx; ret. Exit status 0 when
 * the generated function returned the cpuid leaf-0 maximum, as the same cpuid run here says.
 */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static const unsigned char code[] = {
    0x53,	/* push rbx */
    0x31, 0xc0, /* xor eax, eax */
    0x0f, 0xa2, /* cpuid */
    0x5b,	/* pop rbx */
    0xc3,	/* ret */
};

int main(void)
{
	unsigned int a, b, c, d, got;
	unsigned int (*fn)(void);
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	memcpy(p, code, sizeof(code));
	fn = (unsigned int (*)(void))p;
	got = fn();
	__cpuid(0, a, b, c, d);
	(void)b;
	(void)c;
	(void)d;
	if (got != a) {
		fprintf(stderr, "jit_cpuid: generated code returned %u, cpuid says %u\n", got, a);
		return 1;
	}
	return 0;
}
