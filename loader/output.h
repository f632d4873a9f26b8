// Pass 5's record decoder: turns the runtime's records (common/stp_records.h) — from the ring
// buffer "stp_events" or straight from the native module — into SystemTap's text: printf output
// on stdout (or -o FILE), ERROR/WARNING lines on stderr, histograms (docs/STAP-FORMATS.md §1, §3, §5).
// Under `ukstap --profile` it prints no text: the samples are collected as structs instead.
#pragma once

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "loader/stack_frame.h"

struct stp_rec_ctx;

namespace ukstap {
class Session;
namespace codegen {
struct ModuleInfo;
}

namespace loader {

class UserStacks;
class KernelStacks;
class CtfOutput;

class Output {
 public:
  Output(Session& s, const codegen::ModuleInfo& m);
  ~Output();

  // -o FILE (strftime patterns expanded; opened with open_output_file()); stdout otherwise.
  // False with `why`.
  bool open(const std::string& file, std::string& why);
  // switch_file() (a STP_REC_SWITCH_FILE record) and -S SIZE[,N]: staprun's output rotation
  // (staprun(8)). Writing to stdout: nothing. -o FILE without -S: FILE, then FILE.1, FILE.2, ...;
  // with -S: FILE.0, FILE.1, ..., the next one when a write would take the current one past
  // SIZE MB, and only the last N kept. Each name's strftime patterns are expanded when it opens.
  void switch_file();
  // Decodes one record (several back to back are fine); malformed ones are counted and skipped.
  void record(const void* data, size_t len);
  // Writes out what stdio buffered. Every write is checked: the first failure (ENOSPC, EPIPE,
  // EIO, ...) is kept in write_error() and from then on output is discarded, so the run can
  // stop and say so instead of losing the rest silently.
  void flush();
  // Flushes and closes -o FILE (fclose's error counts: NFS and full disks report there).
  void close();
  // errno of the first failed write, 0 while every write succeeded.
  int write_error() const { return write_errno_; }
  // "standard output" or the -o file's name, for messages.
  const std::string& name() const { return name_; }
  // The descriptor written to (for poll: a pipe's reader closing shows as EPOLLERR).
  int fd() const;
  // A pipe or socket reader went away while nothing was being written (seen by poll).
  void reader_gone() { fail(EPIPE); }
  // USTACK records and deferred tokens in strings go through this (null: none expected).
  void set_user_stacks(UserStacks* u) { ustacks_ = u; }
  // KSTACK records and kernel tokens (null: none expected).
  void set_kernel_stacks(KernelStacks* k) { kstacks_ = k; }
  // `ukstap --profile` (before open()): the run's samples go to `samples` and nothing is
  // printed (open() opens no file). A printf of the sampling script's header format
  // (driver/profile_mode.h: "@@ukstap-sample PID TID COMM") starts a sample; the stack records
  // after it (print_backtrace(), print_ubacktrace()) append their frames.
  void collect_samples(std::vector<Sample>* samples);
  // `ukstap --ctf=DIR` (before open()): records that carry an event context (STP_REC_CTX_FLAG)
  // also become CTF events (ctf_output.h); the text goes only to -o FILE, if given.
  void set_ctf(CtfOutput* ctf) { ctf_ = ctf; }
  // s with its deferred stack and symbol tokens replaced by their text (unknown ones: "").
  std::string expand(std::string s) const;

  bool exit_requested = false;
  int errors = 0;          // ERROR records seen
  uint64_t dropped = 0;    // DROPS records (the kernel could not reserve ring-buffer space)
  uint64_t malformed = 0;  // records that did not decode

 private:
  void printf_record(uint16_t fmt_id, const unsigned char* p, size_t n);
  void hist_record(uint16_t stats_id, const unsigned char* p, size_t n);
  void error_record(uint16_t loc, const unsigned char* p, size_t n);
  void warn_record(const unsigned char* p, size_t n);
  void ustack_record(uint16_t flags, const unsigned char* p, size_t n);
  void kstack_record(uint16_t flags, const unsigned char* p, size_t n);
  void sample_header(const unsigned char* p, size_t n);
  void sample_frames(std::vector<Frame> frames);
  void put(const char* p, size_t n);          // every output byte goes through here
  bool open_named(long fnum, std::string& why);  // -o's file number fnum (-1: no suffix)
  void put(const std::string& t) { put(t.data(), t.size()); }
  void fail(int err);

  Session& s_;
  const codegen::ModuleInfo& m_;
  FILE* out_ = stdout;
  bool own_out_ = false;
  std::string name_ = "standard output";
  std::string pattern_;             // -o FILE as given (strftime patterns unexpanded)
  uint64_t size_max_ = 0;           // -S SIZE in bytes, 0 without -S
  long files_max_ = 0;              // -S's N, 0: keep every file
  long fnum_ = -1;                  // the current file's number (-1: FILE itself)
  uint64_t written_ = 0;            // bytes written to the current file
  std::vector<std::string> opened_; // names of the files opened, by number (for -S's N)
  // -o's directory, opened once when its name has no strftime pattern: every later file of a
  // rotation is made (and the oldest removed) in that very directory, even if its path now
  // leads elsewhere (a renamed parent, a planted link). -1: each name resolved when it opens.
  int dirfd_ = -1;
  int write_errno_ = 0;
  std::set<std::string> warned_;
  std::vector<char> fbuf_;  // formatting scratch (power-of-two capacity)
  UserStacks* ustacks_ = nullptr;
  KernelStacks* kstacks_ = nullptr;
  std::vector<Sample>* samples_ = nullptr;  // --profile: where samples go
  int sample_fmt_ = -1;                     // the format id of the sample header
  CtfOutput* ctf_ = nullptr;                 // --ctf: where events go
  const ::stp_rec_ctx* ctx_ = nullptr;    // --ctf: the context of the record being decoded
};

// Opens `path` for -o: created (0666 & ~umask) or truncated, close-on-exec. In a world-writable
// sticky directory (/tmp) anybody may have planted the name, so there it refuses to follow a
// symbolic link (O_NOFOLLOW) and refuses an existing file another user owns, a hard link to
// another file, or anything not a regular file: the kernel's fs.protected_symlinks and
// fs.protected_regular rules, applied whatever those sysctls say. -1 with `why` (one line).
int open_output_file(const std::string& path, std::string& why);
// The same, `path`'s last component created in the directory `dirfd` (open_output_dir(path));
// `path` names the file in messages.
int open_output_file_at(int dirfd, const std::string& path, std::string& why);
// An O_PATH descriptor of `path`'s directory ("." for a bare name), close-on-exec; -1 on error.
int open_output_dir(const std::string& path);

// Prints a histogram per docs/STAP-FORMATS.md §1. kind: 1 log, 2 linear. buckets[] as the runtime
// stores them (log: STP_HIST_LOG_BUCKETS; linear: (stop-start)/interval + 3).
std::string format_histogram(int kind, const int64_t* buckets, int nbuckets, int64_t start,
                             int64_t stop, int64_t interval);

}  // namespace loader
}  // namespace ukstap
