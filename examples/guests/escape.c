/* SPDX-License-Identifier: GPL-2.0-or-later */
/* escape: a guest under --root reaching for a host file through
 * /proc/self/exe (issue 38). It copies itself to /e/x/prog and execs that
 * copy, which moves /e away and renames LINK, a symlink in the root, in
 * its place (one with a relative target such as "../outside" leaves the
 * root on the host, not in the guest's view), then reads and stats
 * /proc/self/exe. Prints what it read: "\177ELF" and its own size while
 * the sandbox holds.
 *   escape LINK */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static int copy_self(const char *to) {
  int in = open("/proc/self/exe", O_RDONLY);
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  if (in < 0 || out < 0)
    return -1;
  char buf[65536];
  ssize_t n;
  while ((n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n)
      return -1;
  close(in);
  return close(out);
}

int main(int argc, char **argv) {
  if (argc == 2) { /* first: the copy to exec */
    mkdir("/e", 0755);
    mkdir("/e/x", 0755);
    if (copy_self("/e/x/prog") < 0) {
      perror("copy");
      return 1;
    }
    execl("/e/x/prog", "prog", argv[1], "copied", (char *)NULL);
    perror("execl");
    return 1;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: escape LINK\n");
    return 2;
  }
  /* the copy: the path it was started by now leads out of the root */
  if (rename("/e", "/e.old") < 0 || rename(argv[1], "/e") < 0) {
    perror("swap");
    return 1;
  }
  char head[7] = {0};
  int fd = open("/proc/self/exe", O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read(fd, head, 6);
  for (ssize_t i = 0; i < n; i++)
    if (head[i] < 32 || head[i] > 126)
      head[i] = '.';
  struct stat exe, own;
  int st = stat("/proc/self/exe", &exe);
  int so = stat("/e.old/x/prog", &own);
  printf("read: %s\n", n > 0 ? head : "nothing");
  printf("stat: %s\n", st < 0 || so < 0             ? "failed"
                       : exe.st_size == own.st_size ? "its own size"
                                                    : "another file's size");
  printf("access: %s\n", access("/proc/self/exe", R_OK) == 0 ? "ok" : "no");
  return 0;
}
