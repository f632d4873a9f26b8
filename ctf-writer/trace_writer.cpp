// The writer process, seen from ukstap (trace_writer.h).
#include "ctf-writer/trace_writer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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
  size_t off = 0;
  while (fd_ >= 0 && !send_errno && off < enc_.b.size()) {
    ssize_t n = ::send(fd_, enc_.b.data() + off, enc_.b.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      send_errno = errno;
      break;
    }
    off += static_cast<size_t>(n);
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
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !send_errno) return true;
  why = "the CTF writer of '" + dir_ + "' failed";
  if (send_errno) why += std::string(": ") + std::strerror(send_errno);
  else if (WIFSIGNALED(status)) why += " (signal " + std::to_string(WTERMSIG(status)) + ")";
  return false;
}

}  // namespace ukstap::ctf
