// process.begin/end, process.thread.begin/end: raw (or BTF) sched tracepoints, named by the
// program's section (STP_PROBE_RAW_TP), which libbpf attaches from the section name.
#include <bpf/libbpf.h>

#include "loader/attach.h"

namespace ukstap::loader {

bool attach_process(AttachContext& cx, const probes::ProcessPoint&, const codegen::ProbeInfo&,
                    struct bpf_program* prog) {
  return keep_link(cx, bpf_program__attach(prog));
}

}  // namespace ukstap::loader
