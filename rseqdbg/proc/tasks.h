/* SPDX-License-Identifier: GPL-2.0-only */
/* The threads of a live process, as /proc/PID/task lists them. */
#ifndef RSEQDBG_PROC_TASKS_H
#define RSEQDBG_PROC_TASKS_H

#include <stddef.h>
#include <sys/types.h>

/* The thread ids of process pid in the order /proc lists them, in *tids (free() it; NULL when
 * *n is 0). A thread may exit or another start meanwhile. 0, or -errno: -ENOENT when there is
 * no such process. */
int rd_proc_threads(pid_t pid, pid_t **tids, size_t *n);
/* A thread of process pid that has not exited, to read the process's memory and mappings
 * through: pid itself while the main thread runs, else another thread. Once the main thread
 * has exited (pthread_exit in main), /proc/PID/maps reads empty and /proc/PID/mem fails
 * while /proc/TID/ of a live thread still shows the process. 0, or -errno: -ESRCH when no
 * thread is left (a zombie), -ENOENT when there is no such process. */
int rd_proc_live_thread(pid_t pid, pid_t *tid);

#endif
