#include "loader/input_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "codegen/module_info.h"

namespace ukstap::loader {

namespace {

// The terminal's mode before start(), put back by stop() or, when ukstap leaves by exit()
// elsewhere, by an atexit handler.
struct termios g_saved_mode;
bool g_mode_changed = false;

void restore_terminal() {
  if (!g_mode_changed) return;
  ::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved_mode);
  g_mode_changed = false;
}

constexpr size_t kChunk = 4096;
constexpr int kChunksPerRound = 16;  // 64 KiB, then back to the rings and timers

}  // namespace

InputReader::InputReader(const std::vector<codegen::ProbeInfo>& probes, size_t maxstringlen)
    : maxstr_(maxstringlen ? maxstringlen : 1) {
  for (auto& p : probes) {
    auto* in = p.family.get<probes::InputPoint>();
    if (!in || !p.native) continue;
    (in->unit == probes::InputPoint::Unit::Line ? lines_ : chars_).push_back(&p);
  }
}

int InputReader::start() {
  if (!wanted() || started_) return -1;
  started_ = true;
  eof_ = true;
  if (::fcntl(STDIN_FILENO, F_GETFD) < 0) return -1;  // closed
  if (::isatty(STDIN_FILENO)) {
    if (::tcgetpgrp(STDIN_FILENO) != ::getpgrp()) return -1;  // background: SIGTTIN
    struct termios mode;
    if (::tcgetattr(STDIN_FILENO, &mode) == 0) {
      g_saved_mode = mode;
      mode.c_lflag &= ~(ICANON | ECHO);
      mode.c_cc[VMIN] = 1;
      mode.c_cc[VTIME] = 0;
      if (::tcsetattr(STDIN_FILENO, TCSANOW, &mode) == 0) {
        static bool registered = false;
        if (!registered) registered = std::atexit(restore_terminal) == 0;
        g_mode_changed = true;
      }
    }
  }
  eof_ = false;
  return STDIN_FILENO;
}

void InputReader::append_to_line(std::string& line, char c, size_t maxstringlen) {
  if (line.size() + 1 < maxstringlen) line += c;
}

void InputReader::deliver(char c, const Run& run) {
  const char text[2] = {c, 0};
  for (auto* p : chars_) run(*p, text);
  if (lines_.empty()) return;
  append_to_line(line_, c, maxstr_);
  if (c != '\n') return;
  for (auto* p : lines_) run(*p, line_.c_str());
  line_.clear();
}

void InputReader::read_available(const std::function<bool()>& stopping, const Run& run) {
  for (int round = 0; round < kChunksPerRound && !eof_; ++round) {
    // poll() says whether a read would wait (epoll cannot watch regular files and /dev/null;
    // poll reports them always readable, and their reads do not wait).
    struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
    int n = ::poll(&pfd, 1, 0);
    if (n < 0 && errno == EINTR) return;
    if (n < 0 || (pfd.revents & POLLNVAL)) {
      eof_ = true;
      return;
    }
    if (n == 0) return;  // nothing yet
    char buf[kChunk];
    size_t want = sizeof buf;
    // Read only what is there: poll's "readable" may be stale when another reader of the same
    // pipe (the -c command, a pipeline sibling) took the bytes, and a read() then would block
    // the event loop (rings, timers, Ctrl-C). No bytes means the end when the pipe or terminal
    // hung up or a regular file is read to its end; otherwise try again next round.
    int avail = 0;
    if (::ioctl(STDIN_FILENO, FIONREAD, &avail) == 0) {
      if (avail <= 0) {
        struct stat st;
        bool regular = ::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode);
        if ((pfd.revents & (POLLHUP | POLLERR)) || regular) eof_ = true;
        return;
      }
      want = std::min(want, static_cast<size_t>(avail));
    }
    ssize_t got = ::read(STDIN_FILENO, buf, want);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) {  // end of input, or an error (EIO: the terminal went away)
      eof_ = true;
      return;
    }
    for (ssize_t i = 0; i < got; ++i) {
      if (stopping()) return;
      deliver(buf[i], run);
    }
  }
}

void InputReader::stop() {
  eof_ = true;
  restore_terminal();
}

}  // namespace ukstap::loader
