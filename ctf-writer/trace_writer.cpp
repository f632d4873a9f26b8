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
  who_ = "the CTF writer of '" + dir + "'";
  return start("/proc/self/exe", {"ukstap-ctf-writer", dir}, {}, why);
}

bool CtfTrace::open_exe(const std::string& exe, const std::string& who, const std::vector<std::string>& env,
                        std::string& why) {
  who_ = who;
  return start(exe, {exe}, env, why);
}

bool CtfTrace::start(const std::string& exe, const std::vector<std::string>& args, const std::vector<std::string>& env,
                     std::string& why) {
  // argv and the environment are made before fork(): the child only calls async-signal-safe
  // functions.
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_s = env;
  for (char** e = environ; *e; ++e) env_s.push_back(*e);
  std::vector<char*> envp;
  for (const std::string& e : env_s) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    why = "cannot start " + who_ + ": " + std::string(std::strerror(errno));
    return false;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    why = "cannot start " + who_ + ": " + std::string(std::strerror(errno));
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
    ::execve(exe.c_str(), argv.data(), envp.data());
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

// A message's length is known at its end: begin_message leaves 4 bytes that end_message fills.
void CtfTrace::begin_message(Kind kind) {
  msg_start_ = enc_.b.size();
  enc_.u32(0);
  enc_.u8(static_cast<uint8_t>(kind));
}

void CtfTrace::end_message() {
  uint32_t len = static_cast<uint32_t>(enc_.b.size() - msg_start_ - 4);
  std::memcpy(&enc_.b[msg_start_], &len, 4);
  if (enc_.b.size() >= 65536) flush();
}

void CtfTrace::init(uint64_t realtime_offset_ns, std::vector<std::pair<std::string, std::string>> env,
                    const std::vector<FieldSpec>& common) {
  // The environment by which Trace Compass and babeltrace2 know LTTng-UST's event layout
  // (LTTng-UST 2.13 writes these keys; ours are checked against such a trace in
  // testsuite/e2e/run_lttng_live.sh): Trace Compass opens a trace as LTTng-UST only when
  // domain = "ust", and runs its debug-info analysis (lttng_ust_statedump events, the vpid and
  // ip contexts) only when tracer_name = "lttng-ust" with tracer_major.tracer_minor >= 2.8, both
  // integers. The events it reads there are laid out as LTTng-UST 2.13 lays them out
  // (ctf-writer/statedump.h); babeltrace2 2.0's LTTng quirks do not apply to 2.13. `producer`
  // says who wrote the trace (and marks it for trace_dir.h).
  std::vector<std::pair<std::string, std::string>> own = {
      {"domain", "ust"}, {"tracer_name", "lttng-ust"}, {"tracer_major", "2"}, {"tracer_minor", "13"},
      {kProducerKey, kTracerName}};
  std::erase_if(env, [&](const auto& kv) {
    for (const auto& o : own)
      if (o.first == kv.first) return true;
    return false;
  });
  env.insert(env.begin(), own.begin(), own.end());
  begin_message(Kind::Init);
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
  begin_message(Kind::Class);
  enc_.u32(classes_);
  enc_.str(name);
  enc_.u32(static_cast<uint32_t>(fields.size()));
  for (const FieldSpec& f : fields) enc_.spec(f);
  end_message();
  return classes_++;
}

uint32_t CtfTrace::define_symbol(std::string_view text) {
  begin_message(Kind::Symbol);
  enc_.u32(symbols_);
  enc_.u32(static_cast<uint32_t>(text.size()));
  enc_.b.append(text);
  end_message();
  return symbols_++;
}

void CtfTrace::discarded(uint32_t cpu, uint64_t ts_ns, uint64_t count) {
  begin_message(Kind::Discarded);
  enc_.u32(cpu);
  enc_.u64(ts_ns);
  enc_.u64(count);
  end_message();
}

Encoder& CtfTrace::begin_event(uint32_t class_id, uint64_t ts_ns, uint32_t cpu) {
  begin_message(Kind::Event);
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
    why = who_ + " did not finish within " + std::to_string(kFinishSeconds) +
          " s after the end of the run and was killed: the trace may be incomplete";
    return false;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !send_errno) return true;
  why = who_ + " failed";
  if (send_errno == ETIMEDOUT) why += ": it took no events for " + std::to_string(kStopGraceMs / 1000) + " s after the stop signal";
  else if (send_errno) why += std::string(": ") + std::strerror(send_errno);
  else if (WIFSIGNALED(status)) why += " (signal " + std::to_string(WTERMSIG(status)) + ")";
  return false;
}

}  // namespace ukstap::ctf
