// The kernel ABI of BPF netfilter programs (Linux 6.4+), written out here because Debian 12's
// libbpf (1.1) and uapi headers (6.1) predate it: they have neither BPF_PROG_TYPE_NETFILTER,
// BPF_NETFILTER, link_create.netfilter nor bpf_program__attach_netfilter. The values and the
// layout are the kernel's uapi linux/bpf.h (checked against this kernel's BTF: `bpftool btf dump
// file /sys/kernel/btf/vmlinux format c`, union bpf_attr's link_create); they are ABI and do not
// change.
#pragma once

#include <cstdint>

namespace ukstap::loader::netfilter_abi {

constexpr int kProgTypeNetfilter = 32;   // enum bpf_prog_type BPF_PROG_TYPE_NETFILTER
constexpr int kAttachNetfilter = 45;     // enum bpf_attach_type BPF_NETFILTER

// union bpf_attr's link_create for a netfilter link: prog_fd, target_fd, attach_type, flags,
// then the union whose netfilter member is { pf, hooknum, priority, flags } (at offset 16: the
// union holds __u64 members). The kernel takes a shorter attr than its union and checks that
// the bytes it does not know are zero; this one ends after netfilter.flags.
struct LinkCreateAttr {
  uint32_t prog_fd = 0;
  uint32_t target_fd = 0;
  uint32_t attach_type = 0;
  uint32_t flags = 0;
  uint32_t pf = 0;         // NFPROTO_*
  uint32_t hooknum = 0;    // NF_INET_* ...
  int32_t priority = 0;
  uint32_t nf_flags = 0;   // BPF_F_NETFILTER_IP_DEFRAG: not used
};
static_assert(sizeof(LinkCreateAttr) == 32);
static_assert(__builtin_offsetof(LinkCreateAttr, pf) == 16);

}  // namespace ukstap::loader::netfilter_abi
