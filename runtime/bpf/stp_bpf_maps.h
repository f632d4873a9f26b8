/* ukstap BPF runtime: associative arrays and statistics.
 *
 * Arrays are BPF hash maps "stp_map_<name>" (LRU hash for `%` wrap-around arrays); statistics
 * are per-CPU hash maps "stp_stat_<name>" so stat_add never contends, aggregated on read over
 * every possible CPU with bpf_map_lookup_percpu_elem. Keys are compared bytewise: generated
 * code zeroes a key (STP_ZERO) before filling it.
 */
#ifndef STP_BPF_MAPS_H
#define STP_BPF_MAPS_H

#define STP_DEFINE_MAP(name, K, V, max, wrap)                                           \
  typedef K stp_map_##name##_key_t;                                                     \
  typedef V stp_map_##name##_val_t;                                                     \
  struct {                                                                              \
    __uint(type, (wrap) ? BPF_MAP_TYPE_LRU_HASH : BPF_MAP_TYPE_HASH);                   \
    __uint(max_entries, (max));                                                         \
    __type(key, K);                                                                     \
    __type(value, V);                                                                   \
  } stp_map_##name SEC(".maps")

/* Value copy: small values inline, large ones (strings) with one helper call. */
static __always_inline void stp__copy(void *dst, const void *src, uint32_t size)
{
  bpf_probe_read_kernel(dst, size, src);
}

