/* The kernel verifier's own figures for each program of a BPF object (bench/verifier_cost.sh):
 * loads the object with libbpf at log level BPF_LOG_STATS, one log buffer per program, and
 * prints per program "NAME processed N states T peak P time_us U" from the log's summary lines
 * ("verification time", "processed N insns ... total_states T peak_states P"). Programs named
 * in argv[2..] only, if any. The object is loaded as pass 4 left it (the loader's .rodata
 * writes are not made: the figures can differ by a few % from ukstap's own load). */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_SIZE (1u << 20)

static int quiet(enum libbpf_print_level l, const char *f, va_list a) { (void)l, (void)f, (void)a; return 0; }

static int wanted(const char *name, int argc, char **argv)
{
  if (argc <= 2)
    return 1;
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], name))
      return 1;
  return 0;
}

int main(int argc, char **argv)
{
  struct bpf_object *o;
  struct bpf_program *p;
  if (argc < 2) {
    fprintf(stderr, "usage: verifier_stats OBJ [PROG...]\n");
    return 2;
  }
  libbpf_set_print(quiet);
  o = bpf_object__open_file(argv[1], NULL);
  if (!o) {
    fprintf(stderr, "verifier_stats: cannot open %s\n", argv[1]);
    return 1;
  }
  bpf_object__for_each_program(p, o) {
    if (!wanted(bpf_program__name(p), argc, argv) || !bpf_program__autoload(p)) {
      bpf_program__set_autoload(p, 0);
      continue;
    }
    char *buf = calloc(1, LOG_SIZE);
    if (!buf)
      return 1;
    bpf_program__set_log_level(p, 4);  /* BPF_LOG_STATS */
    bpf_program__set_log_buf(p, buf, LOG_SIZE);
  }
  if (bpf_object__load(o)) {
    fprintf(stderr, "verifier_stats: %s did not load\n", argv[1]);
    return 1;
  }
  bpf_object__for_each_program(p, o) {
    size_t n;
    const char *log = bpf_program__log_buf(p, &n);
    const char *t, *q;
    unsigned long us = 0, insns = 0, total = 0, peak = 0;
    if (!log || !bpf_program__autoload(p))
      continue;
    t = strstr(log, "verification time ");
    q = strstr(log, "processed ");
    if (t)
      sscanf(t, "verification time %lu", &us);
    if (q)
      sscanf(q, "processed %lu insns (limit %*u) max_states_per_insn %*u total_states %lu peak_states %lu",
             &insns, &total, &peak);
    printf("%s processed %lu states %lu peak %lu time_us %lu\n", bpf_program__name(p), insns, total,
           peak, us);
  }
  bpf_object__close(o);
  return 0;
}
