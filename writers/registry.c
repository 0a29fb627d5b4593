/* The format registry: one tc_format per module, listed once here. */
#include <stdio.h>
#include <string.h>

#include "tracecorn/tracecorn.h"

extern const tc_format tc_format_text;
extern const tc_format tc_format_json;
extern const tc_format tc_format_tct;
extern const tc_format tc_format_trac;
extern const tc_format tc_format_tfile;

static const tc_format *const registry[] = {&tc_format_tct,   &tc_format_text,
                                            &tc_format_json,  &tc_format_trac,
                                            &tc_format_tfile, NULL};

const tc_format *const *tc_formats(void) { return registry; }

const tc_format *tc_format_by_name(const char *name) {
  for (const tc_format *const *f = registry; *f; f++)
    if (strcmp((*f)->name, name) == 0)
      return *f;
  return NULL;
}

const tc_format *tc_format_detect(const char *path, tc_error *err) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    tc_error_set(err, "%s: cannot open: %m", path);
    return NULL;
  }
  uint8_t head[64];
  size_t n = fread(head, 1, sizeof head, fp);
  fclose(fp);
  for (const tc_format *const *f = registry; *f; f++)
    if ((*f)->probe && (*f)->open_reader && (*f)->probe(head, n, path))
      return *f;
  tc_error_set(err, "%s: not a trace file tracecorn can read", path);
  return NULL;
}
