// Pass 4: compiles the generated C (s.module->source) twice — for BPF (module.bpf.o, the kernel
// probes) and natively (module.so, the user-space probes: begin/end/error/interval timers) — into
// the cache, keyed by a hash of everything that goes into the objects. A second identical run
// compiles nothing ("Pass 4: using cached ...").
//
// Cache layout ($XDG_CACHE_HOME/ukstap or ~/.cache/ukstap):
//   vmlinux/<kernel key>/vmlinux.h   bpftool btf dump of /sys/kernel/btf/vmlinux, made once per
//                                    kernel (the key: a hash of the BTF's bytes, vmlinux_btf_id.h)
//   kernels/<boot and file>          that hash, memoized for the boot (vmlinux_btf_id.h)
//   <hash>/NAME.c NAME.bpf.o NAME.so the module (NAME = -m NAME, else stap_<hash prefix>)
//   <hash>/module.sum                the hash of each object, tied to <hash> (module_sum.h)
//   compilers/<id>                   `cc --version` of a compiler binary
// Every directory and file is ours and private (owned_files.h). A cache directory that is not
// (another user's, group/world-writable, ...) is bypassed with one warning: the module is then
// compiled into a private temporary directory, removed at exit. A cached file that fails its
// checks (symlink, not ours, bytes not as recorded) is warned about and replaced.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "btf/kernel_features.h"
#include "driver/text_lines.h"
#include "codegen/module_info.h"
#include "loader/passes.h"
#include "driver/session.h"
#include "loader/module_sum.h"
#include "loader/owned_files.h"
#include "loader/interrupt.h"
#include "loader/util.h"
#include "loader/vmlinux_btf_id.h"
#include "loader/vmlinux_pch.h"

#ifndef UKSTAP_BPF_CLANG
#define UKSTAP_BPF_CLANG "clang-14"
#endif
#ifndef UKSTAP_BPFTOOL
#define UKSTAP_BPFTOOL "bpftool"
#endif

