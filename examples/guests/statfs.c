/* SPDX-License-Identifier: GPL-2.0-or-later */
/* statfs and fstatfs (issue 32): what the same file system answers
 * whatever the run (its kind, name length, block size) and the errors, so
 * a native or qemu-user run prints the same lines. glibc's statfs uses
 * statfs64 on i386, arm and mips o32. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
  struct statfs a, b;
  int ra = statfs("/", &a);
  int fd = open("/", O_RDONLY | O_DIRECTORY);
  int rb = fstatfs(fd, &b);
  printf("statfs(/)=%d fstatfs=%d same-type=%d namelen=%ld blocks>0=%d "
         "bfree<=blocks=%d\n",
         ra, rb, a.f_type == b.f_type, (long)a.f_namelen, a.f_blocks > 0,
         a.f_bfree <= a.f_blocks);
  errno = 0;
  int rm = statfs("/no/such/dir", &a);
  printf("missing: %d %s\n", rm, strerror(errno));
  errno = 0;
  int rf = fstatfs(1000, &a);
  printf("bad fd: %d %s\n", rf, strerror(errno));
  errno = 0; /* the raw call: libc's 32-bit statfs would copy to NULL */
  long rn = syscall(SYS_fstatfs, fd, (void *)0);
  printf("NULL buffer: %ld %s\n", rn, strerror(errno));
  int p[2];
  if (pipe(p) == 0 && fstatfs(p[0], &b) == 0)
    printf("pipe: type=%#lx namelen=%ld\n", (unsigned long)b.f_type,
           (long)b.f_namelen);
  return 0;
}
