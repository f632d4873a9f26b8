/* ukstap BPF runtime: stacks aggregated in the kernel (ustack_id(), kstack_id(); tapsets/
 * stackid.stp).
 *
 * ustack_id()/kstack_id() return a long naming the current stack: a 64-bit FNV-1a hash of its
 * content. The pcs are stored once per id in a hash map ("stp_ustacks" / "stp_kstacks", value
 * struct stp_ustack + MAXBACKTRACE pcs, common/stp_records.h), so `s[ustack_id()] <<< 1` counts
 * in the kernel and sends nothing per event; print_ustack_id(id) & co. emit a record naming the
 * id, and user space reads the pcs from the map when it prints it.
 *
 * A user stack's id covers the tgid (and where the exact frames end): the same addresses in two
 * processes may be different code, and the stored (tgid, first event's time) is what user space
 * symbolizes against, with the VMA tracker's history of that process. So ids group the events
 * of one process; two processes running one program get different ids (their addresses differ
 * anyway under ASLR). A kernel stack's id covers the pcs only. A context without a stack (kernel
 * thread, user-mode sample for kstack_id) gets one id per probe, printed
 * `<no user backtrace at PP>` / `<no kernel backtrace at PP>`.
 *
 * MAXSTACKS (default 16384, `-D MAXSTACKS=N`) bounds each map; entries are allocated as they come
 * (BPF_F_NO_PREALLOC). When a map is full the id is still returned but its stack is not stored:
 * stp_session.stacks_lost counts them and ukstap warns at exit.
 */
#ifndef STP_BPF_STACKID_H
#define STP_BPF_STACKID_H

#ifndef MAXSTACKS
# define MAXSTACKS 16384
#endif

struct stp_stack_val {
  struct stp_ustack h;
  uint64_t pcs[MAXBACKTRACE];
};

/* A map of stacks by id: ustack_id()/kstack_id() and the ubacktrace() key tokens each have one. */
#define STP__STACK_MAP(name)                      \
  struct {                                        \
    __uint(type, BPF_MAP_TYPE_HASH);              \
    __uint(max_entries, MAXSTACKS);               \
    __uint(map_flags, BPF_F_NO_PREALLOC);         \
    __type(key, uint64_t);                        \
    __type(value, struct stp_stack_val);          \
  } name SEC(".maps")

STP__STACK_MAP(stp_ustacks);
STP__STACK_MAP(stp_kstacks);

/* The stacks of ubacktrace() keys kept as ids (stp__ustack_hex_token below). A map of their
 * own: a map without preallocation starts with one free element per CPU, and a timer sample
 * (NMI) that stored a new stack in one map twice (ustack_id() and a token of the same stack)
 * found none for the second (run_kstack.sh's profile aggregation lost one). */
STP__STACK_MAP(stp_ubtstacks);

#if STP_REC_CAP < 8 * MAXBACKTRACE + 64
# error "MAXBACKTRACE too large for the record scratch: raise MAXSTRINGLEN"
#endif

/* Which map stp__stack_store writes (a constant at every call: the verifier wants the map). */
#define STP__STACKS_USER 0
#define STP__STACKS_KERNEL 1
#define STP__STACKS_UBT 2
#define STP__STACKS_MAP(which) \
  ((which) == STP__STACKS_KERNEL ? (void *)&stp_kstacks \
                                 : (which) == STP__STACKS_UBT ? (void *)&stp_ubtstacks : (void *)&stp_ustacks)

/* Store the stack under id unless it is there already (one lookup in the common case; none
 * when this context's last user stack had the same id: entries are never deleted while the
 * programs run, and an event's stack is mostly the one before). The value is built in the
 * record scratch (too big for the BPF stack). */
