// procfs("NAME").read probes at pass 5: SystemTap's BPF runtime serves them as FIFOs in
// /var/tmp/systemtap-USER/MODULE/ (stapprobes, PROCFS), and so does ukstap, MODULE being -m's
// name or ukstap_PID. The directory is made 0700 by the effective user (a pre-existing one is
// refused: never follow a symlink or reuse what someone else may have made), one FIFO per file,
// mode 0400 or from .umask(U), all removed at exit.
//
// Serving: every round of the event loop (≤ 20 ms) tries to open each FIFO for writing without
// blocking, which succeeds only while a reader has it open. Then the probe runs natively, its
// $value is written to the reader, and the FIFO is replaced by a fresh one before the write end
// closes: the reader reads $value then EOF, and the next open (a next reader) meets a new pipe,
// never the old reader still draining the first copy. A .write FIFO (mode 0200) is held open
// for reading; each round's data runs the probe with it as $value, once per read() chunk.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ukstap {
namespace codegen {
struct ModuleInfo;
struct ProbeInfo;
}  // namespace codegen

namespace loader {

class ProcfsFiles {
 public:
  ProcfsFiles() = default;
  ProcfsFiles(const ProcfsFiles&) = delete;
  ProcfsFiles& operator=(const ProcfsFiles&) = delete;
  ~ProcfsFiles() { remove(); }

  // Makes the directory and a FIFO per procfs probe of `m`; nothing when there is none. False
  // with the reason in `why`.
  bool create(const codegen::ModuleInfo& m, const std::string& module_name, std::string& why);
  bool empty() const { return files_.empty(); }
  const std::string& dir() const { return dir_; }

  // Runs `run(probe, "")` (which returns $value) for each .read FIFO a reader has open, and
  // writes it; for a .write FIFO, `run(probe, data)` for each chunk a writer wrote.
  void serve(
      const std::function<std::string(const codegen::ProbeInfo&, const std::string&)>& run);

  // Removes the FIFOs and the directory (idempotent).
  void remove();

 private:
  struct File {
    const codegen::ProbeInfo* probe;
    std::string path;
    unsigned mode;
    bool write = false;
    int fd = -1;  // .write: our read end, held open so that writers' opens do not block
  };
  void serve_write(File& f,
                   const std::function<std::string(const codegen::ProbeInfo&,
                                                   const std::string&)>& run);
  bool make_fifo(const File& f, std::string& why);

  std::string dir_;
  std::vector<File> files_;
};

}  // namespace loader
}  // namespace ukstap
