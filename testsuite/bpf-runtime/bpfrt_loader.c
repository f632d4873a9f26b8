/* Test loader for the BPF runtime: loads a module object the way pass 5 will (stp_ctx sized to
 * 2 slots per possible CPU, stp_config written into .rodata through its BTF DATASEC offset),
 * prints the verifier log on failure, and with --run sets the session RUNNING, attaches every
 * program, calls getppid() (the test probes sit on syscalls:sys_enter_getppid) and prints the
 * records as text: one line per record, `TYPE id: args`, args decoded by --fmt ID=SIG
 * (SIG: L long, S string) for PRINTF records.
 * Usage: bpfrt_loader OBJ [--run] [--fmt ID=SIG]... */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/stp_records.h"

static char *sigs[256];

static int print_all(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
  (void)lvl;
  return vfprintf(stderr, fmt, ap);
}

static int find_var(struct bpf_object *obj, const char *sec, const char *name, size_t *off)
{
  struct btf *btf = bpf_object__btf(obj);
  int id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
  if (id < 0) return -1;
  const struct btf_type *t = btf__type_by_id(btf, id);
  const struct btf_var_secinfo *v = btf_var_secinfos(t);
  for (int i = 0; i < btf_vlen(t); i++, v++) {
    const struct btf_type *vt = btf__type_by_id(btf, v->type);
    if (strcmp(btf__name_by_offset(btf, vt->name_off), name) == 0) { *off = v->offset; return 0; }
  }
  return -1;
}

static void print_str(const char *p, uint32_t n)
{
  putchar('[');
  for (uint32_t i = 0; i < n; i++) {
    unsigned char ch = p[i];
    if (ch >= 0x20 && ch < 0x7f && ch != '\\') putchar(ch); else printf("\\x%02x", ch);
  }
  putchar(']');
}

static int on_record(void *ctx, void *data, size_t size)
{
  const struct stp_rec_hdr *h = data;
  const char *p = (const char *)(h + 1), *end = (const char *)data + size;
  static const char *names[] = {"?", "PRINTF", "LOG", "WARN", "ERROR", "EXIT", "HIST", "DROPS"};
  (void)ctx;
  if (h->len + sizeof(*h) != size) { printf("BADLEN %u %zu\n", h->len, size); return 0; }
  printf("%s %u:", h->type < 8 ? names[h->type] : "?", h->id);
  if (h->type == STP_REC_PRINTF) {
    const char *sig = sigs[h->id & 255] ? sigs[h->id & 255] : "";
    for (; *sig && p < end; sig++) {
      if (*sig == 'L') { printf(" %lld", *(long long *)p); p += 8; }
      else { uint32_t n = *(uint32_t *)p; putchar(' '); print_str(p + 4, n); p += STP_REC_STR_SIZE(n); }
    }
  } else if (h->type == STP_REC_LOG || h->type == STP_REC_WARN || h->type == STP_REC_ERROR) {
    uint32_t n = *(uint32_t *)p; putchar(' '); print_str(p + 4, n);
  } else if (h->type == STP_REC_HIST) {
    const struct stp_stat_base *s = (const void *)p;
    printf(" count=%lld sum=%lld min=%lld max=%lld buckets:", (long long)s->count, (long long)s->sum,
           (long long)s->min, (long long)s->max);
    const int64_t *b = (const int64_t *)(s + 1);
    for (int i = 0; (const char *)(b + i) < end; i++) if (b[i]) printf(" %d=%lld", i, (long long)b[i]);
  }
  putchar('\n');
  return 0;
}

int main(int argc, char **argv)
{
  int run = 0;
  const char *path = argv[1];
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--run")) run = 1;
    else if (!strcmp(argv[i], "--fmt") && i + 1 < argc) { int id = atoi(argv[++i]); sigs[id & 255] = strchr(argv[i], '=') + 1; }
  }
  static char log[1 << 24];
  LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = log, .kernel_log_size = sizeof log, .kernel_log_level = 1);
  libbpf_set_print(getenv("BPFRT_DEBUG") ? print_all : NULL);
  struct bpf_object *obj = bpf_object__open_file(path, &oo);
  if (!obj) { printf("open failed: %s\n", strerror(errno)); return 1; }
  int ncpu = libbpf_num_possible_cpus();
  struct bpf_map *m = bpf_object__find_map_by_name(obj, "stp_ctx");
  if (m) bpf_map__set_max_entries(m, 2 * ncpu);
  struct bpf_map *ro = bpf_object__find_map_by_name(obj, ".rodata");
  size_t off;
  if (ro && find_var(obj, ".rodata", "stp_config", &off) == 0) {
    size_t sz; char *init = (char *)bpf_map__initial_value(ro, &sz);
    struct stp_config cfg = {0};
    cfg.nr_cpus = ncpu; cfg.target_pid = 4242; cfg.runtime_pid = getpid(); cfg.runtime_uid = getuid();
    memcpy(init + off, &cfg, sizeof cfg);
    if (find_var(obj, ".rodata", "stp_probe_table", &off) == 0) {
      struct stp_probe_strings *ps = (void *)(init + off);
      strcpy(ps[0].pp, "kernel.trace(\"syscalls:sys_enter_getppid\")");
      strcpy(ps[0].pn, "syscall.getppid");
    }
  }
  if (bpf_object__load(obj)) {
    printf("LOAD FAILED: %s\n--- verifier log (tail) ---\n", strerror(errno));
    size_t n = strlen(log);
    fputs(log + (n > 6000 ? n - 6000 : 0), stdout);
    return 1;
  }
  struct bpf_program *prog;
  bpf_object__for_each_program(prog, obj) {
    struct bpf_prog_info info = {0}; __u32 len = sizeof info;
    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len);
    printf("loaded %s (%u xlated insns, verified %u)\n", bpf_program__name(prog), info.xlated_prog_len / 8,
           info.verified_insns);
  }
  if (!run) return 0;
  struct bpf_map *sm = bpf_object__find_map_by_name(obj, "stp_session");
  struct stp_session *sess = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(sm), 0);
  if (sess == MAP_FAILED) { perror("mmap stp_session"); return 1; }
  struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(obj, "stp_events")), on_record, NULL, NULL);
  bpf_object__for_each_program(prog, obj) {
    const char *sec = bpf_program__section_name(prog);
    if (strncmp(sec, "tracepoint/", 11)) continue;
    if (!bpf_program__attach(prog)) { printf("attach %s failed\n", sec); return 1; }
  }
  sess->state = STP_SESSION_RUNNING;
  /* The runtime wakes the reader only when a quarter of the ring waits (stp_bpf_output.h), as
   * ukstap polls: read what is there after each hit. */
  getppid();
  ring_buffer__consume(rb);
  getppid();  /* second hit: sees the session state left by the first */
  ring_buffer__consume(rb);
  printf("SESSION state=%u errors=%llu skipped=%llu drops=%llu exit=%u\n", sess->state,
         (unsigned long long)sess->errors, (unsigned long long)sess->skipped,
         (unsigned long long)sess->drops, sess->exit_requested);
  return 0;
}
