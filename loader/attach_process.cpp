// process.begin/end, process.thread.begin/end, process.syscall[.return]: raw and BTF
// tracepoints named by the programs' sections (runtime/bpf/stp_bpf_process.h), which libbpf
// attaches from the section name. process.begin is three programs (stp_probe_ID, _fork,
// _seen): the runner's attach loop reads the id from each name and comes here for each one.
#include <bpf/libbpf.h>

#include "loader/attach.h"

namespace ukstap::loader {

bool attach_process(AttachContext& cx, const probes::ProcessPoint&, const codegen::ProbeInfo&,
                    struct bpf_program* prog) {
  return keep_link(cx, bpf_program__attach(prog));
}

}  // namespace ukstap::loader
