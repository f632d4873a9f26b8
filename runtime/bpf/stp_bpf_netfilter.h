/* ukstap BPF runtime: the netfilter probe family (translator/probes/netfilter_family.cpp).
 *
 * A probe is a BPF_PROG_TYPE_NETFILTER program (Linux 6.4+), linked by the loader at its
 * (pf, hook, priority) (loader/attach_netfilter.cpp). Its context is struct bpf_nf_ctx
 * { state, skb } and its return value is the packet's verdict, which the kernel's verifier
 * limits to NF_DROP (0) or NF_ACCEPT (1): SystemTap's other verdicts (nf_stolen, nf_queue,
 * nf_repeat, nf_stop) cannot be returned, and assigning one to $verdict is a run-time error.
 *
 * The section name says nothing to Debian's libbpf 1.1, which predates this program type: the
 * loader sets the type and expected attach type itself (loader/netfilter_abi.h).
 *
 * The body runs inlined in an outer program that starts from NF_ACCEPT and returns the
 * verdict the body left: a probe that cannot run (its context busy, an error) never drops. */
#ifndef STP_BPF_NETFILTER_H
#define STP_BPF_NETFILTER_H

#define STP_NF_DROP 0
#define STP_NF_ACCEPT 1

#define STP_PROBE_NETFILTER(id)                                                         \
  STP__PROBE_INFO(id, STP_SLOT_NORMAL, 0, 0)                                            \
  static __always_inline int stp__nf_body_##id(struct bpf_nf_ctx *ctx, int *stp__nf_verdict); \
  SEC("netfilter") int stp_probe_##id(struct bpf_nf_ctx *ctx)                           \
  {                                                                                     \
    int verdict = STP_NF_ACCEPT;                                                        \
    stp__nf_body_##id(ctx, &verdict);                                                   \
    return verdict == STP_NF_DROP ? STP_NF_DROP : STP_NF_ACCEPT;                        \
  }                                                                                     \
  static __always_inline int stp__nf_body_##id(struct bpf_nf_ctx *ctx, int *stp__nf_verdict)

/* $verdict (read, and written in guru mode), $skb, $in, $out (stapprobes NETFILTER HOOKS). */
#define STP_NF_VERDICT(c) ((int64_t)*stp__nf_verdict)
#define STP_NF_SET_VERDICT(c, v) stp__nf_set_verdict(&(c)->k, stp__nf_verdict, (v))
#define STP_NF_SKB(c) ((int64_t)(unsigned long)ctx->skb)
#define STP_NF_IN(c) ((int64_t)(unsigned long)BPF_CORE_READ(ctx->state, in))
#define STP_NF_OUT(c) ((int64_t)(unsigned long)BPF_CORE_READ(ctx->state, out))

static __always_inline void stp__nf_set_verdict(struct stp_common *k, int *verdict, int64_t v)
{
  if (v != STP_NF_DROP && v != STP_NF_ACCEPT) {
    stp__error(k, "$verdict can only be nf_drop (0) or nf_accept (1): a BPF netfilter program "
                  "returns no other verdict", STP_LOC_CURRENT);
    return;
  }
  *verdict = (int)v;
}

#endif /* STP_BPF_NETFILTER_H */
