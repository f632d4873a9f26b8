// procfs("PATH").read[.maxsize(N)], procfs("PATH").write and the same without ("PATH") (PATH
// "command"), with .umask(U) before .read/.write (stapprobes PROCFS). SystemTap's kernel-module
// runtime makes /proc/systemtap/MODULE/PATH; its BPF runtime, like ukstap, makes a FIFO in
// /var/tmp/systemtap-USER/MODULE/ served from user space (loader/procfs_files.cpp): the probe is
// native, its $value the string it hands to a reader (.read) or was given by a writer (.write).
#include <string>

#include "driver/diagnostics.h"
#include "driver/session.h"
#include "probes/internal.h"

namespace ukstap::probes {

namespace {

void build_procfs(Session& s, const Match& m, std::vector<ResolvedPoint>& out) {
  ProcfsPoint pf;
  pf.path = m.str("procfs", "command");
  // A plain file name: the FIFO lives in ukstap's own directory, never elsewhere.
  if (pf.path.empty() || pf.path.find('/') != std::string::npos || pf.path == "." ||
      pf.path == ".." || pf.path.size() > 200)
    throw SemanticError("procfs file name '" + pf.path + "' must be a plain file name (no '/')",
                        m.tok("procfs"));
  // ".new.NAME" is the name the loader gives a FIFO while it replaces NAME (procfs_files.cpp).
  if (pf.path.rfind(".new.", 0) == 0)
    throw SemanticError("procfs file name '" + pf.path + "' is reserved ('.new.' names a file ukstap is replacing)",
                        m.tok("procfs"));
  pf.is_write = m.has("write");
  if (m.has("maxsize")) {
    int64_t n = m.num("maxsize");
    if (n <= 0 || n > (64 << 20))
      throw SemanticError("maxsize must be between 1 and 64 MiB", m.tok("maxsize"));
    pf.maxsize = n;
  }
  if (m.has("umask")) {
    int64_t u = m.num("umask");
    if (u < 0 || u > 0777) throw SemanticError("umask must be between 0 and 0777", m.tok("umask"));
    pf.umask = static_cast<int>(u);
  }
  ResolvedPoint rp;
  rp.point = make_point(s, *m.pp, concrete_components(m));
  rp.family = pf;
  rp.target_vars.push_back({"$value", "string"});
  out.push_back(std::move(rp));
}

}  // namespace

void add_procfs_patterns(std::vector<Pattern>& out) {
  for (ArgKind path : {ArgKind::String, ArgKind::None}) {
    for (bool umask : {false, true}) {
      std::vector<PatternComponent> head{{"procfs", path}};
      if (umask) head.push_back({"umask", ArgKind::Number});
      auto read = head, read_max = head, write = head;
      read.push_back({"read", ArgKind::None});
      read_max.push_back({"read", ArgKind::None});
      read_max.push_back({"maxsize", ArgKind::Number});
      write.push_back({"write", ArgKind::None});
      out.push_back({read, build_procfs});
      out.push_back({read_max, build_procfs});
      out.push_back({write, build_procfs});
    }
  }
}

}  // namespace ukstap::probes