#define stp_map_get(c, NAME, key, val)                                                  \
  do {                                                                                  \
    void *stp__v = bpf_map_lookup_elem(&stp_map_##NAME, (key));                         \
    if (stp__v)                                                                         \
      stp__copy((val), stp__v, sizeof(stp_map_##NAME##_val_t));                         \
    else                                                                                \
      STP_ZERO(c, (stp_map_##NAME##_val_t *)(val));                                     \
  } while (0)

/* The first 8 bytes of every array value are its insertion number (generated code lays values
 * out as { uint64_t seq; v }): kept across updates, new for a new key, so user space can iterate
 * in insertion order and break sort ties the way SystemTap's list-ordered maps do. */
STP_SUBPROG int stp__map_set(struct stp_common *k, void *map, const void *key, void *val)
{
  uint64_t *old = bpf_map_lookup_elem(map, key);
  long rc;
  if (old) {
    *(uint64_t *)val = *old;
  } else {
    struct stp_session *s = stp__session();
    *(uint64_t *)val = s ? __sync_fetch_and_add(&s->seq, 1) + 1 : 0;
  }
  rc = bpf_map_update_elem(map, key, val, BPF_ANY);
  if (rc < 0) {
    /* -E2BIG: full hash map (stap names the array through the location of the statement) */
    stp__error(k, "Array overflow, check MAXMAPENTRIES", STP_LOC_CURRENT);
    return -1;
  }
  return 0;
}
#define stp_map_set(c, NAME, key, val) stp__map_set(&(c)->k, &stp_map_##NAME, (key), (val))
#define stp_map_exists(c, NAME, key) (bpf_map_lookup_elem(&stp_map_##NAME, (key)) != 0)
#define stp_map_delete(c, NAME, key) ((void)bpf_map_delete_elem(&stp_map_##NAME, (key)))

static long stp__clear_cb(void *map, const void *key, void *val, void *ctx)
{
  bpf_map_delete_elem(map, key);
  return 0;
}
#define stp_map_clear(c, NAME) ((void)bpf_for_each_map_elem(&stp_map_##NAME, stp__clear_cb, 0, 0))
/* `delete s[k]` / `delete s` of a statistic: its map is stp_stat_NAME. */
#define stp_stat_delete(c, NAME, key) ((void)bpf_map_delete_elem(&stp_stat_##NAME, (key)))
#define stp_stat_clear(c, NAME) ((void)bpf_for_each_map_elem(&stp_stat_##NAME, stp__clear_cb, 0, 0))

/* ---- statistics ------------------------------------------------------------------------- */
enum { stp__stats_id_base = __COUNTER__ + 1 };

/* Stats ids (HIST records, ModuleInfo::stats) are the order of STP_DEFINE_STATS in the file:
 * nothing else in generated code may use __COUNTER__. */
#define STP_DEFINE_STATS(name, K, V, max, kind, start, stop, interval)                  \
  typedef K stp_stat_##name##_key_t;                                                    \
  typedef V stp_stat_##name##_t;                                                        \
  enum { stp_stats_id_##name = __COUNTER__ - stp__stats_id_base };                      \
  typedef char stp_stat_##name##_fits[sizeof(V) <= STP_ZERO_SIZE &&                     \
                                      sizeof(V) <= STP_REC_CAP - 8 ? 1 : -1];           \
  struct {                                                                              \
    __uint(type, BPF_MAP_TYPE_PERCPU_HASH);                                             \
    __uint(max_entries, (max));                                                         \
    __type(key, K);                                                                     \
    __type(value, V);                                                                   \
  } stp_stat_##name SEC(".maps");                                                       \
  static __always_inline int64_t stp_stat_##name##_bucket(int64_t v)                    \
  {                                                                                     \
    if ((kind) == STP_HIST_LOG)                                                         \
      return stp_hist_log_index(v);                                                     \
    if ((kind) == STP_HIST_LINEAR)                                                      \
      return stp_hist_linear_index(v, (start), (interval),                              \
                                   stp_hist_linear_nbuckets((start), (stop), (interval))); \
    return -1;                                                                          \
  }

/* A BPF call takes at most five arguments: bucket (int32, -1 for none), nbuckets (16 bits) and
 * shift (8 bits) travel packed in `where` (STP__STAT_WHERE). */
#define STP__STAT_WHERE(bucket, nbuckets, shift)                                        \
  ((uint64_t)(uint32_t)(int32_t)(bucket) | ((uint64_t)((nbuckets) & 0xffff) << 32) |    \
   ((uint64_t)((shift) & 0xff) << 48))
STP_SUBPROG void stp__stat_add(struct stp_common *k, void *map, const void *key, int64_t v,
                               uint64_t where)
{
  int64_t bucket = (int32_t)(uint32_t)where;
  uint32_t nbuckets = (uint32_t)(where >> 32) & 0xffff;
  int shift = (int)(where >> 48) & 0xff;
  struct stp_stat_base *s = bpf_map_lookup_elem(map, key);
  if (!s) {
    long rc = bpf_map_update_elem(map, key, stp__zero_area, BPF_NOEXIST);
    if (rc < 0 && rc != -EEXIST) {
      stp__error(k, "Array overflow, check MAXMAPENTRIES", STP_LOC_CURRENT);
      return;
    }
    s = bpf_map_lookup_elem(map, key);
    if (!s)
      return;
  }
  if (!s->seq) {  /* first value for this key on this CPU: an insertion number */
    struct stp_session *ss = stp__session();
    s->seq = ss ? (int64_t)__sync_fetch_and_add(&ss->seq, 1) + 1 : 0;
  }
  stp_stat_update_shift(s, v, shift);
  if (bucket >= 0 && bucket < nbuckets)
    ((int64_t *)(s + 1))[bucket]++;
}
#define stp_stat_add(c, NAME, key, v)                                                   \
  stp__stat_add(&(c)->k, &stp_stat_##NAME, (key), (v),                                  \
                STP__STAT_WHERE(stp_stat_##NAME##_bucket(v),                            \
                                STP_STAT_NBUCKETS(stp_stat_##NAME##_t), 0))
/* A statistic read with @variance(NAME, shift): its running mean/m2 kept at that precision. */
#define stp_stat_add_shift(c, NAME, key, v, shift)                                      \
  stp__stat_add(&(c)->k, &stp_stat_##NAME, (key), (v),                                  \
                STP__STAT_WHERE(stp_stat_##NAME##_bucket(v),                            \
                                STP_STAT_NBUCKETS(stp_stat_##NAME##_t), (shift)))

/* Aggregation: one bpf_loop callback per CPU (verified once, whatever the CPU count). */
struct stp__agg_ctx {
  void *map;
  const void *key;
  struct stp_stat_base *agg;
  uint32_t nbuckets;
};

static long stp__agg_cb(uint32_t cpu, void *data)
{
  struct stp__agg_ctx *a = data;
  struct stp_stat_base *s = bpf_map_lookup_percpu_elem(a->map, a->key, cpu);
  uint32_t j, nb = a->nbuckets;
  if (!s)
    return 1;  /* past the last CPU */
  stp_stat_merge(a->agg, s);
  for (j = 0; j < STP_HIST_LOG_BUCKETS * 64; j++) {
    if (j >= nb)
      break;
    ((int64_t *)(a->agg + 1))[j] += ((int64_t *)(s + 1))[j];
  }
  return 0;
}

static __always_inline void stp__stat_get(void *map, const void *key, struct stp_stat_base *agg,
                                          uint32_t size)
{
  struct stp__agg_ctx a = { map, key, agg, (size - sizeof(struct stp_stat_base)) / 8 };
  uint32_t ncpu = stp_config.nr_cpus;
  bpf_probe_read_kernel(agg, size, stp__zero_area);
  if (!bpf_map_lookup_elem(map, key))
    return;  /* absent on one CPU = absent on all: count 0 */
  bpf_loop(ncpu ? ncpu : STP_MAX_CPUS, stp__agg_cb, &a, 0);
}
#define stp_stat_get(c, NAME, key, agg)                                                 \
  stp__stat_get(&stp_stat_##NAME, (key), (struct stp_stat_base *)(agg),                \
                sizeof(stp_stat_##NAME##_t))

/* print(@hist_*(NAME[key])): aggregate straight into a HIST record; user space prints it.
 * An empty aggregate raises "empty aggregate" (docs/STAP-FORMATS.md §1). */
static __always_inline void stp__print_hist(struct stp_common *k, void *map, const void *key,
                                            int id, uint32_t size)
{
  struct stp_stat_base *agg = (struct stp_stat_base *)&k->rec[STP_REC_BODY];
  stp__rec_begin(k, STP_REC_HIST, id);
  stp__stat_get(map, key, agg, size);
  if (agg->count == 0) {
    stp__error(k, "empty aggregate", STP_LOC_CURRENT);
    return;
  }
  k->rec_pos = STP_REC_BODY + size;
  stp__rec_end(k);
}
#define stp_print_hist(c, NAME, key)                                                    \
  stp__print_hist(&(c)->k, &stp_stat_##NAME, (key), stp_stats_id_##NAME,               \
                  sizeof(stp_stat_##NAME##_t))

#endif /* STP_BPF_MAPS_H */
