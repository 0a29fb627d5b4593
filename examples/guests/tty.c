/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a program learns of its terminal: whether fds 0-2 are terminals,
 * the window size, the echo flag; then raw mode on and back off, as an
 * interactive program does (tracecorn record --tty, issue 36). With the
 * argument "stay-raw" it leaves the terminal raw, as a program that dies
 * does. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

int main(int argc, char **argv) {
  printf("isatty: %d %d %d\n", isatty(0), isatty(1), isatty(2));
  struct winsize ws;
  if (ioctl(1, TIOCGWINSZ, &ws) == 0)
    printf("winsize: %u cols %u rows\n", ws.ws_col, ws.ws_row);
  else
    printf("winsize: none\n");
  struct termios t, raw;
  if (tcgetattr(0, &t) != 0) {
    printf("termios: none\n");
    return 0;
  }
  printf("echo: %s, icanon: %s\n", (t.c_lflag & ECHO) ? "on" : "off",
         (t.c_lflag & ICANON) ? "on" : "off");
  raw = t;
  cfmakeraw(&raw);
  int set = tcsetattr(0, TCSANOW, &raw);
  if (argc > 1 && strcmp(argv[1], "stay-raw") == 0)
    return 0;
  struct termios now;
  tcgetattr(0, &now);
  printf("raw: set %d, echo now %s\n", set,
         (now.c_lflag & ECHO) ? "on" : "off");
  tcsetattr(0, TCSANOW, &t);
  tcgetattr(0, &now);
  printf("restored: echo %s\n", (now.c_lflag & ECHO) ? "on" : "off");
  return 0;
}
