/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads2: two threads sharing a counter under a mutex (issue 15). The
 * output does not depend on the interleaving, so it equals a native
 * run's; the recording of it is deterministic because tracecorn schedules
 * the threads itself.
 *
 *   threads2 [ROUNDS]   exit status 0, or 5 when ROUNDS is given
 *   threads2 deadlock   the worker waits for a mutex main holds while main
 *                       joins it: never ends natively
 *   threads2 pipe       main reads what the worker writes into a pipe (main
 *                       reads first: the read waits for the worker) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long per_thread[2];
static pid_t worker_tid;
static int rounds = 2000;
static volatile int worker_ready;

static void *work(void *arg) {
  long id = (long)arg;
  if (id == 1) {
    worker_tid = (pid_t)syscall(SYS_gettid);
    worker_ready = 1;
  }
  for (int i = 0; i < rounds; i++) {
    pthread_mutex_lock(&lock);
    counter += id + 1;
    per_thread[id]++;
    pthread_mutex_unlock(&lock);
  }
  return (void *)(id * 10 + 7);
}

static int pipe_fds[2];

static void *pipe_writer(void *arg) {
  (void)arg;
  for (int i = 1; i <= 50; i++) {
    char msg[16];
    int n = snprintf(msg, sizeof msg, "%d\n", i * i);
    if (write(pipe_fds[1], msg, (size_t)n) != n)
      return (void *)1L;
  }
  close(pipe_fds[1]);
  return NULL;
}

static int pipe_mode(void) {
  pthread_t t;
  if (pipe(pipe_fds) != 0 || pthread_create(&t, NULL, pipe_writer, NULL) != 0)
    return 1;
  long sum = 0, lines = 0;
  char buf[64], num[16];
  int k = 0;
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] == '\n') {
        num[k] = 0;
        sum += atol(num);
        lines++;
        k = 0;
      } else if (k < 15) {
        num[k++] = buf[i];
      }
    }
  void *ret;
  pthread_join(t, &ret);
  printf("pipe: %ld lines, sum %ld, writer returned %ld\n", lines, sum,
         (long)ret);
  return 0;
}

static void *stuck(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  return NULL;
}

int main(int argc, char **argv) {
  pthread_t t;
  if (argc > 1 && strcmp(argv[1], "deadlock") == 0) {
    pthread_mutex_lock(&lock);
    pthread_create(&t, NULL, stuck, NULL);
    pthread_join(t, NULL);
    return 1;
  }
  if (argc > 1 && strcmp(argv[1], "pipe") == 0)
    return pipe_mode();
  if (argc > 1)
    rounds = atoi(argv[1]);
  if (pthread_create(&t, NULL, work, (void *)1L) != 0) {
    puts("pthread_create failed");
    return 1;
  }
  /* sleeping lets the worker run (tracecorn: a sleep yields) */
  while (!worker_ready)
    usleep(100);
  work((void *)0L);
  void *ret = NULL;
  if (pthread_join(t, &ret) != 0) {
    puts("pthread_join failed");
    return 1;
  }
  printf("counter %ld (expected %ld)\n", counter, (long)rounds * 3);
  printf("thread 0: %ld, thread 1: %ld, returned %ld\n", per_thread[0],
         per_thread[1], (long)ret);
  printf("worker is another thread: %s\n",
         worker_tid != 0 && worker_tid != getpid() ? "yes" : "no");
  puts("done");
  return argc > 1 ? 5 : 0;
}
