# SPDX-License-Identifier: GPL-2.0-only
# rseqdbg: one entry point for building, testing, benchmarking, installing and packaging.
#
#   make                build build/rseqdbg, build/libelfscan.a, the shared library
#                       build/libelfscan.so.VERSION (SONAME libelfscan.so.0) and libelfscan.pc
#   make check          build and run every test; TESTS="a b" only those named (test
#                       binaries, cmocka tests, integration scripts; shell patterns)
#   make check-unit     the unit tests alone (no root, ptrace or BPF needed)
#   make check-kernels  the privileged tests again on each kernel of tests/kernels/list,
#                       booted under QEMU (KERNEL_TESTS, KERNEL_TIMEOUT: tests/kernels/matrix.sh)
#   make check-kernels-arm64   the same on the arm64 kernels of tests/kernels/list-arm64,
#                       with the arm64 build (build-arm64) on an arm64 userland
#   make demo           run rseqdbg on the bundled example
#   make bench          benchmarks against readelf, gdb, bpftrace and node_exporter
#   make fuzz           run the libFuzzer target (FUZZ_TIME seconds)
#   make install        PREFIX=/usr/local DESTDIR= (LIBDIR, SYSCONFDIR, UNITDIR, COMPLETIONDIR:
#                       the library's, the exporter's /etc/default file's, the systemd
#                       unit's and bash-completion's directories);
#                       make install-strip installs the binary and shared library stripped
#   make dist           build/rseqdbg-VERSION.tar.xz, the source of the commit checked out (git)
#   make deb            the Debian packages in build/deb/, built with dpkg-buildpackage from a
#                       clean clone of the commit checked out, then checked with lintian
#   make check-package  those packages installed into a fresh Debian 12 root (debootstrap,
#                       root): the tool and a program built against libelfscan-dev run there
#   make format-check   fail on a C file .clang-format would change (make format changes it)
#   make lint           fail on a shell script ShellCheck warns about (.shellcheckrc)
#   SANITIZE=address,undefined   sanitizer build into build-san/
#   BUILD=dir           out-of-tree build directory
#   ARCH=x86|arm64      target architecture, the host's by default. ARCH=arm64 on x86_64
#                       cross-builds into build-arm64/ (build-arm64-san/ with SANITIZE) with
#                       Debian's aarch64-linux-gnu-gcc and the arm64 -dev packages
#                       (make ARCH=arm64 deps). all, tests and install build for another
#                       ARCH; check, check-kernels, demo, bench and fuzz, which run what
#                       they build, refuse it

# The version's one place is debian/changelog (its first line: "rseqdbg (VERSION) ..."): the
# packages, rseqdbg --version, the library's file name and the man pages take it from there.
VERSION    := ${shell sed -n '1s/^rseqdbg (\([^)]*\)).*/\1/p' debian/changelog 2>/dev/null}
ifeq ($(VERSION),)
$(error no version in the first line of debian/changelog)
endif
# libelfscan's ABI: the SONAME is libelfscan.so.$(SOVERSION) (package libelfscan0), its symbols
# carry the version node of libelfscan/libelfscan.map.
SOVERSION  := 0
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
# The exporter's options file, SYSCONFDIR/default/rseqdbg-exporter, is where the administrator
# looks for it whatever PREFIX the tool has.
SYSCONFDIR ?= /etc
INCDIR     ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
DATADIR    ?= $(PREFIX)/share/rseqdbg
UNITDIR    ?= $(PREFIX)/lib/systemd/system
# Where bash-completion loads a command's completion from, under its prefix or XDG_DATA_DIRS.
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
INSTALL    ?= install
# make install-strip sets it to strip what it installs, as GNU packages do
INSTALL_PROGRAM ?= $(INSTALL)

