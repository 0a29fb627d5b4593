/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Host-memory bounds (bench/memory.sh, tests): "bss" touches both ends of a
 * 1 GiB bss and mprotects a page inside it; "read FILE" reads the whole
 * file with one read(2) into one buffer and prints a checksum. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BSS_SIZE (1u << 30)
static volatile unsigned char big[BSS_SIZE];

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "bss") == 0) {
    big[12345] = 1;
    big[BSS_SIZE - 1] = 2;
    uintptr_t page = ((uintptr_t)&big[BSS_SIZE / 2]) & ~(uintptr_t)4095;
    if (mprotect((void *)page, 4096, PROT_READ) != 0)
      return 3;
    printf("%d\n", big[12345] + big[BSS_SIZE - 1] + big[BSS_SIZE / 2]);
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "read") == 0) {
    int fd = open(argv[2], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
      return 2;
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    if (!buf)
      return 2;
    ssize_t n = read(fd, buf, (size_t)st.st_size + 1);
    unsigned long sum = 0;
    for (ssize_t i = 0; i < n; i += 4096) /* one byte a page: cheap */
      sum = sum * 31 + buf[i];
    printf("%zd %lu\n", n, sum);
    return 0;
  }
  fprintf(stderr, "usage: bigmem bss | read FILE\n");
  return 2;
}