static __always_inline int64_t stp__stack_store(struct stp_common *k, int kernel, uint64_t id,
                                                uint32_t pid, const uint64_t *pcs, uint32_t n,
                                                uint32_t exact, uint32_t stop)
{
  struct stp_stack_val *v = (struct stp_stack_val *)k->rec;
  uint64_t *last = kernel == STP__STACKS_KERNEL ? 0 : &k->uw.stored_id[kernel == STP__STACKS_UBT];
  long rc;
  if (last && *last == id)
    return (int64_t)id;
  if (bpf_map_lookup_elem(STP__STACKS_MAP(kernel), &id)) {
    if (last)
      *last = id;
    return (int64_t)id;
  }
  if (n > MAXBACKTRACE)
    n = MAXBACKTRACE;
  v->h.pid = pid;
  v->h.tid = (uint32_t)bpf_get_current_pid_tgid();
  v->h.time_ns = bpf_ktime_get_ns();
  v->h.token = id;
  v->h.probe_id = (uint16_t)k->probe_id;
  v->h.nr = (uint16_t)n;
  v->h.exact = (uint16_t)exact;
  v->h.kind = n ? STP_USTACK_PCS : STP_USTACK_NO_USER;
  v->h.stop = (uint8_t)stop;
#ifndef STP_NO_CHAIN_CACHE
  /* A user walk's pcs may still be in the caller-chain cache (a lazy hit: copied only here). */
  if (kernel != STP__STACKS_KERNEL && n && !(pcs = stp__chain_pcs(&k->uw))) {
    struct stp_session *s = stp__session();
    if (s)
      stp__count(&s->stacks_lost);
    return (int64_t)id;
  }
#endif
  if (n) {
    /* Clamped in the helper's register (STP_CLAMP_REG): clang drops the mask it proves
     * useless (n <= MAXBACKTRACE), and 6.1's verifier had lost n's bound: "R2 unbounded". */
    uint32_t bytes = n * 8;
    STP_CLAMP_REG(bytes, 8 * MAXBACKTRACE);
    bpf_probe_read_kernel(v->pcs, bytes, pcs);
  }
  rc = bpf_map_update_elem(STP__STACKS_MAP(kernel), &id, v, BPF_NOEXIST);
  if (last && (rc == 0 || rc == -EEXIST))
    *last = id;
  if (rc != 0 && rc != -EEXIST) {
    struct stp_session *s = stp__session();
    if (s)
      stp__count(&s->stacks_lost);
  }
  return (int64_t)id;
}

static __always_inline int64_t stp__ustack_id(struct stp_common *k)
{
  uint64_t h;
  stp__uwalk_pcs_opt(k, 1);  /* the pcs are read only to store a new id */
  if (k->uw.stop == STP_STOP_NO_USER) {
    h = stp_fnv_u64(STP_FNV_OFFSET, 0x100000000ull | (uint32_t)k->probe_id);
    k->uw.n = 0;
  } else {
    h = stp_fnv_u64(k->uw.hash, k->uw.exact);
  }
  h = stp_stack_token(h, STP_USTACK_ID, STP_TOKEN_USER);  /* the letter as flags: a user and a
                                                            kernel id of equal pcs differ */
  return stp__stack_store(k, 0, h, k->uw.tgid, k->uw.pcs, k->uw.n, k->uw.exact, k->uw.stop);
}

static __always_inline int64_t stp__kstack_id(struct stp_common *k, void *ctx)
{
  uint64_t h;
  stp__kwalk(k, ctx);
  h = k->kw.n ? k->kw.hash : stp_fnv_u64(STP_FNV_OFFSET, 0x100000000ull | (uint32_t)k->probe_id);
  h = stp_stack_token(h, STP_USTACK_ID, STP_TOKEN_KERNEL);
  return stp__stack_store(k, 1, h, 0, k->kw.pcs, k->kw.n, k->kw.n, 0);
}