# Architectures by their kernel names, each with its machine name (uname -m, the scanner's
# name, the fixtures' folder) and Debian's cross toolchain. Another than the host's is a
# cross build: its toolchain (CROSS_COMPILE), its libraries from the multiarch directories
# the cross compiler searches, and a build directory of its own. CLANG and BPFTOOL stay the
# host's.
ARCHS         := x86 arm64
MACHINE_x86   := x86_64
MACHINE_arm64 := aarch64
CROSS_x86     := x86_64-linux-gnu-
CROSS_arm64   := aarch64-linux-gnu-
arch_of     = $(or $(firstword $(foreach a,$(ARCHS),$(if $(filter $(1),$(a) $(MACHINE_$(a))),$(a)))),$(1))
HOST_ARCH  := $(call arch_of,$(shell uname -m))
ARCH       ?= $(HOST_ARCH)
override ARCH := $(call arch_of,$(ARCH))
ifeq ($(filter $(ARCHS),$(ARCH)),)
$(error ARCH=$(ARCH) is not one of $(ARCHS))
endif
HOST_ONLY  := check check-unit check-kernels check-kernels-arm64 check-package deb demo bench fuzz
ifneq ($(ARCH),$(HOST_ARCH))
ifneq ($(filter $(HOST_ONLY),$(MAKECMDGOALS)),)
$(error make $(firstword $(filter $(HOST_ONLY),$(MAKECMDGOALS))) runs what it builds here, on $(HOST_ARCH): not with ARCH=$(ARCH) (make ARCH=$(ARCH) tests builds the tests))
endif
CROSS_COMPILE ?= $(CROSS_$(ARCH))
ifeq ($(origin CC),default)
CC         := $(CROSS_COMPILE)gcc
endif
ifeq ($(origin LD),default)
LD         := $(CROSS_COMPILE)ld
endif
ifeq ($(origin AR),default)
AR         := $(CROSS_COMPILE)ar
endif
OBJCOPY    ?= $(CROSS_COMPILE)objcopy
endif
BUILD_ARCH := $(if $(filter-out x86,$(ARCH)),-$(ARCH))

CC         ?= cc
CLANG      ?= clang
BPFTOOL    ?= bpftool
OBJCOPY    ?= objcopy
FUZZ_TIME  ?= 60

ifneq ($(SANITIZE),)
BUILD      ?= build$(BUILD_ARCH)-san
SANFLAGS   := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD      ?= build$(BUILD_ARCH)
SANFLAGS   :=
endif

WERROR     := $(if $(CI),-Werror,)
CFLAGS     ?= -O2 -g
WARNFLAGS  := -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow -Wformat=2 \
	      -Wno-unused-parameter -fno-common $(WERROR)
CPPFLAGS   += -D_GNU_SOURCE -DRSEQDBG_VERSION='"$(VERSION)"' -DRSEQDBG_DATADIR='"$(DATADIR)"' \
	      -Ilibelfscan -Irseqdbg -Ibpf -I$(BUILD)/bpf -I/usr/include/capstone -MMD -MP
ALL_CFLAGS := $(CFLAGS) $(WARNFLAGS) $(SANFLAGS) -std=gnu11
LIBS       := -lbpf -ldw -lelf -lzstd -lcapstone -lmicrohttpd -lgnutls -lyaml -lcrypt -lz -lpthread
# What libelfscan itself links (libelfscan.pc's Requires.private names the same)
LIB_LIBS   := -ldw -lelf -lcapstone -lz
LDFLAGS    += $(SANFLAGS)

LIB_SRCS   := $(sort $(wildcard libelfscan/*.c))
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIB_HDRS   := $(sort $(wildcard libelfscan/elfscan*.h))
LIB_SO     := libelfscan.so.$(VERSION)
LIB_SONAME := libelfscan.so.$(SOVERSION)
MAN_PAGES  := $(sort $(wildcard man/*.[0-9]))
# rseqdbg/arch/ holds one file per architecture, named after it (x86.c, arm64.c): the target's
# is built. libelfscan decodes every architecture, whatever the target.
CLI_SRCS   := $(sort $(filter-out rseqdbg/arch/%,$(wildcard rseqdbg/*.c rseqdbg/*/*.c)) \
		rseqdbg/arch/$(ARCH).c)
