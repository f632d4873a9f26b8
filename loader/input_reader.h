// input.char and input.line (tapsets/input.stp): ukstap's standard input read by the pass 5
// event loop and handed, a byte or a line at a time, to the native probes of the input family.
//
// Only a script with such a probe makes ukstap read its standard input; otherwise fd 0 is never
// touched (the -c command inherits it either way, as SystemTap's does). What stdin may be:
//   a pipe or socket   watched by the event loop's epoll; read as data arrives
//   a regular file, /dev/null   epoll refuses them; they never block, read every round
//   a terminal         in the foreground: non-canonical, no echo (each key arrives when
//                      pressed, as stapprobes says), restored when the run ends or ukstap
//                      exits; in the background: not read (reading would stop ukstap, SIGTTIN)
//   closed             nothing to read (main.cpp puts /dev/null on a closed fd 0)
// End of input (or a read error) ends the reading, never the run.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ukstap {
namespace codegen {
struct ProbeInfo;
}

namespace loader {

class InputReader {
 public:
  using Run = std::function<void(const codegen::ProbeInfo&, const char* text)>;

  // The input probes among `probes`; a line is kept to `maxstringlen` - 1 bytes.
  InputReader(const std::vector<codegen::ProbeInfo>& probes, size_t maxstringlen);
  InputReader(const InputReader&) = delete;
  InputReader& operator=(const InputReader&) = delete;
  ~InputReader() { stop(); }

  // The script has input probes.
  bool wanted() const { return !chars_.empty() || !lines_.empty(); }
  // Starts reading fd 0 (a terminal switched to non-canonical mode). The descriptor for the
  // event loop to watch, or -1: nothing to read.
  int start();
  // Reads what stdin has now (a bounded amount, so the loop's other work goes on) and runs the
  // probes for it, checking `stopping` before each byte. At end of input, eof() turns true.
  void read_available(const std::function<bool()>& stopping, const Run& run);
  bool eof() const { return eof_; }
  // Stops reading and gives the terminal back its mode. Idempotent.
  void stop();

  // A line cut as SystemTap's input.line keeps it: the first `maxstringlen` - 1 bytes of the
  // line with its newline (unit tests).
  static void append_to_line(std::string& line, char c, size_t maxstringlen);

 private:
  void deliver(char c, const Run& run);

  std::vector<const codegen::ProbeInfo*> chars_, lines_;
  size_t maxstr_;
  std::string line_;
  bool started_ = false, eof_ = true;
};

}  // namespace loader
}  // namespace ukstap
