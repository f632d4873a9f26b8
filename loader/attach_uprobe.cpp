// process("PATH").function("NAME")[.return] and .mark("NAME"): a uprobe (uretprobe) at the
// instruction's file offset, with the SDT semaphore's offset as its reference counter.
#include <bpf/libbpf.h>

#include "loader/attach.h"

namespace ukstap::loader {

bool attach_uprobe(AttachContext& cx, const probes::UprobePoint& u, const codegen::ProbeInfo&,
                   struct bpf_program* prog) {
  LIBBPF_OPTS(bpf_uprobe_opts, uo);
  uo.retprobe = u.is_return;
  uo.ref_ctr_offset = u.sdt ? u.sdt->semaphore_offset : 0;
  pid_t pid = u.pid ? static_cast<pid_t>(u.pid) : -1;  // -1: every process
  return keep_link(cx, bpf_program__attach_uprobe_opts(prog, pid, u.path.c_str(), u.offset, &uo));
}

}  // namespace ukstap::loader
