/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads8: eight threads meeting at a condition-variable barrier, then
 * taking numbered work items from a queue the main thread fills under a
 * condition variable, with an atomic counter. The result does not depend on
 * the interleaving (issue 15). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NTHREADS 8
#define ITEMS 400

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static pthread_cond_t filled = PTHREAD_COND_INITIALIZER;
static int waiting, queue[ITEMS], head, tail;
static int closed;
static atomic_long atomic_sum;
static atomic_int atomic_hits;
static long done_items[NTHREADS];

static void *worker(void *arg) {
  long id = (long)arg;
  /* barrier: every worker waits until all have arrived */
  pthread_mutex_lock(&lock);
  waiting++;
  if (waiting == NTHREADS)
    pthread_cond_broadcast(&arrived);
  while (waiting < NTHREADS)
    pthread_cond_wait(&arrived, &lock);
  pthread_mutex_unlock(&lock);
  for (;;) {
    pthread_mutex_lock(&lock);
    while (head == tail && !closed)
      pthread_cond_wait(&filled, &lock);
    if (head == tail && closed) {
      pthread_mutex_unlock(&lock);
      break;
    }
    int item = queue[head++];
    pthread_mutex_unlock(&lock);
    atomic_fetch_add(&atomic_sum, (long)item * item);
    atomic_fetch_add(&atomic_hits, 1);
    done_items[id]++;
  }
  return NULL;
}

int main(void) {
  pthread_t t[NTHREADS];
  for (long i = 0; i < NTHREADS; i++)
    if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
      puts("pthread_create failed");
      return 1;
    }
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&lock);
    queue[tail++] = i + 1;
    pthread_cond_signal(&filled);
    pthread_mutex_unlock(&lock);
  }
  pthread_mutex_lock(&lock);
  closed = 1;
  pthread_cond_broadcast(&filled);
  pthread_mutex_unlock(&lock);
  long total = 0;
  for (int i = 0; i < NTHREADS; i++) {
    pthread_join(t[i], NULL);
    total += done_items[i];
  }
  printf("items %ld, hits %d, sum of squares %ld\n", total,
         atomic_load(&atomic_hits), atomic_load(&atomic_sum));
  printf("all %d threads joined\n", NTHREADS);
  return 0;
}
