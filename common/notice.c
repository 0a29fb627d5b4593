/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Notices go to the handler the program set, or to stderr (notice.h). A
 * mutex keeps lines whole when recording and writer threads notice at
 * once, and the handler and its argument a pair. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/notice.h"
#include "tracecorn/tracecorn.h"

static pthread_mutex_t notice_lock = PTHREAD_MUTEX_INITIALIZER;
static tc_notice_fn notice_fn;
static void *notice_user;

/* A process forked while another thread notices (record -j N forks its
 * checkpoints from the recording thread while writer threads run) gets the
 * lock free, not held by a thread it does not have. */
static void before_fork(void) { pthread_mutex_lock(&notice_lock); }
static void after_fork(void) { pthread_mutex_unlock(&notice_lock); }
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void install_atfork(void) {
  pthread_atfork(before_fork, after_fork, after_fork);
}

void tc_set_notice_handler(tc_notice_fn fn, void *user) {
  pthread_once(&atfork_once, install_atfork);
  pthread_mutex_lock(&notice_lock);
  notice_fn = fn;
  notice_user = user;
  pthread_mutex_unlock(&notice_lock);
}

void tc_notice(const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  pthread_once(&atfork_once, install_atfork);
  pthread_mutex_lock(&notice_lock);
  if (notice_fn)
    notice_fn(line, notice_user);
  else
    fprintf(stderr, "tracecorn: %s\n", line);
  pthread_mutex_unlock(&notice_lock);
}
