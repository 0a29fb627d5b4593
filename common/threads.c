/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common/threads.h"

#include <signal.h>

int tc_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(thread, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}
