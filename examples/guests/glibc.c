/* SPDX-License-Identifier: GPL-2.0-or-later */
/* glibc: a static glibc program (stdio, malloc, files, qsort, floating
 * point, environment). Its stdout must equal a native run's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv) {
  printf("glibc guest: argc=%d\n", argc);
  for (int i = 1; i < argc; i++)
    printf("argv[%d]=%s\n", i, argv[i]);

  int n = 1000;
  int *v = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++)
    v[i] = (i * 7919) % 1009;
  qsort(v, (size_t)n, sizeof(int), cmp);
  long sum = 0;
  for (int i = 0; i < n; i++)
    sum += (long)v[i] * i;
  printf("sorted sum: %ld, min %d, max %d\n", sum, v[0], v[n - 1]);
  free(v);

  char *big = malloc(1 << 20); /* mmap-backed */
  memset(big, 'x', 1 << 20);
  printf("big[12345]=%c\n", big[12345]);
  free(big);

  /* a map far beyond any sane limit fails with ENOMEM, and the process
   * (and later maps) carry on */
  size_t huge = sizeof(void *) == 8 ? (size_t)1 << 40 : (size_t)0xfff00000u;
  void *hp = mmap(NULL, huge, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  printf("huge mmap: %s\n", hp == MAP_FAILED ? strerror(errno) : "mapped");
  char *small = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (small != MAP_FAILED)
    small[100] = 'y';
  printf("small mmap after: %s\n",
         small != MAP_FAILED && small[100] == 'y' ? "ok" : "failed");

  double d = 0;
  for (int i = 1; i <= 10; i++)
    d += 1.0 / i;
  printf("harmonic(10) = %.6f\n", d);

  /* files: write, read back, stat */
  if (argc > 1) {
    int fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) {
      printf("open failed: %s\n", strerror(errno));
      return 2;
    }
    const char msg[] = "written by the guest\n";
    if (write(fd, msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1))
      return 3;
    close(fd);
    FILE *f = fopen(argv[1], "r");
    char line[64] = {0};
    if (!f || !fgets(line, sizeof line, f))
      return 4;
    fclose(f);
    struct stat st;
    stat(argv[1], &st);
    printf("read back: %s", line);
    printf("size: %ld\n", (long)st.st_size);
  }
  /* directories (O_DIRECTORY) and F_GETFL: per-arch open flag values.
   * /dev (devtmpfs) has small directory cookies, which qemu-user (a
   * reference) passes to 32-bit guests unchanged. */
  DIR *dir = opendir("/dev");
  int entries = 0;
  if (dir) {
    while (readdir(dir))
      entries++;
    closedir(dir);
  }
  printf("opendir /dev: %s, %s\n", dir ? "ok" : strerror(errno),
         entries > 2 ? "entries" : "empty");
  int afd = open("/dev/null", O_WRONLY | O_APPEND | O_CLOEXEC);
  int fl = afd >= 0 ? fcntl(afd, F_GETFL) : -1;
  printf("F_GETFL: append %d, wronly %d, cloexec %d\n",
         fl >= 0 && (fl & O_APPEND) != 0,
         fl >= 0 && (fl & O_ACCMODE) == O_WRONLY,
         afd >= 0 && fcntl(afd, F_GETFD) == FD_CLOEXEC);
  if (afd >= 0)
    close(afd);
  if (open("/nonexistent/file", O_RDONLY) < 0)
    printf("missing file: %s\n", strerror(errno));

  const char *home = getenv("TRACECORN_TEST");
  printf("env TRACECORN_TEST=%s\n", home ? home : "(unset)");
  fflush(stdout);
  return 7;
}
