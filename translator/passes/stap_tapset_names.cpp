// Listed from SystemTap 4.8's tapset directory (its linux/ and top-level files; bpf/ and
// dyninst/ define no other families): the first component of each `probe NAME... =` alias and
// each global array not marked private nor named with a leading underscore. Families ukstap
// serves itself (syscall, syscall_any, process, kernel, timer, perf, begin, end, ...) are not
// listed: those are resolved, or explained, by the probe families.
#include "passes/stap_tapset_names.h"

#include <map>

namespace ukstap::passes {

const char* stap_alias_tapset(const std::string& family) {
  static const std::map<std::string, const char*> families = {
      {"nd_syscall", "linux/sysc_*.stp"},    {"dw_syscall", "linux/sysc_*.stp"},
      {"tp_syscall", "linux/sysc_*.stp"},    {"nd1_syscall", "linux/sysc_*.stp"},
      {"nd2_syscall", "linux/sysc_*.stp"},   {"nfs", "linux/nfs.stp"},
      {"nfsd", "linux/nfsd.stp"},            {"sunrpc", "linux/rpc.stp"},
      {"generic", "linux/vfs.stp"},          {"vfs", "linux/vfs.stp"},
      {"signal", "linux/signal.stp"},        {"netfilter", "linux/netfilter.stp"},
      {"socket", "linux/socket.stp"},        {"scheduler", "linux/scheduler.stp"},
      {"tcp", "linux/tcp.stp"},              {"udp", "linux/udp.stp"},
      {"vm", "linux/memory.stp"},            {"netdev", "linux/networking.stp"},
      {"tty", "linux/tty.stp"},              {"ipmib", "linux/ipmib.stp"},
      {"linuxmib", "linux/linuxmib.stp"},    {"tcpmib", "linux/tcpmib.stp"},
      {"scsi", "linux/scsi.stp"},            {"kprocess", "linux/kprocess.stp"},
      {"tp_kprocess", "linux/kprocess.stp"}, {"dw_kprocess", "linux/kprocess.stp"},
      {"ioscheduler", "linux/ioscheduler.stp"},
      {"ioscheduler_trace", "linux/ioscheduler.stp"},
      {"ioblock", "linux/ioblock.stp"},      {"ioblock_trace", "linux/ioblock.stp"},
      {"irq_handler", "linux/irq.stp"},      {"softirq", "linux/irq.stp"},
      {"workqueue", "linux/irq.stp"},        {"json_data", "linux/json.stp"},
      {"stap", "stap_staticmarkers.stp"},    {"staprun", "stap_staticmarkers.stp"},
      {"stapio", "stap_staticmarkers.stp"},  {"python", "python.stp"},
      {"prometheus", "prometheus.stp"},      {"input", "input.stp"},
      {"init", "argv.stp"},
  };
  auto it = families.find(family);
  return it == families.end() ? nullptr : it->second;
}

const char* stap_global_tapset(const std::string& name) {
  static const std::map<std::string, const char*> globals = {
      {"argv", "argv.stp"},
      {"ActiveOpens", "linux/tcpmib.stp"},  {"AttemptFails", "linux/tcpmib.stp"},
      {"CurrEstab", "linux/tcpmib.stp"},    {"EstabResets", "linux/tcpmib.stp"},
      {"InSegs", "linux/tcpmib.stp"},       {"OutRsts", "linux/tcpmib.stp"},
      {"OutSegs", "linux/tcpmib.stp"},      {"PassiveOpens", "linux/tcpmib.stp"},
      {"RetransSegs", "linux/tcpmib.stp"},
      {"InReceives", "linux/ipmib.stp"},    {"InNoRoutes", "linux/ipmib.stp"},
      {"InAddrErrors", "linux/ipmib.stp"},  {"InUnknownProtos", "linux/ipmib.stp"},
      {"InDiscards", "linux/ipmib.stp"},    {"ForwDatagrams", "linux/ipmib.stp"},
      {"OutRequests", "linux/ipmib.stp"},   {"ReasmTimeout", "linux/ipmib.stp"},
      {"ReasmReqds", "linux/ipmib.stp"},    {"FragOKs", "linux/ipmib.stp"},
      {"FragFails", "linux/ipmib.stp"},
      {"DelayedACKs", "linux/linuxmib.stp"}, {"ListenOverflows", "linux/linuxmib.stp"},
      {"ListenDrops", "linux/linuxmib.stp"}, {"TCPMemoryPressures", "linux/linuxmib.stp"},
  };
  auto it = globals.find(name);
  return it == globals.end() ? nullptr : it->second;
}

const char* stap_point_unavailable(const std::string& point) {
  // SystemTap's linux/memory.stp: kernel.function("handle_mm_fault").return (fault_type). The
  // exceptions:page_fault_user/kernel tracepoints (vm.pagefault) mark a fault's start only.
  if (point == "vm.pagefault.return")
    return "SystemTap's is a kprobe on the return of handle_mm_fault, and no tracepoint marks "
           "the end of a page fault (this kernel has no kprobes)";
  // SystemTap's linux/scheduler.stp: kernel.function probes. A task switched in runs
  // finish_task_switch; sched:sched_switch fires in the task switched out (scheduler.cpu_off).
  if (point == "scheduler.cpu_on")
    return "SystemTap's is a kprobe on finish_task_switch, which runs in the task switched in; "
           "no tracepoint fires there (sched_switch fires in the task switched out: "
           "scheduler.cpu_off) and this kernel has no kprobes";
  if (point == "scheduler.tick")
    return "SystemTap's is a kprobe on scheduler_tick; no tracepoint fires there and this kernel "
           "has no kprobes";
  if (point == "scheduler.balance")
    return "SystemTap's is a kprobe on idle_balance; no tracepoint fires there "
           "and this kernel has no kprobes";
  return nullptr;
}

}  // namespace ukstap::passes
