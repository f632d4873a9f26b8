/* ukstap runtime, native side: sorted foreach (stp_iter_*), included by stp_native.h.
 *
 * The loader tells the module each map's key layout (stp_native_map_layout: one letter per key
 * part, 'l' long / 's' string, and the value kind) from ModuleInfo::maps, so any key column can
 * be the sort key. Sort: column 0 = the value (stats: the `aggr` aggregate, default @count),
 * column i = key part i; direction +1 ascending, -1 descending, 0 unsorted. Ties keep the
 * order the map is walked in (the comparison falls back to that position: a stable sort).
 * `limit` < 0 means no limit. */
#ifndef STP_NATIVE_ITER_H
#define STP_NATIVE_ITER_H

struct stp_nlayout {
  const char *bpf_name;
  char key_types[16];
  int value_string;
  struct stp_nlayout *next;
};
static struct stp_nlayout *stp_n_layouts;

STP_EXPORT void stp_native_map_layout(const char *name, const char *key_types, int value_string)
{
  struct stp_nlayout *l = calloc(1, sizeof *l);
  if (!l) return;
  l->bpf_name = strdup(name);
  snprintf(l->key_types, sizeof l->key_types, "%s", key_types);
  l->value_string = value_string;
  l->next = stp_n_layouts;
  stp_n_layouts = l;
}

struct stp_iter {
  unsigned char *keys, *vals;
  size_t n, pos, ksz, vsz;
};

struct stp_n_sortctx {
  const struct stp_iter *it;
  int dir, is_string;
  size_t off;   /* offset of the sort field in key or value */
  int in_key;
  int by_seq;   /* break ties by the values' insertion numbers */
  size_t seq_off;  /* where the insertion number is in a value */
  int avg;      /* a statistic by @avg: sum / count (no running mean is kept without @variance) */
};
static struct stp_n_sortctx stp_n_sort;

static int stp_n_cmp(const void *pa, const void *pb)
{
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  const struct stp_iter *it = stp_n_sort.it;
  const unsigned char *ra = stp_n_sort.in_key ? it->keys + a * it->ksz : it->vals + a * it->vsz;
  const unsigned char *rb = stp_n_sort.in_key ? it->keys + b * it->ksz : it->vals + b * it->vsz;
  int r;
  int64_t x, y;
  if (stp_n_sort.is_string) {
    r = strncmp((const char *)ra + stp_n_sort.off, (const char *)rb + stp_n_sort.off, STP_MAXSTRINGLEN);
  } else if (stp_n_sort.avg) {
    const struct stp_stat_base *sa = (const void *)ra, *sb = (const void *)rb;
    x = sa->count ? sa->sum / sa->count : 0;
    y = sb->count ? sb->sum / sb->count : 0;
    r = x < y ? -1 : x > y ? 1 : 0;
  } else {
    memcpy(&x, ra + stp_n_sort.off, 8);
    memcpy(&y, rb + stp_n_sort.off, 8);
    r = x < y ? -1 : x > y ? 1 : 0;
  }
  if (r) return stp_n_sort.dir < 0 ? -r : r;
  if (stp_n_sort.by_seq) {
    /* Ties (and unsorted walks) in insertion order: the value's leading insertion number. */
    memcpy(&x, it->vals + a * it->vsz + stp_n_sort.seq_off, 8);
    memcpy(&y, it->vals + b * it->vsz + stp_n_sort.seq_off, 8);
    if (x != y) return (uint64_t)x < (uint64_t)y ? -1 : 1;
  }
  return a < b ? -1 : a > b ? 1 : 0;  /* stable */
}

