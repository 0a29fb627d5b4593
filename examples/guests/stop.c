/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Job control (issue 15): a child stops itself with SIGSTOP, its parent
 * sees it with WUNTRACED, continues it with SIGCONT and reaps it; an
 * ignored SIGTSTP does nothing.
 *   stop.c jobs: the parent stops and continues its child with kill;
 *                waitid's WSTOPPED/WCONTINUED/WNOWAIT, wait4's
 *                WCONTINUED, SIGKILL of a stopped child, SIGCHLD counts
 *                with and without SA_NOCLDSTOP.
 *   stop.c lone: stops itself with nobody to continue it (natively it
 *                waits for a SIGCONT from the shell). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t chld;
static void on_chld(int sig) {
  (void)sig;
  chld++;
}

static int jobs(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_chld;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);
  pid_t p = fork();
  if (p == 0) {
    /* A group of its own, whose parent is in another group of the session:
     * never orphaned, so Linux does not discard SIGTSTP for it (the test's
     * own group is orphaned when it runs under setsid, as CI does). */
    setpgid(0, 0);
    for (;;)
      pause(); /* stopped and continued while it waits; killed at last */
  }
  setpgid(p, p); /* before the first kill, whichever runs first */
  siginfo_t si;
  int st;
  kill(p, SIGSTOP);
  waitid(P_PID, (id_t)p, &si, WSTOPPED);
  printf("waitid stopped=%d status=%d\n", si.si_code == CLD_STOPPED,
         si.si_status);
  printf("reported once: %d\n", (int)waitpid(p, &st, WUNTRACED | WNOHANG));
  kill(p, SIGCONT);
  waitpid(p, &st, WCONTINUED);
  printf("continued=%d status=%#x\n", WIFCONTINUED(st), st);
  kill(p, SIGTSTP);
  waitid(P_PID, (id_t)p, &si, WSTOPPED | WNOWAIT);
  printf("tstp stopped=%d status=%d\n", si.si_code == CLD_STOPPED,
         si.si_status);
  kill(p, SIGCONT);
  waitid(P_PID, (id_t)p, &si, WCONTINUED);
  printf("waitid continued=%d status=%d\n", si.si_code == CLD_CONTINUED,
         si.si_status);
  kill(p, SIGSTOP);
  waitpid(p, &st, WUNTRACED);
  kill(p, SIGKILL);
  waitpid(p, &st, 0);
  printf("killed while stopped=%d sig=%d\n", WIFSIGNALED(st), WTERMSIG(st));
  /* six were sent; natively some may merge while one is pending */
  printf("sigchld for stops and continues: %s\n", chld >= 4 ? "yes" : "no");
  /* SA_NOCLDSTOP: SIGCHLD for the exit only */
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  chld = 0;
  p = fork();
  if (p == 0) {
    raise(SIGSTOP);
    _exit(3);
  }
  waitpid(p, &st, WUNTRACED);
  kill(p, SIGCONT);
  waitpid(p, &st, 0);
  printf("nocldstop sigchld=%d exited=%d\n", (int)chld, WEXITSTATUS(st));
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "jobs") == 0)
    return jobs();
  if (argc > 1 && strcmp(argv[1], "lone") == 0) {
    raise(SIGSTOP);
    printf("continued from outside\n");
    return 0;
  }
  pid_t p = fork();
  if (p == 0) {
    raise(SIGSTOP);
    printf("child continued\n");
    fflush(stdout);
    _exit(7);
  }
  int st;
  waitpid(p, &st, WUNTRACED);
  printf("stopped=%d sig=%d\n", WIFSTOPPED(st),
         WIFSTOPPED(st) ? WSTOPSIG(st) : 0);
  fflush(stdout);
  kill(p, SIGCONT);
  waitpid(p, &st, 0);
  printf("exited=%d status=%d\n", WIFEXITED(st), WEXITSTATUS(st));
  signal(SIGTSTP, SIG_IGN);
  raise(SIGTSTP);
  printf("ignored tstp\n");
  return 0;
}
