/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Processes: fork, pipes both ways, wait statuses, getppid, kill of a
 * child, vfork, SIGCHLD to a handler.
 *   fork bomb [N]  forks until fork fails (N: RLIMIT_NPROC first) and
 *                  says how many it made and why
 *   fork orphan    the parent exits (status 3) while its child sleeps
 *   fork deadlock  parent waits for a child that reads a pipe nobody
 *                  writes (the parent holds its write end)
 *   fork eintr     a signal with a handler ends a child's blocked read
 *                  (EINTR), or, with SA_RESTART, the read goes on
 *   fork spawn     posix_spawn (CLONE_VM|CLONE_VFORK) of itself, which
 *                  exits 7; vfork + execve of itself, which exits 8 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t chld_seen;

/* the first SIGCHLD's siginfo: the kernel's, naming the child that ended */
static volatile sig_atomic_t first_code, first_pid, first_status;
static void on_chld(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  if (sig == SIGCHLD && chld_seen++ == 0) {
    first_code = si->si_code;
    first_pid = si->si_pid;
    first_status = si->si_status;
  }
}

static void report(const char *what, int st) {
  if (WIFEXITED(st))
    printf("%s: exited %d\n", what, WEXITSTATUS(st));
  else if (WIFSIGNALED(st))
    printf("%s: killed by signal %d\n", what, WTERMSIG(st));
  else
    printf("%s: status 0x%x\n", what, st);
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig) { usr1_seen += sig == SIGUSR1; }

/* A child blocks in a read of an empty pipe; the parent sends SIGUSR1
 * (then, with SA_RESTART, a byte). */
static void interrupted_read(int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = flags;
  sigaction(SIGUSR1, &sa, NULL);
  int p[2];
  if (pipe(p) < 0)
    return;
  pid_t c = fork();
  if (c == 0) {
    char ch;
    ssize_t n = read(p[0], &ch, 1);
    printf("child: read %s, handler %s\n",
           n < 0 && errno == EINTR ? "EINTR"
           : n == 1                ? "a byte"
                                   : "??",
           usr1_seen ? "ran" : "did not run");
    _exit(0);
  }
  /* The child may not be in its read yet when a signal comes (a loaded
   * machine): its handler runs, the read blocks, and the next signal
   * interrupts it. So, without SA_RESTART, signal until the child ends;
   * with it, the byte written after the signal ends the read either way. */
  struct timespec ts = {0, 20 * 1000 * 1000};
  kill(c, SIGUSR1);
  if (flags && write(p[1], "x", 1) != 1)
    return;
  for (;;) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (flags ||
        waitid(P_PID, (id_t)c, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        si.si_pid != 0)
      break;
    nanosleep(&ts, NULL);
    kill(c, SIGUSR1);
  }
  int st;
  waitpid(c, &st, 0);
  report("child", st);
  close(p[0]);
  close(p[1]);
}