static void stp_n_iter_begin(struct stp_common *ck, struct stp_iter *it, struct stp_nmap *m, int col,
                             int dir, const char *aggr, int64_t limit)
{
  size_t cap = 64, n = 0, i, *order;
  unsigned char *keys, *vals, *prev = NULL, *percpu = NULL;
  const struct stp_nlayout *lay;
  size_t stride = (m->value_size + 7) & ~7u;
  memset(it, 0, sizeof *it);
  it->ksz = m->key_size;
  it->vsz = m->value_size;
  if (m->fd < 0) return;
  keys = malloc(cap * m->key_size);
  vals = malloc(cap * m->value_size);
  if (m->percpu) percpu = malloc((size_t)stp_n_nr_cpus() * stride);
  /* At most max_entries keys: a hash walk restarts from the first key when the previous one
   * was deleted meanwhile (a kernel probe's delete), and must not go round for ever. */
  for (;;) {
    if (m->max_entries > 0 && n >= (size_t)m->max_entries) break;
    if (n == cap) {
      cap *= 2;
      keys = realloc(keys, cap * m->key_size);
      vals = realloc(vals, cap * m->value_size);
    }
    if (!keys || !vals) break;
    if (bpf_map_get_next_key(m->fd, prev, keys + n * m->key_size) != 0) break;
    prev = keys + n * m->key_size;
    if (m->percpu) {
      if (!percpu || bpf_map_lookup_elem(m->fd, prev, percpu) != 0) continue;
      stp_n_stat_agg(m, percpu, vals + n * m->value_size);
    } else if (bpf_map_lookup_elem(m->fd, prev, vals + n * m->value_size) != 0) {
      continue;
    }
    n++;
  }
  free(percpu);
  if (n > 1) {
    memset(&stp_n_sort, 0, sizeof stp_n_sort);
    stp_n_sort.it = it;
    stp_n_sort.dir = dir;
    stp_n_sort.by_seq = 1;
    stp_n_sort.seq_off = m->percpu ? offsetof(struct stp_stat_base, seq) : 0;
    for (lay = stp_n_layouts; lay; lay = lay->next)
      if (strcmp(lay->bpf_name, m->bpf_name) == 0) break;
    if (dir == 0) {
      stp_n_sort.in_key = 0;
      stp_n_sort.off = stp_n_sort.seq_off;  /* insertion order decides */
    } else if (col == 0) {
      stp_n_sort.in_key = 0;
      stp_n_sort.is_string = lay ? lay->value_string : 0;
      stp_n_sort.off = m->percpu ? 0 : 8;  /* after the insertion number */
      if (m->percpu) {
        if (aggr && !strcmp(aggr, "sum")) stp_n_sort.off = offsetof(struct stp_stat_base, sum);
        else if (aggr && !strcmp(aggr, "min")) stp_n_sort.off = offsetof(struct stp_stat_base, min);
        else if (aggr && !strcmp(aggr, "max")) stp_n_sort.off = offsetof(struct stp_stat_base, max);
        else if (aggr && !strcmp(aggr, "avg")) stp_n_sort.avg = 1;
        else stp_n_sort.off = offsetof(struct stp_stat_base, count);
      }
    } else {
      size_t off = 0;
      int k;
      stp_n_sort.in_key = 1;
      for (k = 0; lay && k < col - 1 && lay->key_types[k]; k++)
        off += lay->key_types[k] == 's' ? STP_MAXSTRINGLEN : lay->key_types[k] == 't' ? STP_TOKEN_KEY_SIZE : 8;
      stp_n_sort.off = off;
      stp_n_sort.is_string = lay && (lay->key_types[col - 1] == 's' || lay->key_types[col - 1] == 't');
    }
    it->keys = keys;
    it->vals = vals;
    order = malloc(n * sizeof *order);
    if (order) {
      unsigned char *k2 = malloc(n * m->key_size), *v2 = malloc(n * m->value_size);
      for (i = 0; i < n; i++) order[i] = i;
      qsort(order, n, sizeof *order, stp_n_cmp);
      if (k2 && v2) {
        for (i = 0; i < n; i++) {
          memcpy(k2 + i * m->key_size, keys + order[i] * m->key_size, m->key_size);
          memcpy(v2 + i * m->value_size, vals + order[i] * m->value_size, m->value_size);
        }
        free(keys);
        free(vals);
        keys = k2;
        vals = v2;
      } else {
        free(k2);
        free(v2);
      }
      free(order);
    }
  }
  it->keys = keys;
  it->vals = vals;
  it->n = limit >= 0 && (size_t)limit < n ? (size_t)limit : n;
  (void)ck;
}

static int stp_n_iter_next(struct stp_common *ck, struct stp_iter *it, void *key, void *val)
{
  (void)ck;
  if (it->pos >= it->n) return 0;
  memcpy(key, it->keys + it->pos * it->ksz, it->ksz);
  memcpy(val, it->vals + it->pos * it->vsz, it->vsz);
  it->pos++;
  return 1;
}

static void stp_n_iter_end(struct stp_common *ck, struct stp_iter *it)
{
  (void)ck;
  free(it->keys);
  free(it->vals);
  memset(it, 0, sizeof *it);
}

#define stp_iter_begin(c, it, NAME, col, dir, aggr, limit) \
  stp_n_iter_begin(&(c)->k, (it), &stp_nmap_##NAME, (col), (dir), (aggr), (limit))
#define stp_iter_next(c, it, key, val) stp_n_iter_next(&(c)->k, (it), (key), (val))
#define stp_iter_end(c, it) stp_n_iter_end(&(c)->k, (it))

#endif /* STP_NATIVE_ITER_H */
