/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library's own threads (writer threads, tct's compressor). */
#ifndef TC_COMMON_THREADS_H
#define TC_COMMON_THREADS_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread: a process's
 * signals (Ctrl-C, SIGTERM, the command's watchdog alarm) belong to the
 * thread that runs the recording, whose handlers act on it
 * (tc_session_escape jumps out of the engine on that thread's stack). A
 * signal handled on a writer thread could do that from the wrong stack.
 * Returns pthread_create's result. */
int tc_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
