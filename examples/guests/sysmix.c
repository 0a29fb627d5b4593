/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sysmix: a static glibc program making a varied set of syscalls (paths,
 * open flags, buffers in and out, struct stat, iovecs, mmap prot/flags,
 * signals, timespecs, errors) so that `tracecorn strace` of its recording
 * can be compared with strace's decoding of a native run. It works in the
 * current directory only and prints one line at the end. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  static const char path[] = "sysmix.txt";
  int fails = 0;

  /* writing: open flags and mode, iovecs, long and binary buffers */
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
  struct iovec out[3] = {{(void *)"hello, ", 7},
                         {(void *)"strace\n", 7},
                         {(void *)"\t\"quoted\"\\ \001\033[0m\n", 17}};
  fails += writev(fd, out, 3) != 31;
  char big[100];
  for (int i = 0; i < (int)sizeof big; i++)
    big[i] = (char)('a' + i % 26);
  fails += write(fd, big, sizeof big) != (ssize_t)sizeof big;
  fails += write(fd,
                 "\0\1\2\3"
                 "0123\377\200",
                 10) != 10;
  fsync(fd);
  close(fd);

  /* reading: stat, read, seek, pread, readv, file and anonymous maps */
  fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  fstat(fd, &st);
  syscall(SYS_fstat, fd, &st);
  char buf[256];
  fails += read(fd, buf, 7) != 7;
  fails += read(fd, buf, 20) != 20;
  lseek(fd, 2, SEEK_SET);
  fails += pread(fd, buf, 5, 7) != 5;
  lseek(fd, -4, SEEK_END);
  lseek(fd, 0, SEEK_SET);
  char b1[3], b2[100];
  struct iovec in[2] = {{b1, sizeof b1}, {b2, sizeof b2}};
  fails += readv(fd, in, 2) != 103;
  void *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
  fails += m == MAP_FAILED;
  munmap(m, 8192);
  m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
           0);
  mprotect(m, 4096, PROT_READ);
  mprotect(m, 4096, PROT_NONE);
  munmap(m, 4096);

  /* descriptors */
  int d1 = dup(fd);
  dup2(fd, 10);
  dup3(fd, 11, O_CLOEXEC);
  fcntl(fd, F_GETFD);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_GETFL);
  int d2 = fcntl(fd, F_DUPFD_CLOEXEC, 20);
  close(d2);
  close(11);
  close(10);
  close(d1);
  close(fd);

  /* failures: errno names and messages */
  fails += open("/nonexistent/sysmix", O_RDONLY) != -1;
  fails += read(-1, buf, 10) != -1;
  fails += close(-1) != -1;
  fails += access("/nonexistent", F_OK) != -1;
  fails += mkdir(path, 0755) != -1;

  /* paths */
  access(path, R_OK | W_OK);
  syscall(SYS_faccessat, AT_FDCWD, path, X_OK);
  stat(path, &st);
  lstat(path, &st);
  mkdir("sysmix.d", 0750);
  rename("sysmix.d", "sysmix.e");
  rmdir("sysmix.e");
  fails += getcwd(buf, sizeof buf) == NULL;
  unlink(path);

  /* pipes */
  int p[2];
  pipe2(p, O_CLOEXEC);
  write(p[1], "ping", 4);
  fails += read(p[0], buf, sizeof buf) != 4;
  close(p[0]);
  close(p[1]);

  /* socket addresses (no socket is made: fd -1 and stdout fail) */
  struct sockaddr_in sin;
  memset(&sin, 0, sizeof sin);
  sin.sin_family = AF_INET;
  sin.sin_port = htons(8080);
  sin.sin_addr.s_addr = htonl(0x7f000001);
  fails += connect(-1, (struct sockaddr *)&sin, sizeof sin) != -1;
  struct sockaddr_in6 sin6;
  memset(&sin6, 0, sizeof sin6);
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(443);
  sin6.sin6_addr = in6addr_loopback;
  fails += connect(-1, (struct sockaddr *)&sin6, sizeof sin6) != -1;
  struct sockaddr_un sun;
  memset(&sun, 0, sizeof sun);
  sun.sun_family = AF_UNIX;
  strcpy(sun.sun_path, "/tmp/sysmix.sock");
  fails += bind(1, (struct sockaddr *)&sun,
                (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
                            strlen(sun.sun_path) + 1)) != -1;

  /* signals and time */
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, &old);
  sigprocmask(SIG_SETMASK, &old, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGUSR2, &sa, NULL);
  struct timespec ts = {0, 1000};
  nanosleep(&ts, NULL);
  umask(027);
  umask(022);
  /* a failing execve shows its path, argv and environment count; the
   * uid/gid calls their ids (-1: unchanged, allowed for anyone) */
  char *xargv[] = {"tracecorn-x", "two words", NULL};
  char *xenvp[] = {"A=1", "B=", NULL};
  if (execve("/nonexistent/tracecorn-x", xargv, xenvp) != -1 || errno != ENOENT)
    fails++;
  if (setregid(-1, -1) != 0 || setresuid(-1, -1, -1) != 0)
    fails++;

  printf("sysmix: %d failures\n", fails);
  return fails != 0;
}
