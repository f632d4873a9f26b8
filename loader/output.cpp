#include "loader/output.h"
#include "loader/ctf_output.h"
#include "loader/kstack_output.h"
#include "loader/ustack_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "codegen/module_info.h"
#include "common/stp_records.h"
#include "common/stp_usnap.h"
#include "driver/profile_mode.h"
#include "driver/session.h"

#include "common/stp_format.h"

namespace ukstap::loader {

using Conv = ast::FormatComponent::Conv;

namespace {

int fmt_flags(char flag) {
  switch (flag) {
    case '0': return STP_FLAG_ZERO;
    case '+': return STP_FLAG_PLUS;
    case '-': return STP_FLAG_MINUS;
    case ' ': return STP_FLAG_SPACE;
    case '#': return STP_FLAG_ALT;
    default: return 0;
  }
}

int fmt_conv(Conv c) {
  switch (c) {
    case Conv::SignedDec: return STP_CONV_d;
    case Conv::UnsignedDec: return STP_CONV_u;
    case Conv::Octal: return STP_CONV_o;
    case Conv::HexLower: return STP_CONV_x;
    case Conv::HexUpper: return STP_CONV_X;
    case Conv::Pointer: return STP_CONV_p;
    case Conv::Char: return STP_CONV_c;
    case Conv::String: return STP_CONV_s;
    case Conv::Binary: return STP_CONV_b;
    case Conv::Memory: return STP_CONV_m;
    case Conv::MemoryHex: return STP_CONV_M;
    default: return STP_CONV_d;
  }
}

// Every conversion goes through common/stp_format.h, the code the BPF and native sprintf use.
constexpr uint32_t kFmtCap = 1u << 16;

struct Reader {
  const unsigned char* p;
  size_t n, off = 0;
  bool ok = true;
  int64_t num() {
    if (off + 8 > n) {
      ok = false;
      return 0;
    }
    int64_t v;
    std::memcpy(&v, p + off, 8);
    off += 8;
    return v;
  }
  std::string str() {
    if (off + 4 > n) {
      ok = false;
      return "";
    }
    uint32_t len;
    std::memcpy(&len, p + off, 4);
    size_t sz = STP_REC_STR_SIZE(len);
    if (off + sz > n) {
      ok = false;
      return "";
    }
    std::string s(reinterpret_cast<const char*>(p + off + 4), len);
    off += sz;
    return s;
  }
};

int digits_of(int64_t v) { return (int)std::to_string(v).size(); }

}  // namespace

std::string format_histogram(int kind, const int64_t* buckets, int nbuckets, int64_t start,
                             int64_t stop, int64_t interval) {
  (void)stop;
  std::string out;
  if (nbuckets <= 0) return out;
  auto label = [&](int i, std::string& text, int64_t& value) {
    if (kind == STP_HIST_LOG) {
      if (i == STP_HIST_LOG_ZERO) value = 0;
      else if (i > STP_HIST_LOG_ZERO) value = (int64_t)1 << (i - STP_HIST_LOG_ZERO - 1);
      else value = -((int64_t)1 << (STP_HIST_LOG_ZERO - 1 - i));
      text = std::to_string(value);
    } else {
      if (i == 0) {
        value = start;
        text = "<" + std::to_string(start);
      } else if (i == nbuckets - 1) {
        value = start + (int64_t)(nbuckets - 3) * interval;
        text = ">" + std::to_string(value);
      } else {
        value = start + (int64_t)(i - 1) * interval;
        text = std::to_string(value);
      }
    }
  };
  int first = -1, last = -1;
  int64_t maxc = 0;
  for (int i = 0; i < nbuckets; i++) {
    if (buckets[i] > 0) {
      if (first < 0) first = i;
      last = i;
      maxc = std::max(maxc, buckets[i]);
    }
  }
  if (first < 0) {
    first = last = kind == STP_HIST_LOG ? STP_HIST_LOG_ZERO : 1;
  }
  int low = std::max(0, first - 2), high = std::min(nbuckets - 1, last + 2);
  if (kind == STP_HIST_LOG) {
    bool negative = false;
    for (int i = 0; i < STP_HIST_LOG_ZERO; i++) negative |= buckets[i] > 0;
    if (!negative) low = std::max(low, STP_HIST_LOG_ZERO);
  } else {
    if (low == 0 && buckets[0] == 0) low = 1;
    if (high == nbuckets - 1 && buckets[high] == 0) high = nbuckets - 2;
  }
  int64_t scale = maxc <= 50 ? 1 : (maxc + 49) / 50;
  // val_space: digits of the low and high labels (+1 if < or > shown), at least 5.
  std::string lt, ht;
  int64_t lv, hv;
  label(low, lt, lv);
  label(high, ht, hv);
  int vs = std::max(digits_of(lv), kind == STP_HIST_LINEAR ? digits_of(start + interval * (int64_t)high) : digits_of(hv));
  vs = std::max(vs, 5);
  bool over = kind == STP_HIST_LINEAR && (low == 0 || high == nbuckets - 1);
  if (over) {
    int w = std::max(kind == STP_HIST_LINEAR ? digits_of(start + interval * (int64_t)high) : 0, digits_of(lv)) + 1;
    vs = std::max(vs, w);
  }
  int cnt_space = digits_of(maxc);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%*s |", vs, "value");
  out += buf;
  out += std::string(50, '-');
  out += " count\n";
  bool elided = false;
  for (int i = low; i <= high; i++) {
    bool skip = buckets[i] == 0;
    for (int j = std::max(low, i - 2); skip && j <= std::min(high, i + 2); j++) skip = buckets[j] == 0;
    if (skip) {
      elided = true;
      continue;
    }
    if (elided) {
      out += std::string(vs, ' ') + " ~\n";
      elided = false;
    }
    std::string t;
    int64_t v;
    label(i, t, v);
    int64_t bars = buckets[i] / scale;
    std::snprintf(buf, sizeof buf, "%*s |", vs, t.c_str());
    out += buf;
    out += std::string(bars, '@');
    std::snprintf(buf, sizeof buf, "%*" PRId64 "\n", (int)(50 - bars + 1 + cnt_space), buckets[i]);
    out += buf;
  }
  out += "\n";
  return out;
}

namespace {
constexpr size_t kFileBuffer = 64 * 1024;  // -o FILE's stdio buffer
}  // namespace

Output::Output(Session& s, const codegen::ModuleInfo& m) : s_(s), m_(m), fbuf_(kFmtCap) {}

Output::~Output() {
  close();
  if (dirfd_ >= 0) ::close(dirfd_);
}

namespace {

// The directory part of PATH ("." for a bare name, "/" for "/x") and its last component.
std::pair<std::string, std::string> split_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

int open_output_dir(const std::string& path) {
  return ::open(split_dir(path).first.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int open_output_file(const std::string& path, std::string& why) {
  int dirfd = open_output_dir(path);
  int fd = open_output_file_at(dirfd, path, why);
  if (dirfd >= 0) ::close(dirfd);
  return fd;
}

int open_output_file_at(int dirfd, const std::string& path, std::string& why) {
  auto refuse = [&](const std::string& what) {
    why = "refusing to write output file '" + path + "': " + what;
    return -1;
  };
  auto [dir, base] = split_dir(path);
  if (dirfd < 0) {
    why = "cannot open output file '" + path + "': " + std::strerror(errno);
    return -1;
  }
  struct stat ds {};
  bool have_dir = ::fstat(dirfd, &ds) == 0;
  bool shared = have_dir && (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH);
  // A directory someone else controls (another user's, or writable by others without the sticky
  // bit, as under `sudo ukstap -o out` in a user's home): its owner can plant a link there, so
  // the same care applies, but a file of theirs there may be written (they could write it anyway).
  bool foreign = have_dir && !shared &&
                 ((ds.st_uid != 0 && ds.st_uid != ::geteuid()) || (ds.st_mode & (S_IWGRP | S_IWOTH)));
  std::string where = shared ? " in the world-writable sticky directory '" + dir + "'"
                             : " in the directory '" + dir + "', which uid " + std::to_string(ds.st_uid) +
                                   " or others can write";
  if (!shared && !foreign) {
    int fd = ::openat(dirfd, base.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) why = "cannot open output file '" + path + "': " + std::strerror(errno);
    return fd;
  }
  // A new file is ours. An existing name was perhaps planted: never follow a link; open without
  // blocking (a planted FIFO) and without truncating until fstat says what it is.
  int fd = ::openat(dirfd, base.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd >= 0) return fd;
  if (errno == EEXIST) {
    fd = ::openat(dirfd, base.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ELOOP)
      return refuse("it is a symbolic link" + where);
  }
  if (fd < 0) {
    why = "cannot open output file '" + path + "': " + std::strerror(errno);
    return -1;
  }
  struct stat st {};
  std::string bad;
  if (::fstat(fd, &st) != 0) bad = std::string("cannot stat it: ") + std::strerror(errno);
  else if (shared && st.st_uid != ::geteuid())
    bad = "it is owned by uid " + std::to_string(st.st_uid) + where;
  else if (!S_ISREG(st.st_mode))
    bad = "it is not a regular file," + where;
  else if (st.st_nlink > 1)
    bad = "it has other hard links," + where;
  if (!bad.empty()) {
    ::close(fd);
    return refuse(bad);
  }
  if (::ftruncate(fd, 0) != 0 || ::fcntl(fd, F_SETFL, 0) != 0) {
    why = "cannot open output file '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

void Output::collect_samples(std::vector<Sample>* samples) {
  samples_ = samples;
  for (size_t i = 0; i < m_.formats.size(); ++i) {
    const auto& c = m_.formats[i].components;
    if (!c.empty() && c[0].conv == Conv::Literal && c[0].literal == profile_mode::kSampleTag)
      sample_fmt_ = (int)i;
  }
}

bool Output::open(const std::string& file, std::string& why) {
  if (samples_) {
    out_ = nullptr;  // a profile run prints nothing: -o is the profile's, written after the run
    return true;
  }
  if (file.empty() || file == "-") {
    if (ctf_) out_ = nullptr;  // --ctf without -o: the trace is the output
    return true;
  }
  pattern_ = file;
  size_max_ = (uint64_t)s_.opts.output_size_mb << 20;  // staprun: -S counts megabytes
  files_max_ = s_.opts.output_files_max;
  if (split_dir(pattern_).first.find('%') == std::string::npos) {
    dirfd_ = open_output_dir(pattern_);
    if (dirfd_ < 0) {
      why = "cannot open output file '" + pattern_ + "': " + std::strerror(errno);
      return false;
    }
  }
  return open_named(size_max_ ? 0 : -1, why);
}

bool Output::open_named(long fnum, std::string& why) {
  std::string name = pattern_;
  if (pattern_.find('%') != std::string::npos) {
    char buf[4096];
    time_t t = ::time(nullptr);
    struct tm tm;
    ::localtime_r(&t, &tm);
    size_t n = ::strftime(buf, sizeof buf, pattern_.c_str(), &tm);
    if (n > 0) name.assign(buf, n);
  }
  if (fnum >= 0) name += "." + std::to_string(fnum);
  name_ = "'" + name + "'";  // also what a failed switch's message names
  // close-on-exec: not the -c target's
  int fd = dirfd_ >= 0 ? open_output_file_at(dirfd_, name, why) : open_output_file(name, why);
  if (fd < 0) return false;
  out_ = ::fdopen(fd, "w");
  if (!out_) {
    why = "cannot open output file '" + name + "': " + std::strerror(errno);
    ::close(fd);
    out_ = stdout;
    return false;
  }
  // Whole stacks make ~1 KB a record: stdio's default buffer (st_blksize, 4 KiB on tmpfs)
  // made a write(2) every 4 records. The loop flushes after every round, so output still
  // appears as promptly.
  ::setvbuf(out_, nullptr, _IOFBF, kFileBuffer);
  own_out_ = true;
  fnum_ = fnum;
  written_ = 0;
  if (fnum >= 0) {
    if ((size_t)fnum >= opened_.size()) opened_.resize(fnum + 1);
    opened_[fnum] = name;
  }
  return true;
}

void Output::switch_file() {
  if (!own_out_ || !out_ || write_errno_) return;  // stdout (or a failed file): nothing to do
  close();
  long next = fnum_ < 0 ? 1 : fnum_ + 1;
  // Only the last N files stay: the one N back goes before the new one is made.
  if (files_max_ > 0 && next >= files_max_ && (size_t)(next - files_max_) < opened_.size()) {
    const std::string& old = opened_[next - files_max_];
    if (dirfd_ >= 0) ::unlinkat(dirfd_, split_dir(old).second.c_str(), 0);
    else ::unlink(old.c_str());
  }
  std::string why;
  if (!open_named(next, why)) {  // the run stops: "cannot write output to 'FILE.N': ..."
    int err = errno ? errno : EIO;
    out_ = nullptr;
    fail(err);
  }
}

int Output::fd() const { return out_ ? ::fileno(out_) : -1; }

void Output::fail(int err) {
  if (!write_errno_) write_errno_ = err ? err : EIO;
}

void Output::put(const char* p, size_t n) {
  if (write_errno_ || !out_ || !n) return;
  if (size_max_ && own_out_ && written_ > 0 && written_ + n > size_max_) {
    switch_file();
    if (write_errno_ || !out_) return;
  }
  written_ += n;
  if (std::fwrite(p, 1, n, out_) != n) fail(errno);
}

void Output::flush() {
  if (ctf_) ctf_->flush();
  if (write_errno_ || !out_) return;
  if (std::fflush(out_) != 0) fail(errno);
}

void Output::close() {
  flush();
  if (own_out_ && out_) {
    // Nothing more may be written: a failed write left data in the buffer that fclose would
    // try again.
    if (std::fclose(out_) != 0) fail(errno);
    out_ = nullptr;
    own_out_ = false;
  }
}

void Output::record(const void* data, size_t len) {
  auto* p = static_cast<const unsigned char*>(data);
  size_t off = 0;
  while (off + sizeof(struct stp_rec_hdr) <= len) {
    struct stp_rec_hdr h;
    std::memcpy(&h, p + off, sizeof h);
    const unsigned char* body = p + off + sizeof h;
    size_t blen = h.len;
    if (off + sizeof h + blen > len) {
      malformed++;
      return;
    }
    // --ctf: the event's context between header and payload (common/stp_records.h).
    uint16_t type = h.type;
    struct stp_rec_ctx cx;
    ctx_ = nullptr;
    if (type & STP_REC_CTX_FLAG) {
      type &= ~STP_REC_CTX_FLAG;
      if (blen < sizeof cx) {
        malformed++;
        off += sizeof h + h.len;
        continue;
      }
      std::memcpy(&cx, body, sizeof cx);
      body += sizeof cx;
      blen -= sizeof cx;
      if (ctf_) ctx_ = &cx;
    }
    switch (type) {
      case STP_REC_PRINTF: printf_record(h.id, body, blen); break;
      case STP_REC_LOG: {
        Reader r{body, blen};
        std::string t = r.str();
        t = expand(std::move(t));
        if (r.ok && ctx_) ctf_->log(*ctx_, t);
        if (r.ok) {
          t += '\n';  // one write: -S rotation never splits a log() line from its newline
          put(t);
        } else {
          malformed++;
        }
        break;
      }
      case STP_REC_WARN: warn_record(body, blen); break;
      case STP_REC_ERROR: error_record(h.id, body, blen); break;
      case STP_REC_EXIT: exit_requested = true; break;
      case STP_REC_HIST: hist_record(h.id, body, blen); break;
      case STP_REC_DROPS: {
        Reader r{body, blen};
        int64_t n = r.num();
        if (r.ok && (uint64_t)n > dropped) dropped = n;
        break;
      }
      case STP_REC_USTACK: ustack_record(h.id, body, blen); break;
      case STP_REC_KSTACK: kstack_record(h.id, body, blen); break;
      case STP_REC_SWITCH_FILE: switch_file(); break;
      case STP_REC_WAKE: break;  // only woke us: the loop drains the VMA side-band first
      case STP_REC_USNAP:  // a stack copy for the next USTACK record (deferred_unwind.h)
        if (ustacks_) ustacks_->snapshot(body, blen);
        break;
      default: malformed++; break;
    }
    off += sizeof h + h.len;
  }
  ctx_ = nullptr;
}

void Output::printf_record(uint16_t fmt_id, const unsigned char* p, size_t n) {
  if (fmt_id >= m_.formats.size()) {
    malformed++;
    return;
  }
  if (samples_ && fmt_id == sample_fmt_) return sample_header(p, n);
  Reader r{p, n};
  std::string out;
  std::vector<CtfOutput::Value> vals;  // --ctf: the values, typed
  for (const auto& c : m_.formats[fmt_id].components) {
    if (c.conv == Conv::Literal) {
      out += c.literal;
      continue;
    }
    int width = c.width, prec = c.precision;
    if (width == -2) width = (int)r.num();
    if (prec == -2) prec = (int)r.num();
    if (width == -1) width = 0;
    if (prec < -1) prec = -1;
    int flags = fmt_flags(c.flag), conv = fmt_conv(c.conv);
    uint32_t pos = 0;
    if (c.conv == Conv::String) {
      std::string v = r.str();
      v = expand(std::move(v));
      if (ctx_) vals.push_back({true, 0, v});
      pos = stp_fmt_str(fbuf_.data(), kFmtCap, 0, v.c_str(), (uint32_t)v.size(), flags, width, prec);
    } else if (c.conv == Conv::Memory || c.conv == Conv::MemoryHex) {
      std::string v = r.str();
      if (ctx_) vals.push_back({true, 0, v});
      pos = stp_fmt_mem(fbuf_.data(), kFmtCap, 0, reinterpret_cast<const uint8_t*>(v.data()),
                        (uint32_t)v.size(), conv, flags, width);
    } else {
      int64_t num = r.num();
      if (ctx_) vals.push_back({false, num, {}});
      pos = stp_fmt_long(fbuf_.data(), kFmtCap, 0, num, conv, flags, width, prec);
    }
    out.append(fbuf_.data(), pos);
    if (!r.ok) break;
  }
  if (!r.ok) {
    malformed++;
    return;
  }
  if (ctx_) ctf_->statement(*ctx_, fmt_id, std::move(vals));
  put(out);
}

// The sample header's arguments: pid, tid, comm.
void Output::sample_header(const unsigned char* p, size_t n) {
  Reader r{p, n};
  Sample s;
  s.pid = (int)r.num();
  s.tid = (int)r.num();
  s.comm = r.str();
  if (!r.ok) {
    malformed++;
    return;
  }
  samples_->push_back(std::move(s));
}

// A stack record's frames go to the last sample (leaf first: print_backtrace() comes before
// print_ubacktrace()); frames before the first header belong to no sample.
void Output::sample_frames(std::vector<Frame> frames) {
  if (samples_->empty()) return;
  std::vector<Frame>& to = samples_->back().frames;
  to.insert(to.end(), std::make_move_iterator(frames.begin()), std::make_move_iterator(frames.end()));
}

void Output::ustack_record(uint16_t flags, const unsigned char* p, size_t n) {
  struct stp_ustack u;
  if (!ustacks_ || n < sizeof u) {
    malformed++;
    return;
  }
  std::memcpy(&u, p, sizeof u);
  if (samples_) {
    sample_frames(ustacks_->sample_frames(flags, u, p + sizeof u, n - sizeof u));
    return;
  }
  std::string error;
  if (ctx_ && !u.token && u.kind != STP_USTACK_SYM && !(flags & _STP_SYM_LIST)) {
    // --ctf: the stack's frames join the event (ctf_output.h); the text only for -o FILE
    std::vector<Frame> frames;
    std::string text;
    if (out_) text = ustacks_->record_frames(flags, u, p + sizeof u, n - sizeof u, error, frames);
    else frames = ustacks_->sample_frames(flags, u, p + sizeof u, n - sizeof u);
    ctf_->stack(*ctx_, false, std::move(frames));
    put(text);
  } else {
    put(ustacks_->record(flags, u, p + sizeof u, n - sizeof u, error));
  }
  if (!error.empty()) {
    flush();
    s_.diag.stream() << "ERROR: " << error << "\n";
    errors++;
  }
}

void Output::kstack_record(uint16_t flags, const unsigned char* p, size_t n) {
  struct stp_ustack u;
  if (!kstacks_ || n < sizeof u) {
    malformed++;
    return;
  }
  std::memcpy(&u, p, sizeof u);
  if (samples_) {
    sample_frames(kstacks_->sample_frames(flags, u, p + sizeof u, n - sizeof u));
    return;
  }
  if (ctx_ && !u.token && u.kind != STP_USTACK_SYM && !(flags & _STP_SYM_LIST))
    ctf_->stack(*ctx_, true, kstacks_->sample_frames(flags, u, p + sizeof u, n - sizeof u));
  if (ctx_ && !out_) return;
  std::string text = kstacks_->record(flags, u, p + sizeof u, n - sizeof u);
  put(text);
}

std::string Output::expand(std::string s) const {
  if (s.find('\x1e') == std::string::npos) return s;
  if (ustacks_) s = ustacks_->expand(s);
  if (kstacks_) s = kstacks_->expand(s);
  return s;
}

void Output::hist_record(uint16_t stats_id, const unsigned char* p, size_t n) {
  if (stats_id >= m_.stats.size()) {
    malformed++;
    return;
  }
  const codegen::MapInfo& mi = m_.stats[stats_id];
  size_t base = sizeof(struct stp_stat_base);
  if (n < base) {
    malformed++;
    return;
  }
  std::vector<int64_t> b((n - base) / 8);
  std::memcpy(b.data(), p + base, b.size() * 8);
  int nb = mi.hist_buckets > 0 ? std::min<int>(mi.hist_buckets, (int)b.size()) : (int)b.size();
  std::string text = format_histogram(mi.hist_kind, b.data(), nb, mi.hist_start, mi.hist_stop, mi.hist_interval);
  if (ctx_) ctf_->histogram(*ctx_, text);
  put(text);
}

void Output::error_record(uint16_t loc, const unsigned char* p, size_t n) {
  Reader r{p, n};
  std::string msg = r.str();
  errors++;
  flush();
  std::string line = "ERROR: " + msg;
  if (loc != STP_LOC_NONE && loc < m_.locations.size()) line += " near " + m_.locations[loc];
  s_.diag.stream() << line << "\n";
  s_.diag.stream().flush();
}

void Output::warn_record(const unsigned char* p, size_t n) {
  Reader r{p, n};
  std::string msg = r.str();
  if (!msg.empty() && msg.back() == '\n') msg.pop_back();
  if (s_.opts.verbose == 0 && !warned_.insert(msg).second) return;
  flush();
  s_.diag.stream() << "WARNING: " << msg << "\n";
  s_.diag.stream().flush();
}

}  // namespace ukstap::loader
