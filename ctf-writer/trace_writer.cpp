// The writer process, seen from ukstap (trace_writer.h).
#include "ctf-writer/trace_writer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "ctf-writer/trace_dir.h"

namespace ukstap::ctf {

CtfTrace::~CtfTrace() {
  std::string why;
  close(why);
}

bool CtfTrace::open(const std::string& dir, std::string& why) {
  if (!prepare_trace_dir(dir, why)) return false;
  dir_ = dir;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    why = "cannot start the CTF writer: " + std::string(std::strerror(errno));
    return false;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    why = "cannot start the CTF writer: " + std::string(std::strerror(errno));
    ::close(sv[0]);
    ::close(sv[1]);
    return false;
  }
  if (pid == 0) {
    // Its own process group: ^C at the terminal stops ukstap, whose EOF then ends the writer.
    ::setpgid(0, 0);
    // dup2 clears close-on-exec, except when sv[1] already is fd 3 (stdout or stderr closed):
    // then it does nothing, and the flag is cleared here.
    if (sv[1] == 3) ::fcntl(3, F_SETFD, 0);
    else ::dup2(sv[1], 3);
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
    }
    const char* argv[] = {"ukstap-ctf-writer", dir.c_str(), nullptr};
    ::execv("/proc/self/exe", const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(sv[1]);
  // Room for bursts: while the writer catches up, ukstap keeps draining the BPF ring into the
  // socket instead of waiting on it (the ring drops what it cannot hold). Root may exceed
  // net.core.wmem_max (SO_SNDBUFFORCE); otherwise the default stays.
  int sndbuf = kSocketBytes;
  if (::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) != 0)
    ::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  fd_ = sv[0];
  pid_ = pid;
  return true;
}

void CtfTrace::end_message() {
  uint32_t len = static_cast<uint32_t>(enc_.b.size() - msg_start_ - 4);
  std::memcpy(&enc_.b[msg_start_], &len, 4);
  if (enc_.b.size() >= 65536) flush();
}

void CtfTrace::init(uint64_t realtime_offset_ns, std::vector<std::pair<std::string, std::string>> env,
                    const std::vector<FieldSpec>& common) {
  env.insert(env.begin(), {"tracer_name", kTracerName});
  msg_start_ = enc_.b.size();
  enc_.u32(0);
  enc_.u8(static_cast<uint8_t>(Kind::Init));
  enc_.u64(realtime_offset_ns);
  enc_.str("monotonic");
  enc_.u32(static_cast<uint32_t>(env.size()));
  for (auto& [k, v] : env) {
    enc_.str(k);
    enc_.str(v);
  }
  enc_.u32(static_cast<uint32_t>(common.size()));
  for (const FieldSpec& f : common) enc_.spec(f);
  end_message();
}

uint32_t CtfTrace::define_class(const std::string& name, const std::vector<FieldSpec>& fields) {
  msg_start_ = enc_.b.size();
  enc_.u32(0);
  enc_.u8(static_cast<uint8_t>(Kind::Class));
  enc_.u32(classes_);
  enc_.str(name);
  enc_.u32(static_cast<uint32_t>(fields.size()));
  for (const FieldSpec& f : fields) enc_.spec(f);
  end_message();
  return classes_++;
}

uint32_t CtfTrace::define_symbol(std::string_view text) {
  msg_start_ = enc_.b.size();
  enc_.u32(0);
  enc_.u8(static_cast<uint8_t>(Kind::Symbol));
  enc_.u32(symbols_);
  enc_.u32(static_cast<uint32_t>(text.size()));
  enc_.b.append(text);
  end_message();
  return symbols_++;
}

void CtfTrace::discarded(uint32_t cpu, uint64_t ts_ns, uint64_t count) {
  msg_start_ = enc_.b.size();
  enc_.u32(0);
  enc_.u8(static_cast<uint8_t>(Kind::Discarded));
  enc_.u32(cpu);
  enc_.u64(ts_ns);
  enc_.u64(count);
  end_message();
}

Encoder& CtfTrace::begin_event(uint32_t class_id, uint64_t ts_ns, uint32_t cpu) {
  msg_start_ = enc_.b.size();
  enc_.u32(0);
  enc_.u8(static_cast<uint8_t>(Kind::Event));
  enc_.u32(class_id);
  enc_.u64(ts_ns);
  enc_.u32(cpu);
  return enc_;
}

void CtfTrace::end_event() {
  ++events;
  end_message();
}

void CtfTrace::flush() {
  using Clock = std::chrono::steady_clock;
  size_t off = 0;
  Clock::time_point progress = Clock::now();
  bool stopping = false;
  // Non-blocking sends and poll(): a blocking send() is restarted after a signal (SA_RESTART)
  // and would keep ukstap, its probes attached, waiting for a stuck writer forever.
  while (fd_ >= 0 && !send_errno && off < enc_.b.size()) {
    ssize_t n = ::send(fd_, enc_.b.data() + off, enc_.b.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<size_t>(n);
      progress = Clock::now();
      continue;
    }
    if (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      send_errno = errno;
      break;
    }
    if (!stopping && stop_requested_ && stop_requested_()) {
      stopping = true;
      progress = Clock::now();  // the grace counts from the signal
    }
    if (stopping && Clock::now() - progress > std::chrono::milliseconds(kStopGraceMs)) {
      send_errno = ETIMEDOUT;  // the writer takes nothing: the rest is dropped
      break;
    }
    struct pollfd p = {fd_, POLLOUT, 0};
    ::poll(&p, 1, 100);  // EINTR or timeout: look at the stop flag again
  }
  bytes_sent += off;
  enc_.b.clear();
}

bool CtfTrace::close(std::string& why) {
  if (fd_ < 0) return true;
  flush();
  ::close(fd_);
  fd_ = -1;
  int status = 0;
  bool killed = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kFinishSeconds);
  for (;;) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);  // also ends a stopped writer
      killed = true;
    }
    ::usleep(20000);
  }
  pid_ = -1;
  if (killed) {
    why = "the CTF writer of '" + dir_ + "' did not finish within " + std::to_string(kFinishSeconds) +
          " s after the end of the run and was killed: the trace may be incomplete";
    return false;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !send_errno) return true;
  why = "the CTF writer of '" + dir_ + "' failed";
  if (send_errno == ETIMEDOUT) why += ": it took no events for " + std::to_string(kStopGraceMs / 1000) + " s after the stop signal";
  else if (send_errno) why += std::string(": ") + std::strerror(send_errno);
  else if (WIFSIGNALED(status)) why += " (signal " + std::to_string(WTERMSIG(status)) + ")";
  return false;
}

}  // namespace ukstap::ctf
