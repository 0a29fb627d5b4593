/* SPDX-License-Identifier: GPL-2.0-or-later */
/* execve from a guest (issue 15). Usage:
 *   exec run PROG [ARG...]   execve(PROG, {PROG, "two words", ARG..., NULL},
 *                            {"GREETING=hello", "EMPTY=", NULL}); on failure
 *                            prints the errno and exits 1
 *   exec errors [ELF]        the calls that fail and return: a missing file
 *                            (ENOENT), a directory and a file without x
 *                            permission (EACCES), bad pointers (EFAULT), a
 *                            file that is no program (ENOEXEC), an ELF of
 *                            another arch when given; then execs PROG-less
 *                            /proc/self/exe with "done" to show it goes on
 *   exec done                prints "done" (the end of `errors`)
 * Output goes through write(2) so nothing is left in a stdio buffer at the
 * exec. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void say(const char *s) {
  if (write(1, s, strlen(s)) < 0)
    _exit(3);
}

static char *const env[] = {"GREETING=hello", "EMPTY=", NULL};

static void try_exec(const char *label, const char *path, char *const *argv,
                     char *const *envp) {
  errno = 0;
  int r = execve(path, argv, envp);
  char buf[256];
  snprintf(buf, sizeof buf, "%s: %d %s\n", label, r, strerror(errno));
  say(buf);
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "run") == 0) {
    char *args[16];
    int n = 0;
    args[n++] = argv[2];
    args[n++] = "two words";
    for (int i = 3; i < argc && n < 15; i++)
      args[n++] = argv[i];
    args[n] = NULL;
    say("before exec\n");
    try_exec("run", argv[2], args, env);
    return 1;
  }
  if (argc >= 2 && strcmp(argv[1], "errors") == 0) {
    char *args[] = {"x", NULL};
    try_exec("missing", "/nonexistent/program", args, env);
    try_exec("directory", "/", args, env);
    /* a file without execute permission, made here */
    int fd = open("exec-noexec.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      if (write(fd, "#!/bin/sh\n", 10) != 10)
        return 2;
      close(fd);
    }
    try_exec("noexec", "exec-noexec.tmp", args, env);
    unlink("exec-noexec.tmp");
    /* executable, but neither an ELF nor a script */
    fd = open("exec-garbage.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (fd >= 0) {
      if (write(fd, "no program\n", 11) != 11)
        return 2;
      close(fd);
    }
    try_exec("garbage", "exec-garbage.tmp", args, env);
    unlink("exec-garbage.tmp");
    try_exec("bad path", (const char *)8, args, env);
    try_exec("bad argv", "/proc/self/exe", (char *const *)8, env);
    char *bad[] = {"x", (char *)8, NULL};
    try_exec("bad arg", "/proc/self/exe", bad, env);
    if (argc >= 3)
      try_exec("other arch", argv[2], args, env);
    char *done[] = {argv[0], "done", NULL};
    try_exec("self", "/proc/self/exe", done, env);
    return 1;
  }
  if (argc >= 2 && strcmp(argv[1], "done") == 0) {
    say("done\n");
    return 0;
  }
  say("usage: exec run PROG [ARG...] | errors [ELF] | done\n");
  return 2;
}