namespace ukstap {
namespace {

using loader::file_exists;
using loader::run_command;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string bpf_clang() {
  std::string c = env_or("UKSTAP_BPF_CLANG", UKSTAP_BPF_CLANG);
  return c.empty() ? "clang-14" : c;
}
std::string native_cc() { return env_or("UKSTAP_CC", "cc"); }
std::string bpftool() {
  std::string t = env_or("UKSTAP_BPFTOOL", UKSTAP_BPFTOOL);
  return t.empty() ? "bpftool" : t;
}

// Every header or C file of the runtime, relative path + content, sorted: part of the key.
void hash_tree(loader::Hasher& h, const std::string& root, const std::string& rel) {
  std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    names.push_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (auto& n : names) {
    std::string r = rel.empty() ? n : rel + "/" + n;
    std::string full = root + "/" + r;
    struct stat st;
    if (::stat(full.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (r != "loader") hash_tree(h, root, r);
      continue;
    }
    auto ends = [&](const char* suf) {
      size_t l = std::strlen(suf);
      return n.size() >= l && n.compare(n.size() - l, l, suf) == 0;
    };
    if (!ends(".h") && !ends(".c")) continue;
    std::string text;
    if (!loader::read_file(full, text)) continue;
    h.add(r);
    h.add(text);
  }
}

// `cc --version`, part of the module's cache key. Running clang for it took 10-30 ms of every
// run's start-up (bench/compare.py item 4), so its answer is kept in the cache directory under
// the compiler's identity (below): an upgraded compiler is a new file.
std::string compiler_version(Session& s, const std::string& cc, const std::string& cache) {
  std::string path;
  loader::find_program(cc, path);  // the file running `cc` would run ("" when none)
  // The identity: the real binary (through symlinks: /usr/bin/clang-14 ->
  // /usr/lib/llvm-14/bin/clang) and the compiler libraries beside it (clang's version and code
  // generation live in libclang-cpp/libLLVM, upgraded without the binary), each by device,
  // inode, size, mtime and ctime.
  auto identity = [](const std::string& f, std::string& out) {
    struct stat st{};
    if (::stat(f.c_str(), &st) != 0) return false;
    out += f + ":" + loader::file_identity(st) + ";";
    return true;
  };
  std::string memo, id;
  char real[PATH_MAX];
  if (!path.empty() && !cache.empty() && ::realpath(path.c_str(), real) && identity(real, id)) {
    std::string libdir = std::string(real);
    libdir = libdir.substr(0, libdir.rfind('/'));
    libdir = libdir.substr(0, libdir.rfind('/')) + "/lib";
    if (DIR* d = ::opendir(libdir.c_str())) {
      std::vector<std::string> libs;
      while (struct dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n.rfind("libLLVM", 0) == 0 || n.rfind("libclang-cpp", 0) == 0) libs.push_back(n);
      }
      ::closedir(d);
      std::sort(libs.begin(), libs.end());
      for (auto& n : libs) identity(libdir + "/" + n, id);
    }
    loader::Hasher h;
    h.add("compiler-version-v2");
    h.add(id);
    memo = cache + "/compilers/" + h.hex();
    std::string out, why;
    if (loader::read_private_file(memo, out, why) && !out.empty()) return out;
    if (!why.empty()) s.diag.warning("not using the cached compiler version: " + why);
  }
  std::string out, why;
  if (run_command({cc, "--version"}, out) != 0) return "?";
  if (!memo.empty() && loader::make_private_dirs(cache, "compilers", why))
    loader::write_private_file(memo, out, why);
  return out;
}

// The first "error:" line of a compiler's output, for the one-line message.
std::string first_error(const std::string& out) {
  for (std::string_view line : text_lines(out))
    if (line.find("error:") != std::string_view::npos) return std::string(line);
  return "";
}

std::string target_arch() {
  struct utsname u;
  if (::uname(&u) != 0) return "x86";
  std::string m = u.machine;
  if (m == "x86_64" || m == "i686") return "x86";
  if (m == "aarch64") return "arm64";
  if (m.rfind("riscv", 0) == 0) return "riscv";
  if (m.rfind("s390", 0) == 0) return "s390";
  if (m.rfind("ppc", 0) == 0) return "powerpc";
  return m;
}

std::string multiarch_include() {
  static const char* const kDirs[] = {"/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu"};
  struct utsname u;
  if (::uname(&u) != 0) return "";
  for (const char* d : kDirs)
    if (std::strstr(d, u.machine) && file_exists(d)) return d;
  return "";
}

// vmlinux.h for the kernel whose BTF identity is `btf_id` (vmlinux_btf_id.h), made once into
// the cache (into `tmp` when there is no cache); the directory holding it, or "" on failure
// (message in `why`). The directory is named by the identity, not the release: two kernels
// sharing a cache never share a vmlinux.h, nor the precompiled one beside it (vmlinux_pch.h).
std::string ensure_vmlinux_h(Session& s, const std::string& cache, const std::string& tmp,
                             const loader::VmlinuxBtf& kernel, std::string& why) {
  const std::string& btf_id = kernel.id();
  std::string dir = tmp + "/vmlinux";
  if (!cache.empty()) {
    std::string rel = "vmlinux/" + btf_id.substr(0, 16), dwhy;
    if (loader::make_private_dirs(cache, rel, dwhy)) dir = cache + "/" + rel;
    else s.diag.warning("not using the cached vmlinux.h: " + dwhy);
  }
  std::string path = dir + "/vmlinux.h";
  // clang reads it by name: it must be ours and private (its directory is).
  int fd = loader::open_private_file(path, why);
  if (fd >= 0) {
    ::close(fd);
    return dir;
  }
  if (!why.empty()) s.diag.warning("not using the cached vmlinux.h: " + why + "; making it again");
  if (!loader::make_dirs(dir)) {
    why = "cannot create " + dir + ": " + std::strerror(errno);
    return "";
  }
  std::string btf = kernel.dump_source(tmp, why);  // the bytes btf_id was taken of
  if (btf.empty()) return "";
  std::vector<std::string> argv = {bpftool(), "btf", "dump", "file", btf, "format", "c"};
  if (s.opts.verbose > 1) s.diag.stream() << "Running " << loader::quote_command(argv) << "\n";
  std::string out;
  int rc = run_command(argv, out);
  if (rc != 0 || out.find("#ifndef __VMLINUX_H__") == std::string::npos) {
    why = "cannot generate vmlinux.h with " + loader::quote_command(argv);
    if (s.opts.verbose > 0) why += ":\n" + out;
    return "";
  }
  if (!loader::write_private_file(path, out, why)) return "";
  // A precompiled vmlinux.h (vmlinux_pch.h) checks the header by size only: one made from the
  // file this one replaces must not serve it (bpftool's output can change, its size not).
  loader::drop_vmlinux_pchs(dir);
  return dir;
}

// Copies `from` to `to` as a private file (written under a temporary name in `to`'s directory,
// then renamed: atomic for concurrent ukstap runs compiling the same module).
bool install_file(const std::string& from, const std::string& to, std::string& why) {
  std::string data;
  if (!loader::read_private_file(from, data, why)) {
    if (why.empty()) why = "no " + from;
    return false;
  }
  return loader::write_private_file(to, data, why);
}

// A directory removed when ukstap exits: the module compiled for this run only (no cache).
void remove_at_exit(const std::string& dir) {
  static std::vector<std::string> dirs;
  if (dirs.empty()) std::atexit([] {
    for (auto& d : dirs) loader::remove_tree(d);
  });
  dirs.push_back(dir);
}

bool is_limit(const codegen::ModuleInfo& m, const std::string& name) {
  if (m.limits.count(name)) return true;
  static const char* const kLimits[] = {"MAXSTRINGLEN", "MAXMAPENTRIES", "MAXACTION", "MAXBACKTRACE",
                                        "MAXERRORS", "MAXNESTING", "MAXSKIPPED", "MAXTRYLOCK"};
  for (const char* l : kLimits)
    if (name == l || name == std::string("STP_") + l) return true;
  return false;
}

int failed(Session& s, const std::string& msg) {
  if (loader::interrupted()) return 1;  // SIGINT/SIGTERM: the compiler was killed, not wrong
  if (!msg.empty()) s.diag.fatal(msg);
  s.diag.pass_failed(4, "compilation");
  return 1;
}

}  // namespace

int pass4_compile(Session& s) {
  auto t0 = std::chrono::steady_clock::now();
  if (!s.module) return failed(s, "internal error: pass 4 has no translated module");
  const codegen::ModuleInfo& m = *s.module;
  std::string runtime = s.runtime_dir();
  if (!file_exists(runtime)) return failed(s, "cannot find the runtime directory '" + runtime + "'");

  std::string why;
  std::string cache = loader::cache_dir(why);
  if (cache.empty() && !loader::cache_disabled())  // --disable-cache asked for it: no warning
    s.diag.warning(why + "; compiling into a private temporary directory (this run is not cached)");

  bool want_native = m.has_native_probes;
  // The BPF object holds the kernel probes and every map the native probes share; a script of
  // begin/end probes and scalar globals only needs no BPF object at all.
  bool want_bpf = m.has_kernel_probes || !m.maps.empty();
  std::string clang = bpf_clang(), cc = native_cc();

  // -D flags that are not the limits the generated file #defines itself.
  std::vector<std::string> dflags;
  for (auto& [name, value] : s.opts.defines)
    if (!is_limit(m, name)) dflags.push_back("-D" + name + (value.empty() ? "" : "=" + value));
  // ukstap's own -D flags (STP_ names, which vmlinux.h does not use: the precompiled vmlinux.h
  // serves them, unlike a user's flags).
  std::vector<std::string> own_dflags;
  // --ctf=DIR: records carry the event's context (common/stp_records.h STP_REC_CTX_FLAG).
  if (s.opts.output_as_events()) own_dflags.push_back("-DSTP_CTF");
  // The walk's user registers without a helper call (runtime/bpf/stp_bpf_task_uregs.h). Only
  // the user-stack walk reads them: a module without one does not pay the probe's 5 program
  // loads (~0.3 ms here, ~10x under TCG), cached runs included.
  if (want_bpf && m.uses_user_stacks && kernel_features::Running::get().rdonly_cast_kfunc())
    own_dflags.push_back("-DSTP_HAVE_RDONLY_CAST=1");

  loader::Hasher h;
  h.add("ukstap-module-v1");
  h.add(m.source);
  hash_tree(h, runtime, "");
  std::string clang_version = compiler_version(s, clang, cache);
  h.add(clang_version);
  if (want_native) h.add(compiler_version(s, cc, cache));
  for (auto& d : dflags) h.add(d);
  for (auto& d : own_dflags) h.add(d);
  h.add(target_arch());
  h.add(s.opts.module_name);
  // The kernel: the BPF object is compiled against its vmlinux.h (a cache shared by two kernels
  // must not serve one's object to the other). Not for a native-only module: it includes no
  // kernel header (what the kernel changes in the generated C is hashed with the C).
  loader::VmlinuxBtf kernel;
  if (want_bpf) {
    if (!kernel.open(s, cache, why)) return failed(s, why);
    h.add(kernel.id());
  }
  std::string key = h.hex();
  std::string name = s.opts.module_name.empty() ? "stap_" + key.substr(0, 20) : s.opts.module_name;
  std::vector<std::string> objects;
  if (want_bpf) objects.push_back(name + ".bpf.o");
  if (want_native) objects.push_back(name + ".so");
  auto use = [&](const std::string& dir) {
    s.bpf_object_path = want_bpf ? dir + "/" + name + ".bpf.o" : "";
    s.native_object_path = want_native ? dir + "/" + name + ".so" : "";
  };

  std::string dir;  // the module's cache directory; "" when this run is not cached
  if (!cache.empty()) {
    if (loader::make_private_dirs(cache, key, why)) dir = cache + "/" + key;
    else s.diag.warning("not using the cache directory " + cache + ": " + why +
                        "; compiling into a private temporary directory (this run is not cached)");
  }
  if (!dir.empty() && !s.opts.keep_tmpdir) {
    if (loader::check_module_sum(dir, key, objects, why)) {
      use(dir);
      if (s.opts.verbose > 0)
        for (auto& o : objects) s.diag.stream() << "Pass 4: using cached " << dir << "/" << o << "\n";
      return 0;
    }
    if (!why.empty()) s.diag.warning("not using the cached module: " + why + "; compiling it again");
  }

  std::string passed_over;
  std::string tmp = loader::make_private_tmpdir("ukstap", why, passed_over);
  if (!passed_over.empty()) s.diag.warning(passed_over);
  if (tmp.empty()) return failed(s, why);
  // Also removed by an exit from the signal handler (a third ^C while the compiler runs).
  if (!s.opts.keep_tmpdir) loader::add_emergency_removal(tmp);
  struct TmpGuard {
    Session& s;
    std::string dir;
    ~TmpGuard() {
      if (dir.empty()) return;
      if (s.opts.keep_tmpdir) {
        s.diag.stream() << "Keeping temporary directory \"" << dir << "\"\n";
        return;
      }
      loader::remove_tree(dir);
      loader::drop_emergency_removal(dir);
    }
  } guard{s, tmp};

  std::string vmlinux_dir;
  if (want_bpf) {
    vmlinux_dir = ensure_vmlinux_h(s, dir.empty() ? "" : cache, tmp, kernel, why);
    if (vmlinux_dir.empty()) return failed(s, why);
  }

  // The objects' debug info names the directory the compiler ran in (ukstap's working directory)
  // and the temporary source: both are mapped to fixed names, so that the same module compiles
  // to the same bytes whatever the run. Two runs compiling one module into a shared cache at the
  // same time then install the same files, and no interleaving of their renames can leave a
  // module.sum that does not match the objects beside it (a later run's "not using the cached
  // module" warning). The cwd map comes first: for gcc the last matching map wins, for clang the
  // longest (tmp and the runtime may be under the cwd).
  std::vector<std::string> path_maps;
  if (char cwd[PATH_MAX]; ::getcwd(cwd, sizeof cwd) && std::string(cwd) != "/")
    path_maps.push_back(std::string("-fdebug-prefix-map=") + cwd + "=/ukstap-cwd-not-kept");
  path_maps.push_back("-fdebug-prefix-map=" + tmp + "=/ukstap-source-not-kept");
  path_maps.push_back("-fdebug-prefix-map=" + runtime + "=/ukstap-runtime-not-kept");

  std::string src = tmp + "/" + name + ".c";
  if (!loader::write_file(src, m.source)) return failed(s, "cannot write " + src + ": " + std::strerror(errno));

  auto compile = [&](const std::vector<std::string>& argv, const char* what) -> bool {
    if (s.opts.verbose > 1) s.diag.stream() << "Running " << loader::quote_command(argv) << "\n";
    std::string out;
    int rc = run_command(argv, out);
    if (rc == 0) {
      if (s.opts.verbose > 2 && !out.empty()) s.diag.stream() << out;
      return true;
    }
    if (loader::interrupted()) return false;  // killed on SIGINT/SIGTERM: nothing to report
    std::string msg;
    if (rc < 0) {
      msg = std::string("cannot run the compiler for the ") + what + ": " + out;
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      s.diag.fatal(msg);
    } else {
      std::string first = first_error(out);
      msg = std::string("the generated C did not compile for the ") + what + " (" + argv[0] +
            " exited with status " + std::to_string(rc) + ")";
      if (!first.empty()) msg += ": " + first;
      s.diag.fatal(msg);
      if (s.opts.verbose > 0) {
        s.diag.stream() << loader::quote_command(argv) << "\n" << out;
        if (!out.empty() && out.back() != '\n') s.diag.stream() << "\n";
      } else {
        s.diag.stream() << "Rerun with -v to see the compiler output.\n";
      }
    }
    return false;
  };

  std::string tmp_bpf = tmp + "/" + name + ".bpf.o", tmp_so = tmp + "/" + name + ".so";
  if (want_bpf) {
    // -mcpu=v3: the runtime uses 32-bit atomics and jumps (runtime/bpf/stp_bpf.h).
    // -fbracket-depth: clang stops at 256 nested brackets; the C of a script at the parser's
    // nesting limit (500 levels, parse/parser.h) nests up to ~2 brackets per level.
    // (The language flags: the precompiled vmlinux.h is made with them, vmlinux_pch.h.)
    std::vector<std::string> lang = {"-target", "bpf", "-mcpu=v3", "-O2", "-g", "-D__UKSTAP_BPF__",
                                     "-D__TARGET_ARCH_" + target_arch(), "-fbracket-depth=4096"};
    std::vector<std::string> argv = {clang};
    argv.insert(argv.end(), lang.begin(), lang.end());
    argv.insert(argv.end(), {"-I" + runtime, "-I" + vmlinux_dir,
                             // The debug info names the source under a directory that does
                             // not exist: clang-14's BTF writer then leaves out the text of
                             // each source line from .BTF.ext's line info (its string table
                             // dedups by a linear scan: quadratic in the lines). Same
                             // instructions, 30-60% less pass 4 time on 360-720 probes;
                             // verifier logs lose the C text. The runtime's headers and
                             // vmlinux.h likewise: each instruction inlined from them added
                             // its line's text (the source's and the runtime's maps: path_maps).
                             "-fdebug-prefix-map=" + vmlinux_dir + "=/ukstap-vmlinux-not-kept"});
    argv.insert(argv.end(), path_maps.begin(), path_maps.end());
    if (std::string ma = multiarch_include(); !ma.empty()) argv.push_back("-idirafter" + ma);
    for (auto& d : dflags) argv.push_back(d);
    for (auto& d : own_dflags) argv.push_back(d);
    argv.insert(argv.end(), {"-c", src, "-o", tmp_bpf});
    // Not for a module compiled outside the cache (its vmlinux.h is in `tmp`: made for one
    // compile), nor one with -D flags of the user's (names vmlinux.h might use).
    std::string pch;
    if (!dir.empty() && vmlinux_dir != tmp + "/vmlinux" && dflags.empty() && loader::pch_fits(m.source))
      pch = loader::vmlinux_pch(s, clang, clang_version, lang, vmlinux_dir, cache, tmp);
    if (loader::interrupted()) return failed(s, "");  // SIGINT/SIGTERM while making the PCH
    bool done = false;
    if (!pch.empty()) {
      std::vector<std::string> with = argv;
      with.insert(with.end() - 4, {"-include-pch", pch});
      if (s.opts.verbose > 1) s.diag.stream() << "Running " << loader::quote_command(with) << "\n";
      std::string out;
      done = run_command(with, out) == 0;
      if (!done && loader::interrupted()) return failed(s, "");
      if (done && s.opts.verbose > 2 && !out.empty()) s.diag.stream() << out;
    }
    if (!done) {
      if (!compile(argv, "BPF module")) return failed(s, "");
      if (!pch.empty()) loader::drop_vmlinux_pch(s, pch);
    }
  }
  if (want_native) {
    std::vector<std::string> argv = {cc, "-O2", "-g", "-fPIC", "-shared", "-D__UKSTAP_NATIVE__",
                                     "-I" + runtime};
    argv.insert(argv.end(), path_maps.begin(), path_maps.end());
    for (auto& d : dflags) argv.push_back(d);
    for (auto& d : own_dflags) argv.push_back(d);
    argv.insert(argv.end(), {src, "-o", tmp_so, "-lbpf"});
    if (!compile(argv, "native module")) return failed(s, "");
  }

  // The compilers wrote their outputs under the umask: private, like everything pass 5 loads.
  for (auto& o : objects) ::chmod((tmp + "/" + o).c_str(), 0600);
  if (!dir.empty()) {
    bool ok = true;
    for (auto& f : objects) ok = ok && install_file(tmp + "/" + f, dir + "/" + f, why);
    ok = ok && install_file(src, dir + "/" + name + ".c", why) &&
         loader::write_module_sum(dir, key, objects, why);
    if (!ok) {
      s.diag.warning("cannot cache the module: " + why + "; using it from a private temporary directory");
      dir.clear();
    } else if (!loader::check_module_sum(dir, key, objects, why)) {
      dir.clear();  // a concurrent run of the same script installed other bytes: use our own
    }
  }
  if (dir.empty()) {  // this run's own copy
    if (!loader::write_module_sum(tmp, key, objects, why) ||
        !loader::check_module_sum(tmp, key, objects, why))
      return failed(s, "cannot record the compiled module: " + why);
    dir = tmp;
    // Pass 5 loads the descriptors just checked: the directory can go now (the guard removes
    // it), so not even a kill -9 leaves the module behind. -p4 prints its path: kept until exit.
    if (!s.opts.keep_tmpdir && s.opts.last_pass == 4) {
      remove_at_exit(tmp);
      guard.dir.clear();
    }
  }
  use(dir);
  std::string bpf_o = s.bpf_object_path, so = s.native_object_path;
  if (s.opts.verbose > 0) {
    long ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    std::string what = want_bpf ? "\"" + bpf_o + "\"" : "";
    if (want_native) what += (what.empty() ? "\"" : " and \"") + so + "\"";
    s.diag.stream() << "Pass 4: compiled C into " << what
                    << " in " << ms << "real ms.\n";
  }
  return 0;
}

}  // namespace ukstap
