/* SPDX-License-Identifier: GPL-2.0-only */
/* Temporary software breakpoints in one traced process. One registry per program, so the
 * exit paths (normal end, error, our signal handlers, atexit) can restore every byte. */
#ifndef RSEQDBG_STEP_BREAKPOINT_H
#define RSEQDBG_STEP_BREAKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The process whose memory the breakpoints patch (memfd: /proc/PID/mem, read-write). */
void rd_bp_attach(pid_t pid, int memfd);
/* Where the bytes of the program's files can be read (fn: false when addr is in none): a
 * breakpoint byte found in memory at an address where the file has another one is taken as
 * someone else's (a uprobe), and the file's byte is what removing ours puts back. */
void rd_bp_file_bytes(bool (*fn)(void *ctx, uint64_t addr, uint8_t *buf), void *ctx);
/* Plant a breakpoint at addr (idempotent). 0 or -errno. */
int rd_bp_plant(uint64_t addr);
/* Restore the original bytes at addr. 0 or -errno; -ENOENT when none is planted there. */
int rd_bp_remove(uint64_t addr);
/* Restore every planted breakpoint; async-signal-safe. Returns how many failed. */
int rd_bp_remove_all(void);
/* Restore every planted breakpoint but those keep() says to keep. Returns how many failed. */
int rd_bp_remove_unless(bool (*keep)(uint64_t addr, void *arg), void *arg);
bool rd_bp_planted(uint64_t addr);
size_t rd_bp_count(void);
/* Whether a breakpoint was ever planted at addr: a trap reported after its removal. */
bool rd_bp_was_planted(uint64_t addr);
/* Replace our breakpoint bytes in buf (read from [addr, addr+len)) by the original ones, and
 * the breakpoint instructions of other tools' uprobes by the file's instructions. */
void rd_bp_unpatch(uint64_t addr, void *buf, size_t len);
/* A forked child inherited our bytes: restore the originals in its memory. */
int rd_bp_restore_in(pid_t pid);
/* The thread whose debug registers hold the hardware breakpoints (the stepped one): those
 * planted move to it. A breakpoint goes there when another tool's uprobe sits at its
 * address (the kernel would take our trap for the uprobe's), if a slot is free. */
void rd_bp_thread(pid_t tid);
/* Whether the breakpoint at addr (planted now; with ever, or once) is a hardware one: its
 * trap (SIGTRAP, TRAP_HWBKPT) comes with the pc on addr. */
bool rd_bp_hw_at(uint64_t addr, bool ever);
/* Whether another tool's uprobe sits at addr (a breakpoint instruction in memory, another in
 * the file), our hardware breakpoint or not. */
bool rd_bp_probed(uint64_t addr);
/* How many breakpoints sat on a uprobe with no hardware slot left: their traps go to the
 * uprobe, unseen. */
unsigned long rd_bp_blind(void);
/* The address space went away (exec): forget every breakpoint without writing. */
void rd_bp_forget(void);

#endif