static int bomb(const char *limit) {
  if (limit) {
    struct rlimit rl = {(rlim_t)atoi(limit), (rlim_t)atoi(limit)};
    setrlimit(RLIMIT_NPROC, &rl);
  }
  int hold[2];
  if (pipe(hold) < 0)
    return 1;
  int made = 0, err = 0;
  for (;;) {
    pid_t p = fork();
    if (p < 0) {
      err = errno;
      break;
    }
    if (p == 0) { /* waits until the parent lets go */
      char c;
      close(hold[1]);
      ssize_t n = read(hold[0], &c, 1);
      _exit(n == 0 ? 0 : 1);
    }
    made++;
    if (made == 10000)
      break;
  }
  close(hold[1]);
  int ok = 0;
  for (int i = 0; i < made; i++) {
    int st;
    if (wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
      ok++;
  }
  printf("forked %d, then %s; %d reaped cleanly\n", made,
         err == EAGAIN ? "EAGAIN" : strerror(err), ok);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1 && strcmp(argv[1], "bomb") == 0)
    return bomb(argc > 2 ? argv[2] : NULL);
  if (argc > 1 && strcmp(argv[1], "orphan") == 0) {
    pid_t me = getpid();
    if (fork() == 0) {
      struct timespec ts = {0, 50 * 1000 * 1000};
      nanosleep(&ts, NULL);
      printf("orphan: %s\n", getppid() != me ? "reparented" : "same parent");
      return 0;
    }
    return 3;
  }
  if (argc > 1 && strcmp(argv[1], "exit") == 0)
    return argc > 2 ? atoi(argv[2]) : 0;
  if (argc > 1 && strcmp(argv[1], "spawn") == 0) {
    extern char **environ;
    char *args[] = {argv[0], "exit", "7", NULL};
    pid_t sp;
    int st, r = posix_spawn(&sp, argv[0], NULL, NULL, args, environ);
    if (r == 0 && waitpid(sp, &st, 0) == sp)
      report("spawned", st);
    pid_t v = vfork();
    if (v == 0) {
      char *vargs[] = {argv[0], "exit", "8", NULL};
      execve(argv[0], vargs, environ);
      _exit(127);
    }
    if (waitpid(v, &st, 0) == v)
      report("vfork+exec", st);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "eintr") == 0) {
    interrupted_read(0);
    interrupted_read(SA_RESTART);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "deadlock") == 0) {
    int p[2];
    if (pipe(p) < 0)
      return 1;
    pid_t c = fork();
    if (c == 0) {
      char ch;
      _exit(read(p[0], &ch, 1) == 1 ? 0 : 1);
    }
    int st;
    waitpid(c, &st, 0);
    return 0;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_chld;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGCHLD, &sa, NULL);

  /* parent -> child and child -> parent through pipes */
  int down[2], up[2];
  if (pipe(down) < 0 || pipe(up) < 0)
    return 1;
  pid_t me = getpid();
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    close(down[1]);
    close(up[0]);
    char buf[64] = {0};
    size_t got = 0;
    ssize_t n;
    while ((n = read(down[0], buf + got, sizeof buf - 1 - got)) > 0)
      got += (size_t)n;
    printf("child: read \"%s\" (%zu bytes), parent is %s\n", buf, got,
           getppid() == me ? "mine" : "someone else");
    char reply[80];
    int len = snprintf(reply, sizeof reply, "got %zu", got);
    if (write(up[1], reply, (size_t)len) != len)
      _exit(2);
    _exit((int)got);
  }
  close(down[0]);
  close(up[1]);
  const char msg[] = "hello through a pipe";
  if (write(down[1], msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1))
    return 1;
  close(down[1]);
  char reply[80] = {0};
  ssize_t n = read(up[0], reply, sizeof reply - 1);
  printf("parent: child says \"%s\" (%zd bytes)\n", reply, n);
  int st;
  pid_t w = waitpid(child, &st, 0);
  printf("parent: waited for %s child\n", w == child ? "the" : "another");
  report("child", st);

  /* poll: the parent waits for a child that writes late; a short
   * timeout expires first. The child writes only once the parent lets it
   * (after that timeout), so a loaded machine cannot reorder the two. */
  int pp[2], go[2];
  if (pipe(pp) < 0 || pipe(go) < 0)
    return 1;
  pid_t late = fork();
  if (late == 0) {
    char c;
    close(pp[0]);
    close(go[1]);
    if (read(go[0], &c, 1) != 1)
      _exit(1);
    _exit(write(pp[1], "x", 1) == 1 ? 0 : 1);
  }
  close(pp[1]);
  close(go[0]);
  struct pollfd pfd = {pp[0], POLLIN, 0};
  int n1 = poll(&pfd, 1, 5);
  if (write(go[1], "g", 1) != 1)
    return 1;
  int n2 = poll(&pfd, 1, -1);
  printf("poll: %d, then %d (%s)\n", n1, n2,
         (pfd.revents & POLLIN) ? "POLLIN" : "?");
  close(go[1]);
  waitpid(late, &st, 0);
  close(pp[0]);

  /* WNOHANG, then kill: the child sleeps in a read nobody answers */
  int hang[2];
  if (pipe(hang) < 0)
    return 1;
  pid_t sleeper = fork();
  if (sleeper == 0) {
    char c;
    close(hang[1]);
    if (read(hang[0], &c, 1) < 0)
      _exit(3);
    _exit(4);
  }
  close(hang[0]);
  printf("WNOHANG: %s\n",
         waitpid(sleeper, &st, WNOHANG) == 0 ? "still running" : "done?");
  kill(sleeper, SIGTERM);
  waitpid(sleeper, &st, 0);
  report("sleeper", st);
  close(hang[1]);

  /* vfork: the parent goes on once the child has exited */
  pid_t v = vfork();
  if (v == 0)
    _exit(5);
  waitpid(v, &st, 0);
  report("vfork child", st);

  /* waitid: WNOHANG first, then WNOWAIT leaves the zombie for a
   * second waitid to reap */
  int gate[2];
  if (pipe(gate) < 0)
    return 1;
  pid_t w9 = fork();
  if (w9 == 0) {
    char c;
    close(gate[1]);
    _exit(read(gate[0], &c, 1) == 0 ? 9 : 1);
  }
  close(gate[0]);
  siginfo_t si;
  memset(&si, 0xff, sizeof si);
  int r1 = waitid(P_PID, (id_t)w9, &si, WEXITED | WNOHANG);
  printf("waitid WNOHANG: %d, si_pid %d\n", r1, (int)si.si_pid);
  close(gate[1]);
  memset(&si, 0, sizeof si);
  int r2 = waitid(P_PID, (id_t)w9, &si, WEXITED | WNOWAIT);
  printf("waitid WNOWAIT: %d, %s, code %s, status %d, signo %s\n", r2,
         si.si_pid == w9 ? "its pid" : "another pid",
         si.si_code == CLD_EXITED ? "CLD_EXITED" : "?", si.si_status,
         si.si_signo == SIGCHLD ? "SIGCHLD" : "?");
  memset(&si, 0, sizeof si);
  int r3 = waitid(P_ALL, 0, &si, WEXITED);
  printf("waitid P_ALL: %d, %s, status %d\n", r3,
         si.si_pid == w9 ? "its pid" : "another pid", si.si_status);

  printf("SIGCHLD handled: %s\n", chld_seen >= 4 ? "yes" : "no");
  printf("first SIGCHLD: %s, %s, status %d\n",
         first_code == CLD_EXITED ? "CLD_EXITED" : "another code",
         first_pid == child ? "the first child's pid" : "another pid",
         (int)first_status);
  printf("no more children: %s\n",
         wait(&st) < 0 && errno == ECHILD ? "ECHILD" : "??");
  return 0;
}
