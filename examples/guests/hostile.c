/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hostile: a guest that tries to outgrow the recording's limits (issue 38).
 *   hostile forkloop      forks forever (each child too): only
 *                         --max-insns, a budget of all processes, ends it
 *   hostile mem N MIB     N children each map MIB MiB, all alive at once;
 *                         says how many got their map
 *   hostile maps N        one N-page map, every other page made read-only
 *                         (N/2 regions), then N one-page maps of alternating
 *                         protections; says how many calls failed
 *   hostile forks N       N children one after the other (each waited
 *                         for); says how many forks succeeded */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int children_mapping(int n, size_t mib) {
  int gate[2];
  if (pipe(gate) < 0)
    return 1;
  for (int i = 0; i < n; i++) {
    pid_t c = fork();
    if (c < 0)
      return 1;
    if (c == 0) {
      void *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      char ch;
      close(gate[1]);
      if (read(gate[0], &ch, 1) < 0) /* all alive until the parent lets go */
        _exit(2);
      _exit(p == MAP_FAILED ? 1 : 0);
    }
  }
  close(gate[1]);
  int mapped = 0, st;
  while (wait(&st) > 0)
    mapped += WIFEXITED(st) && WEXITSTATUS(st) == 0;
  printf("%d of %d children mapped %zu MiB\n", mapped, n, mib);
  return 0;
}

static int many_maps(size_t n) {
  char *base = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return 1;
  size_t pfail = 0, mfail = 0;
  for (size_t i = 0; i < n; i += 2)
    pfail += mprotect(base + i * 4096, 4096, PROT_READ) != 0;
  for (size_t i = 0; i < n; i++)
    mfail += mmap(NULL, 4096, (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED;
  printf("mprotect: %zu of %zu failed; mmap: %zu of %zu failed%s\n", pfail,
         (n + 1) / 2, mfail, n, errno == ENOMEM ? " (ENOMEM)" : "");
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1 && strcmp(argv[1], "forkloop") == 0)
    for (;;)
      fork();
  if (argc > 3 && strcmp(argv[1], "mem") == 0)
    return children_mapping(atoi(argv[2]), (size_t)atol(argv[3]));
  if (argc > 2 && strcmp(argv[1], "maps") == 0)
    return many_maps((size_t)atol(argv[2]));
  if (argc > 2 && strcmp(argv[1], "forks") == 0) {
    int n = atoi(argv[2]), ok = 0;
    for (int i = 0; i < n; i++) {
      pid_t c = fork();
      if (c == 0)
        _exit(0);
      if (c > 0 && waitpid(c, NULL, 0) == c)
        ok++;
    }
    printf("%d of %d forks succeeded\n", ok, n);
    return 0;
  }
  fprintf(stderr, "usage: hostile forkloop | mem N MIB | maps N | forks N\n");
  return 2;
}
