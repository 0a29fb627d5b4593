/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signals and threads (issue 15): pthread_kill() to a second thread that
 * is blocked on a mutex runs the handler on that thread (the wait goes on
 * afterwards); kill() of the process from the second thread runs the
 * handler on the main thread, which Linux picks first when it does not
 * block the signal; a signal the target blocks waits until it unblocks
 * it; sigwait() and sigsuspend() in the main thread take signals another
 * thread sends. The output equals Linux's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_t main_id, worker_id;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int usr1_hits, usr1_in_worker = -1;
static volatile int usr2_hits, usr2_in_main = -1;
static volatile int hup_hits, hup_in_worker = -1, hup_before_unblock = -1;
static volatile int worker_saw;

static void on_usr1(int s) {
  (void)s;
  usr1_hits++;
  usr1_in_worker = pthread_equal(pthread_self(), worker_id);
}

static void on_usr2(int s) {
  (void)s;
  usr2_hits++;
  usr2_in_main = pthread_equal(pthread_self(), main_id);
}

static void on_hup(int s) {
  (void)s;
  hup_hits++;
  hup_in_worker = pthread_equal(pthread_self(), worker_id);
}

static void *worker(void *arg) {
  (void)arg;
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hup, NULL);
  pthread_mutex_lock(&lock); /* main holds it: blocks here */
  worker_saw = usr1_hits;
  pthread_mutex_unlock(&lock);
  pthread_kill(pthread_self(), SIGHUP); /* blocked: stays pending */
  hup_before_unblock = hup_hits;
  pthread_sigmask(SIG_UNBLOCK, &hup, NULL); /* runs now */
  kill(getpid(), SIGUSR2); /* process-directed: the main thread takes it */
  return NULL;
}

static void *send_term(void *arg) {
  (void)arg;
  kill(getpid(), SIGTERM); /* every thread blocks it: sigwait takes it */
  return NULL;
}

static void *send_usr2(void *arg) {
  (void)arg;
  pthread_kill(main_id, SIGUSR2); /* ends the main thread's sigsuspend */
  return NULL;
}

int main(void) {
  main_id = pthread_self();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_handler = on_usr2;
  sigaction(SIGUSR2, &sa, NULL);
  sa.sa_handler = on_hup;
  sigaction(SIGHUP, &sa, NULL);
  pthread_mutex_lock(&lock);
  pthread_create(&worker_id, NULL, worker, NULL);
  usleep(1000); /* let the worker block on the mutex */
  pthread_kill(worker_id, SIGUSR1);
  usleep(1000);
  pthread_mutex_unlock(&lock);
  pthread_join(worker_id, NULL);
  printf("usr1: hits=%d in_worker=%d worker_saw=%d\n", usr1_hits,
         usr1_in_worker, worker_saw);
  printf("hup: hits=%d in_worker=%d before_unblock=%d\n", hup_hits,
         hup_in_worker, hup_before_unblock);
  printf("usr2: hits=%d in_main=%d\n", usr2_hits, usr2_in_main);

  sigset_t term, usr2, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, NULL);
  pthread_t t;
  pthread_create(&t, NULL, send_term, NULL);
  int got = 0;
  int r = sigwait(&term, &got);
  pthread_join(t, NULL);
  sigset_t pend;
  sigpending(&pend);
  printf("sigwait: r=%d got_term=%d still_pending=%d\n", r, got == SIGTERM,
         sigismember(&pend, SIGTERM));

  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, &old);
  pthread_create(&t, NULL, send_usr2, NULL);
  r = sigsuspend(&old);
  pthread_join(t, NULL);
  printf("sigsuspend: r=%d usr2 hits=%d in_main=%d\n", r, usr2_hits,
         usr2_in_main);
  return 0;
}
