/* SPDX-License-Identifier: GPL-2.0-or-later */
/* crackme: compares argv[1] with a key it builds on its stack (so the key
 * is in no file section) and says whether it matched. Built with -g for
 * GDB's source-level commands on traces: `tfind pc check`, `tfind line`,
 * `x/s` on the strings it uses. Exits 0 for the right key. */
#include "sys.h"

GUEST_START

/* writable, so GDB cannot read it from the ELF */
static char banner[32] = "crackme: checking ";

__attribute__((noinline)) static int check(const char *key,
                                           const char *secret) {
  while (*key && *key == *secret) { /* tfind-line: the compare loop */
    key++;
    secret++;
  }
  return *key == *secret;
}

void cmain(long *sp) {
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  volatile char secret[12];
  const char *word = "sesame"; /* read-only: GDB reads it from the ELF */
  secret[0] = 'o';
  secret[1] = 'p';
  secret[2] = 'e';
  secret[3] = 'n';
  secret[4] = '-';
  for (int i = 0; i < 6; i++)
    secret[5 + i] = word[i];
  secret[11] = 0;
  const char *key = argc > 1 ? argv[1] : "";
  g_puts(banner);
  g_puts(key);
  g_puts("\n");
  int ok = check(key, (const char *)secret);
  g_puts(ok ? "right key\n" : "wrong key\n");
  g_exit(ok ? 0 : 1);
}
