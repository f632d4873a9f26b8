// Which kernel pass 4 compiles a BPF module for: the BTF it dumps vmlinux.h from, and that BTF's
// identity (a SHA-256 of its bytes), part of the module's cache key and the name of vmlinux.h's
// directory in the cache (compile.cpp). A cache directory outlives a kernel and can be shared by
// two (a home directory on a disk booted by two kernels, a test guest given the host's files):
// keyed by the generated C alone, a module compiled against one kernel's vmlinux.h was served to
// the other whenever both generated the same C. The bytes, not the release string: two builds of
// one release (a rebuilt distribution kernel, a developer's) can differ in every struct.
//
// Hashing the BTF (5.5 MB on this project's 6.18) is ~1 ms of reading and ~3 ms of SHA-256 on
// the build machine (more without SHA instructions, ~10x in the TCG test guest): paid once per
// boot. The answer is kept in the cache under the boot (/proc/sys/kernel/random/boot_id: a
// kernel's BTF cannot change while it runs) and the file's identity (device, inode, size,
// mtime, ctime: for $UKSTAP_VMLINUX_BTF, which can), so later runs read one small file.
#pragma once

#include <string>

namespace ukstap {
class Session;
}

namespace ukstap::loader {

// /sys/kernel/btf/vmlinux, or $UKSTAP_VMLINUX_BTF when set (tests: "another kernel", a BTF file
// of other bytes). Only pass 4 reads it: vmlinux.h is dumped from it and the cache keyed by it;
// passes 1-3 type the script against the running kernel whatever it says.
std::string vmlinux_btf_path();

// The BTF pass 4 compiles against, kept open from its hashing to vmlinux.h's dump: what is
// dumped under an identity is the bytes that identity was taken of, even when
// $UKSTAP_VMLINUX_BTF's file is replaced or rewritten meanwhile (a vmlinux.h made under the
// wrong identity is never made again: its directory exists).
class VmlinuxBtf {
 public:
  VmlinuxBtf() = default;
  ~VmlinuxBtf();
  VmlinuxBtf(const VmlinuxBtf&) = delete;
  VmlinuxBtf& operator=(const VmlinuxBtf&) = delete;

  // Opens vmlinux_btf_path() (non-blocking, and only a regular file: a FIFO or a device named
  // by $UKSTAP_VMLINUX_BTF would hang the open or the read) and takes its identity, 64 hex
  // digits of SHA-256 over its bytes (sha256sum(1) of it), from (and kept in) `cache`/kernels/
  // when `cache` is not "". False with `why` naming the file when it cannot be read (the
  // kernel has no BTF) or is not a regular file.
  bool open(Session& s, const std::string& cache, std::string& why);
  const std::string& id() const { return id_; }

  // The file to give bpftool for vmlinux.h. The kernel's own BTF by its name: sysfs's file
  // cannot change while the kernel runs (and the test bed's host-compile knows it by that
  // name). $UKSTAP_VMLINUX_BTF's bytes, read again from the open file and checked against the
  // identity, written to `dir`/vmlinux.btf; "" with `why` when they are no longer those bytes.
  std::string dump_source(const std::string& dir, std::string& why) const;

 private:
  std::string path_, id_;
  int fd_ = -1;
};

}  // namespace ukstap::loader
