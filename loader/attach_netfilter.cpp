// netfilter.hook(...).pf(...): a BPF_PROG_TYPE_NETFILTER program linked at the point's (pf,
// hooknum, priority) with BPF_LINK_CREATE, through bpf(2) itself: Debian's libbpf 1.1 knows
// neither the program type nor the link (loader/netfilter_abi.h). The link's fd is ours; closing
// it (Runner::detach, or the kernel when ukstap dies) unregisters the hook.
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include <cerrno>
#include <climits>

#include "loader/attach.h"
#include "loader/netfilter_abi.h"

namespace ukstap::loader {

namespace {
constexpr int kPriorityTries = 256;  // places tried after the point's own priority is taken
}  // namespace

void prepare_netfilter_program(struct bpf_program* prog) {
  bpf_program__set_type(prog, static_cast<enum bpf_prog_type>(netfilter_abi::kProgTypeNetfilter));
  bpf_program__set_expected_attach_type(
      prog, static_cast<enum bpf_attach_type>(netfilter_abi::kAttachNetfilter));
}

bool attach_netfilter(AttachContext& cx, const probes::NetfilterPoint& nf,
                      const codegen::ProbeInfo&, struct bpf_program* prog) {
  if (!nf.unservable.empty()) {  // pass 2 refused or dropped it; an object compiled elsewhere
    errno = EAFNOSUPPORT;
    return false;
  }
  netfilter_abi::LinkCreateAttr attr;
  attr.prog_fd = static_cast<uint32_t>(bpf_program__fd(prog));
  attr.attach_type = netfilter_abi::kAttachNetfilter;
  attr.pf = nf.pf;
  attr.hooknum = nf.hooknum;
  attr.priority = nf.priority;
  // The kernel keeps one BPF program per (pf, hook, priority) and answers EBUSY for a second
  // (net/netfilter/core.c). SystemTap runs hooks of equal priority in registration order:
  // the same here, each next probe one place later (netfilter.*.* hooks netfilter.ip.X and
  // netfilter.ipv4.X on the same point; another tool's program may hold the place too).
  int fd = -1;
  for (int step = 0; step < kPriorityTries; ++step) {
    fd = static_cast<int>(::syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof attr));
    if (fd >= 0 || errno != EBUSY || attr.priority >= INT_MAX - 1) break;
    ++attr.priority;
  }
  if (fd < 0) return false;
  cx.link_fds->push_back(fd);
  return true;
}

}  // namespace ukstap::loader