/* The 16 hex digits of v's low 32 bits (8 digits, most significant first) as one word in
 * memory order: the nibbles spread to bytes, byte-swapped, turned into '0'..'9' / 'a'..'f'
 * without a branch. stp_token_str's digit loop was 16 stores and compares per token. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
# error "stp__hex8_word and stp__token_key_copy assume little-endian words"
#endif
static __always_inline uint64_t stp__hex8_word(uint32_t x)
{
  uint64_t v = x, letter;
  v = (v | (v << 16)) & 0x0000ffff0000ffffull;
  v = (v | (v << 8)) & 0x00ff00ff00ff00ffull;
  v = (v | (v << 4)) & 0x0f0f0f0f0f0f0f0full;  /* nibble i in byte i */
  v = __builtin_bswap64(v);                     /* the top nibble first in memory */
  letter = ((v + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;  /* 1 where >= 10 */
  return v + 0x3030303030303030ull + letter * ('a' - '0' - 10);
}

/* stp_token_str(buf, token, letter) as words (buf: STP_TOKEN_LEN + 1 bytes, any alignment). */
static __always_inline void stp__token_str_words(char *buf, uint64_t token, char letter)
{
  buf[0] = STP_TOKEN_START;
  buf[1] = letter;
  *(uint64_t *)(void *)(buf + 2) = stp__hex8_word((uint32_t)(token >> 32));
  *(uint64_t *)(void *)(buf + 10) = stp__hex8_word((uint32_t)token);
  buf[18] = STP_TOKEN_END;
  buf[19] = '\0';
}

/* ubacktrace() whose value is only an array key or printed (passes/backtrace_tokens.h): the
 * pcs stored under their content id and a token naming it (letter H), which user space prints
 * as ubacktrace()'s hex list. No formatting in the kernel and no MAXSTRINGLEN cut. Without user
 * registers ubacktrace() is "\n": so is this. */
static __always_inline void stp__ustack_hex_token(struct stp_common *k, char *buf)
{
  uint64_t id;
  stp__uwalk_pcs_opt(k, 1);  /* the pcs are read only to store a new id */
  if (k->uw.stop == STP_STOP_NO_USER) {
    buf[0] = '\n';
    buf[1] = '\0';
    return;
  }
  /* The id: FNV over the pcs alone (the walk keeps it, uw->phash): ubacktrace()'s text is the
   * pcs, so equal texts from two processes are one key, as SystemTap's string keys are. */
  id = stp_stack_token(k->uw.phash, STP_USTACK_HEXSTR, STP_TOKEN_HEXID);
  stp__stack_store(k, STP__STACKS_UBT, id, k->uw.tgid, k->uw.pcs, k->uw.n, k->uw.exact, k->uw.stop);
  stp__token_str_words(buf, id, STP_TOKEN_HEXID);
}
#define _stp_ustack_hex_token(buf) stp__ustack_hex_token(&c->k, (buf))
/* A key field that only ever holds such a token (STP_TOKEN_KEY_SIZE bytes, not MAXSTRINGLEN:
 * the map hashes the whole key on every lookup), zeroed before (build_key's STP_ZERO): the
 * token's bytes up to its NUL, as plain loads (a string helper call cost a fifth of a cached
 * walk). src is a string in BPF memory (a ubacktrace() result or a key variable). */
static __always_inline void stp__token_key_copy(char *dst, const char *src)
{
  /* A token (STP_TOKEN_LEN bytes, none of them NUL, then a NUL): its 20 bytes as three loads.
   * Anything else (a shorter string, "\n" without user registers) byte by byte. */
#if STP_MAXSTRINGLEN >= STP_TOKEN_LEN + 1  /* src holds at least as many bytes */
  uint64_t w0 = *(const uint64_t *)(const void *)src;
  uint64_t w1 = *(const uint64_t *)(const void *)(src + 8);
  uint32_t w2 = *(const uint32_t *)(const void *)(src + 16);
#define STP__HAS_NUL(w, ones, highs) (((w) - (ones)) & ~(w) & (highs))
  if (!STP__HAS_NUL(w0, 0x0101010101010101ull, 0x8080808080808080ull) &&
      !STP__HAS_NUL(w1, 0x0101010101010101ull, 0x8080808080808080ull) &&
      !STP__HAS_NUL(w2 | 0xff000000u, 0x01010101u, 0x80808080u) && !(w2 >> 24)) {
    *(uint64_t *)(void *)dst = w0;
    *(uint64_t *)(void *)(dst + 8) = w1;
    *(uint32_t *)(void *)(dst + 16) = w2;
    return;
  }
#undef STP__HAS_NUL
#endif
#pragma unroll
  for (int i = 0; i < STP_TOKEN_KEY_SIZE - 1; i++) {
    char ch = src[i];
    if (!ch)
      break;
    dst[i] = ch;
  }
}
#define stp_token_key_copy(c, dst, src) stp__token_key_copy((dst), (const char *)(src))

/* print_ustack_id(id) & co.: a record naming the id (user space reads the map). */
static __always_inline void stp__stackid_rec(struct stp_common *k, int type, char letter, char *buf,
                                             int64_t id, int flags)
{
  uint64_t token = buf ? stp_value_token((uint64_t)id, STP_USTACK_ID, flags) : 0;
  struct stp_ustack *u = stp__stackrec_begin(k, type, flags, STP_USTACK_ID, token);
  u->nr = 1;
  u->exact = 1;
  stp__rec_long(k, id);
  stp__rec_end(k);
  if (buf)
    stp_token_str(buf, token, letter);
}

#define _stp_ustack_id() stp__ustack_id(&c->k)
#define _stp_kstack_id() stp__kstack_id(&c->k, ctx)
#define _stp_ustack_id_print(id, flags) \
  stp__stackid_rec(&c->k, STP_REC_USTACK, STP_TOKEN_USER, 0, (id), (flags))
#define _stp_ustack_id_sprint(buf, n, id, flags) \
  stp__stackid_rec(&c->k, STP_REC_USTACK, STP_TOKEN_USER, (buf), (id), (flags))
#define _stp_kstack_id_print(id, flags) \
  stp__stackid_rec(&c->k, STP_REC_KSTACK, STP_TOKEN_KERNEL, 0, (id), (flags))
#define _stp_kstack_id_sprint(buf, n, id, flags) \
  stp__stackid_rec(&c->k, STP_REC_KSTACK, STP_TOKEN_KERNEL, (buf), (id), (flags))

#endif /* STP_BPF_STACKID_H */
