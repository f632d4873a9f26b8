// Syscall probes whose handlers are the same code run as one BPF program (issue 17: start-up).
//
// `probe syscall.* { n++ }` is 361 probes whose handlers differ only in their probe id: the
// slot in the context's locals union (c->l.p<id>) and the id given to STP_PROBE_ENTER. Emitted
// one by one, clang compiled 361 copies (~2 s of pass 4) and the verifier checked 361 programs
// at every start (~0.4 s). Behind the syscall dispatcher a program is a value in a prog array,
// so one program can stand at many numbers: the first probe of each group of same-text handlers
// (same direction and dispatcher slot) is written, and it finds the probe it runs from the
// syscall number (runtime/bpf/stp_bpf_syscall_shared.h). The others are written nowhere; their
// ProbeInfo::program names the program that runs them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ukstap::codegen {

class SharedSyscallPrograms {
 public:
  // A dispatched probe's handler: `head` its first lines (the point's comment), `body` the rest,
  // written for probe `id` (STP_PROBE_SYSCALL(id, ..), STP_PROBE_ENTER(id), c->l.p<id>.),
  // `frame` the declarations of its locals' struct. Returns the id of the probe whose program
  // runs it: `id` when it is the first of its kind.
  int add(int id, bool exit, int slot, int nr, const std::string& head, const std::string& body,
          const std::vector<std::string>& frame);
  // The handlers, each program once, in the order their first probe came.
  std::string text() const;

  // The body with the probe's own id replaced (what two handlers must share to be one
  // program), and the string literals copied into a local (`name = "read"` in every syscall
  // alias: stp_str_copy(c, DST, "read");) replaced by a placeholder, each appended to `literals`.
  static std::string canonical(int id, const std::string& body, std::vector<std::string>* literals);

 private:
  struct Member {
    int nr = 0, id = 0;
    std::vector<std::string> literals;  // as C literals, quotes included
  };
  struct Group {
    int rep = 0;
    std::string head, body;  // body: canonical, literals as "@L@"
    std::vector<Member> members;  // rep first
  };
  std::vector<Group> groups_;
  std::map<std::string, size_t> by_key_;
};

}  // namespace ukstap::codegen