CLI_OBJS   := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
BPF_SRCS   := $(sort $(wildcard bpf/*.bpf.c))
BPF_OBJS   := $(BPF_SRCS:%.bpf.c=$(BUILD)/%.bpf.o)
BPF_SKELS  := $(BPF_SRCS:%.bpf.c=$(BUILD)/%.skel.h) $(BUILD)/bpf/rseqtrace-np.skel.h
UNIT_SRCS  := $(sort $(wildcard tests/unit/test_*.c))
TOOL_SRCS  := $(sort $(wildcard tests/tools/*.c))
# A workload's or example's assembly is x86's beside its .c, another architecture's in
# the subdirectory named after it. A test program whose x86 code (a .S, inline assembly,
# x86 registers in its C, x86 instruction bytes given to the host's decoder) has no version
# for ARCH is not built for it.
WL_ASM     := $(if $(filter-out x86,$(ARCH)),$(ARCH)/)
# A fixture folder is named after the machine the scanner prints (x86_64, aarch64, ...).
FIX_ASM    := $(if $(filter-out x86,$(ARCH)),$(MACHINE_$(ARCH))/)
WL_C       := $(sort $(wildcard tests/workloads/*.c examples/*.c))
ifneq ($(ARCH),x86)
WL_S_X86   := $(wildcard tests/workloads/*.S examples/*.S)
WL_S_ARCH  := $(subst /$(ARCH)/,/,$(wildcard tests/workloads/$(ARCH)/*.S examples/$(ARCH)/*.S))
X86_ONLY_C := tests/workloads/jit_cpuid.c tests/tools/naive_step.c tests/unit/test_planner.c
X86_ONLY   := $(patsubst %.S,%.c,$(filter-out $(WL_S_ARCH),$(WL_S_X86))) \
	      $(filter-out $(patsubst %.S,%.c,$(WL_S_ARCH)),$(X86_ONLY_C))
WL_C       := $(filter-out $(X86_ONLY),$(WL_C))
TOOL_SRCS  := $(filter-out $(X86_ONLY),$(TOOL_SRCS))
UNIT_SRCS  := $(filter-out $(X86_ONLY),$(UNIT_SRCS))
endif
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_BINS  := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tests/tools/%)
# tests/workloads/libNAME.c is a shared object, libNAME.so, that programs link or load.
WL_LIB_C   := $(wildcard tests/workloads/lib*.c)
WL_C       := $(filter-out $(WL_LIB_C),$(WL_C))
WL_BINS    := $(patsubst %.c,$(BUILD)/%,$(WL_C)) $(BUILD)/tests/workloads/pcpu_lock_dlopen
WL_LIBS    := $(patsubst %.c,$(BUILD)/%.so,$(WL_LIB_C))

.PHONY: FORCE all check check-unit check-kernels check-kernels-arm64 check-package demo bench fuzz \
	install install-strip uninstall dist deb clean deps tests format format-check lint
.DELETE_ON_ERROR:

all: $(BUILD)/rseqdbg $(BUILD)/libelfscan.a $(BUILD)/$(LIB_SO) $(BUILD)/libelfscan.pc \
	$(BUILD)/rseqdbg-exporter.service $(MAN_PAGES:%=$(BUILD)/%)

# --- library ---------------------------------------------------------------
# The archive and the shared library export only what the public headers declare
# (elfscan_*): the objects are compiled with hidden visibility (and position-independent, for
# the shared library); for the archive they are linked into one and their hidden symbols made
# local, the shared library's version script lists elfscan_* alone. The unit tests link the
# objects themselves, internal functions included; rseqdbg links the archive.
$(LIB_OBJS): ALL_CFLAGS += -fvisibility=hidden -fPIC
# Objects built before the shared library (not -fPIC, older than its version script) are
# built again.
$(LIB_OBJS): libelfscan/libelfscan.map

$(BUILD)/libelfscan.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	$(LD) -r -o $(BUILD)/obj/libelfscan.o $^
	$(OBJCOPY) --localize-hidden $(BUILD)/obj/libelfscan.o
	rm -f $@
	$(AR) rcs $@ $(BUILD)/obj/libelfscan.o

# Every undefined symbol must come from the libraries it links (-z defs), but in a sanitizer
# build, whose runtime only a program links.
$(BUILD)/$(LIB_SO): $(LIB_OBJS) libelfscan/libelfscan.map
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=libelfscan/libelfscan.map $(if $(SANITIZE),,-Wl,-z,defs) \
		-o $@ $(LIB_OBJS) $(LIB_LIBS)

# Regenerated on every build so that it names the PREFIX of this make invocation.
$(BUILD)/libelfscan.pc: libelfscan/libelfscan.pc.in FORCE
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' $< > $@.tmp
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The service runs the rseqdbg this make invocation installs, with the options of the file
# it installs in SYSCONFDIR/default.
$(BUILD)/rseqdbg-exporter.service: scripts/rseqdbg-exporter.service.in FORCE
	@mkdir -p $(@D)
	sed -e 's|@BINDIR@|$(BINDIR)|' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|' $< > $@.tmp
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The man pages as installed: the version in their title line is the one of debian/changelog,
# the data directory (written /usr/local/share/rseqdbg, make install's default) DATADIR, and
# the exporter's options file in SYSCONFDIR. Regenerated on every build, as the paths may change.
$(BUILD)/man/%: man/% debian/changelog FORCE
	@mkdir -p $(@D)
	sed -e '/^\.TH /s/"rseqdbg [^"]*"/"rseqdbg $(VERSION)"/' \
	    -e 's|/usr/local/share/rseqdbg|$(DATADIR)|g' \
	    -e 's|/etc/default/rseqdbg\\-exporter|$(SYSCONFDIR)/default/rseqdbg\\-exporter|g' \
	    $< > $@.tmp
	cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

FORCE:

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

# --- BPF objects and skeletons ---------------------------------------------
# bpf/vmlinux.h holds the few kernel types the programs use, relocated by CO-RE at load
# time: the object does not depend on the kernel of the build machine.
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ibpf -c $< -o $@

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# The tracer's object again, its uprobe program unpreempted (kfuncs of 6.10+): the tracer
# loads these bytes where the kernel has the kfuncs, through the one skeleton above.
$(BUILD)/bpf/rseqtrace-np.bpf.o: bpf/rseqtrace.bpf.c $(wildcard bpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DRT_NOPREEMPT -Ibpf -c $< -o $@

$(BUILD)/bpf/rseqtrace-np.skel.h: $(BUILD)/bpf/rseqtrace-np.bpf.o
	$(BPFTOOL) gen skeleton $< name rseqtrace_np_bpf > $@

$(CLI_OBJS): $(BPF_SKELS)

# --- command-line tool -----------------------------------------------------
$(BUILD)/rseqdbg: $(CLI_OBJS) $(BUILD)/libelfscan.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(BUILD)/libelfscan.a $(LIBS)

# --- tests -----------------------------------------------------------------
# The fixture directory is compiled in: a unit test binary runs from any directory.
$(BUILD)/tests/test_%: tests/unit/test_%.c $(wildcard tests/unit/*.h) $(LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DFIXTURE_DIR='"$(CURDIR)/tests/fixtures"' $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< \
		$(EXTRA_OBJS) $(LIB_OBJS) -lcmocka $(LIBS)

# Unit tests of the tool link the objects of the code under test.
PLANNER_OBJS = $(BUILD)/obj/rseqdbg/step/planner.o
TOOL_UNIT_OBJS = $(addprefix $(BUILD)/obj/rseqdbg/,trace/summary.o trace/features.o json.o symfmt.o)
$(BUILD)/tests/test_summary: $(TOOL_UNIT_OBJS)
$(BUILD)/tests/test_summary: EXTRA_OBJS = $(TOOL_UNIT_OBJS)
METRICS_OBJS = $(TOOL_UNIT_OBJS) $(BUILD)/obj/rseqdbg/exporter/metrics.o
$(BUILD)/tests/test_metrics: $(METRICS_OBJS)
$(BUILD)/tests/test_metrics: EXTRA_OBJS = $(METRICS_OBJS)
NEGOTIATE_OBJS = $(BUILD)/obj/rseqdbg/exporter/negotiate.o
WEBCONFIG_OBJS = $(BUILD)/obj/rseqdbg/exporter/webconfig.o
$(BUILD)/tests/test_webconfig: $(WEBCONFIG_OBJS)
$(BUILD)/tests/test_webconfig: EXTRA_OBJS = $(WEBCONFIG_OBJS)
$(BUILD)/tests/test_negotiate: $(NEGOTIATE_OBJS)
$(BUILD)/tests/test_negotiate: EXTRA_OBJS = $(NEGOTIATE_OBJS)
$(BUILD)/tests/test_planner: $(PLANNER_OBJS)
$(BUILD)/tests/test_planner: EXTRA_OBJS = $(PLANNER_OBJS)

$(BUILD)/tests/tools/%: tests/tools/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< -lelf -lpthread

# Workloads and examples: one C driver per program, plus an optional same-named .S (in
# $(WL_ASM) for ARCH).
$(BUILD)/tests/workloads/% $(BUILD)/examples/%: CFLAGS_WL = -O2 -g -Wall -Wextra $(WERROR)
$(BUILD)/tests/workloads/%: tests/workloads/%.c $(wildcard tests/workloads/$(WL_ASM)*.S \
		tests/workloads/$(WL_ASM)*.h tests/workloads/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_WL) -Itests/workloads -o $@ $< $(wildcard tests/workloads/$(WL_ASM)$*.S) -lpthread
$(BUILD)/examples/%: examples/%.c $(wildcard examples/$(WL_ASM)*.S examples/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_WL) -Iexamples -o $@ $< $(wildcard examples/$(WL_ASM)$*.S) -lpthread

# The sections again, as a shared object a workload loads with dlopen.
WL_SO := $(BUILD)/tests/workloads/librseq_workload.so
$(WL_SO): CFLAGS_WL = -O2 -g -Wall -Wextra $(WERROR)
$(WL_SO): tests/workloads/$(WL_ASM)rseq_workload.S tests/workloads/rseq_workload.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_WL) -shared -fPIC -Wl,-Bsymbolic -Itests/workloads -o $@ $<
# A workload that links that shared object (found beside it at run time), so the loader maps
# it before main.
$(BUILD)/tests/workloads/linked_host: tests/workloads/linked_host.c tests/workloads/rseq_workload.h \
		$(WL_SO)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_WL) -Itests/workloads -o $@ $< -L$(@D) -lrseq_workload \
		-Wl,-rpath,'$$ORIGIN' -lpthread

# The workloads' shared objects, and their programs: pcpu_lock links libpcpu_lock.so (found
# beside it), pcpu_lock_dlopen is the same program loading it with dlopen.
$(BUILD)/tests/workloads/lib%.so: CFLAGS_WL = -O2 -g -Wall -Wextra $(WERROR)
$(BUILD)/tests/workloads/lib%.so: tests/workloads/lib%.c $(wildcard tests/workloads/$(WL_ASM)*.h \
		tests/workloads/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_WL) -shared -fPIC -Itests/workloads -o $@ $<
$(BUILD)/tests/workloads/pcpu_lock: tests/workloads/pcpu_lock.c tests/workloads/pcpu_lock.h \
		$(BUILD)/tests/workloads/libpcpu_lock.so
	$(CC) $(CFLAGS_WL) -Itests/workloads -o $@ $< -L$(@D) -lpcpu_lock -Wl,-rpath,'$$ORIGIN' \
		-lpthread
$(BUILD)/tests/workloads/pcpu_lock_dlopen: tests/workloads/pcpu_lock.c tests/workloads/pcpu_lock.h \
		$(BUILD)/tests/workloads/libpcpu_lock.so
	$(CC) $(CFLAGS_WL) -DPCPU_LOCK_DLOPEN -Itests/workloads -o $@ $< -Wl,-rpath,'$$ORIGIN' \
		-ldl -lpthread

# The static programs of audit_pid's RSEQ012 case, registered with another signature than
# their section carries (-bad) and with the same (-clean).
FIX_REG    := $(BUILD)/tests/fixtures/rseq012-registered-bad \
	      $(BUILD)/tests/fixtures/rseq012-registered-clean
$(BUILD)/tests/fixtures/rseq012-registered-%: tests/fixtures/audit/$(FIX_ASM)rseq012-registered.S \
		tests/fixtures/audit/audit.inc
	@mkdir -p $(@D)
	$(CC) -c -g $(if $(filter bad,$*),-DBAD) -Itests/fixtures/audit -o $@.o $<
	$(CROSS_COMPILE)ld --build-id=none -o $@ $@.o

tests: all $(UNIT_BINS) $(TOOL_BINS) $(WL_BINS) $(WL_SO) $(WL_LIBS) $(FIX_REG)

check: deps
	$(MAKE) tests
	BUILD=$(BUILD) TESTS="$(TESTS)" tests/run.sh

# The unit tests alone: they need no root, ptrace or BPF (the Debian build runs them).
check-unit: $(UNIT_BINS)
	BUILD=$(BUILD) TESTS='test_*' tests/run.sh

# Installing QEMU may fail (not root, offline): the matrix then says why it cannot run.
check-kernels:
	-scripts/deps.sh kernels
	$(MAKE) tests
	BUILD=$(BUILD) tests/kernels/matrix.sh

# The arm64 kernels of tests/kernels/list-arm64 under qemu-system-aarch64, on the arm64 build.
check-kernels-arm64:
	-scripts/deps.sh kernels-arm64
	$(MAKE) ARCH=arm64 tests
	RSEQDBG_KERNEL_ARCH=arm64 BUILD=build-arm64 tests/kernels/matrix.sh

# --- fuzzing ---------------------------------------------------------------
$(BUILD)/fuzz/fuzz_open_mem: tests/fuzz/fuzz_open_mem.c $(LIB_SRCS) $(wildcard libelfscan/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_SRCS) $(LIBS)

fuzz:
	scripts/deps.sh fuzz
	$(MAKE) $(BUILD)/fuzz/fuzz_open_mem
	scripts/fuzz.sh $(BUILD)/fuzz/fuzz_open_mem $(FUZZ_TIME)

# --- demo, benchmarks --------------------------------------------------------
demo: deps
	$(MAKE) all $(WL_BINS)
	BUILD=$(BUILD) scripts/demo.sh

bench:
	scripts/deps.sh bench
	$(MAKE) tests
	BUILD=$(BUILD) scripts/bench.sh

# A cross build's toolchain and libraries are the group named after its ARCH.
deps:
	scripts/deps.sh$(if $(filter-out $(HOST_ARCH),$(ARCH)), $(ARCH))

# --- install -----------------------------------------------------------------
# The exporter's default file is an administrator's: installed where none is, removed by
# uninstall only as installed. Without DESTDIR, ldconfig makes the new library known.
EXPORTER_DEFAULT = $(DESTDIR)$(SYSCONFDIR)/default/rseqdbg-exporter
install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(DATADIR)/schemas \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(COMPLETIONDIR)
	$(INSTALL_PROGRAM) -m 755 $(BUILD)/rseqdbg $(DESTDIR)$(BINDIR)/rseqdbg
	$(INSTALL_PROGRAM) -m 644 $(BUILD)/$(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_SO)
	ln -sf $(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libelfscan.so
	$(INSTALL) -m 644 $(BUILD)/libelfscan.a $(DESTDIR)$(LIBDIR)/libelfscan.a
	$(INSTALL) -m 644 $(BUILD)/libelfscan.pc $(DESTDIR)$(LIBDIR)/pkgconfig/libelfscan.pc
	$(INSTALL) -m 644 $(LIB_HDRS) $(DESTDIR)$(INCDIR)/
	$(INSTALL) -m 644 $(addprefix $(BUILD)/,$(filter %.1,$(MAN_PAGES))) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(addprefix $(BUILD)/,$(filter %.3,$(MAN_PAGES))) $(DESTDIR)$(MANDIR)/man3/
	$(INSTALL) -m 644 gdb/rseqdbg-gdb.py $(DESTDIR)$(DATADIR)/
	$(INSTALL) -m 644 $(wildcard schemas/*.json) $(DESTDIR)$(DATADIR)/schemas/
	$(INSTALL) -m 644 $(BUILD)/rseqdbg-exporter.service $(DESTDIR)$(UNITDIR)/
	$(INSTALL) -m 644 completions/rseqdbg $(DESTDIR)$(COMPLETIONDIR)/rseqdbg
	[ -e $(EXPORTER_DEFAULT) ] || $(INSTALL) -m 644 scripts/rseqdbg-exporter.default \
		$(EXPORTER_DEFAULT)
	$(if $(DESTDIR),,-ldconfig)

install-strip:
	$(MAKE) INSTALL_PROGRAM='$(INSTALL) -s --strip-program=$(CROSS_COMPILE)strip' install

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rseqdbg $(DESTDIR)$(LIBDIR)/libelfscan.a \
	      $(DESTDIR)$(LIBDIR)/$(LIB_SO) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
	      $(DESTDIR)$(LIBDIR)/libelfscan.so $(DESTDIR)$(LIBDIR)/pkgconfig/libelfscan.pc
	rm -f $(addprefix $(DESTDIR)$(INCDIR)/,$(notdir $(LIB_HDRS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES))))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(filter %.3,$(MAN_PAGES))))
	rm -rf $(DESTDIR)$(DATADIR)
	rm -f $(DESTDIR)$(UNITDIR)/rseqdbg-exporter.service
	rm -f $(DESTDIR)$(COMPLETIONDIR)/rseqdbg
	! cmp -s scripts/rseqdbg-exporter.default $(EXPORTER_DEFAULT) || rm -f $(EXPORTER_DEFAULT)

# --- source tarball, Debian packages ---------------------------------------
# What git holds at HEAD: changes not committed are left out, and said so.
dist:
	@mkdir -p $(BUILD)
	@git diff --quiet HEAD || echo "make dist: uncommitted changes are not in the tarball (HEAD is)" >&2
	git archive --format=tar --prefix=rseqdbg-$(VERSION)/ HEAD | xz -T1 > $(BUILD)/rseqdbg-$(VERSION).tar.xz.tmp
	mv $(BUILD)/rseqdbg-$(VERSION).tar.xz.tmp $(BUILD)/rseqdbg-$(VERSION).tar.xz

deb:
	scripts/deps.sh package
	scripts/deb.sh $(BUILD)/deb

# Root and the Debian mirror: the test skips (fails with RSEQDBG_REQUIRE_ALL=1) without them.
check-package:
	-scripts/deps.sh package
	$(MAKE) tests
	BUILD=$(BUILD) TESTS=package tests/run.sh

# Every C source and header but the generated bpf/vmlinux.h.
FORMAT_SRCS = $(sort $(LIB_SRCS) $(wildcard rseqdbg/*.c rseqdbg/*/*.c libelfscan/*.h rseqdbg/*.h \
		rseqdbg/*/*.h bpf/*.bpf.c tests/unit/*.[ch] tests/tools/*.[ch] \
		tests/workloads/*.[ch] tests/workloads/*/*.[ch] tests/fuzz/*.[ch]) \
		$(filter-out bpf/vmlinux.h,$(wildcard bpf/*.h)))

format:
	clang-format -i $(FORMAT_SRCS)

format-check:
	scripts/deps.sh format
	clang-format --dry-run -Werror $(FORMAT_SRCS)

# Every shell script: the tests and their library, the kernel matrix, scripts/, CI's and the
# bash completion.
SHELL_SRCS = $(sort $(wildcard tests/*.sh tests/integration/*.sh tests/kernels/*.sh scripts/*.sh) \
		.ci/run completions/rseqdbg)

lint:
	scripts/deps.sh lint
	shellcheck -S warning $(SHELL_SRCS)

clean:
	rm -rf build build-san build-arm64 build-arm64-san

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
