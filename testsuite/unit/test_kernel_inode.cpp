// The inode the kernel's user-stack walk sees for a file (loader/kernel_inode.h): FilePage,
// kernel_inode_of() running the module's own stp_cfi_inode_prog (compiled by pass 4 as
// `ukstap -p4` does, loaded alone), and stat()'s key, the fallback (table_sharing.h
// register_inode). Truths: fstat(2) of the file (the kernel's dev_t is major << 20 | minor),
// and on an overlay mounted in a private mount namespace stat(2) of the lower layer's path,
// not of the overlay's.
#include "test_util.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>

#include "driver/passes.h"
#include "driver/session.h"
#include "loader/kernel_inode.h"
#include "loader/passes.h"
#include "loader/table_sharing.h"
#include "unwind/stp_cfi.h"

using namespace ukstap;

namespace {

// The key the kernel's walk uses for a file stat(2) describes: (ino, major << 20 | minor).
stp_cfi_inode key_of(const struct stat& st) {
  stp_cfi_inode k{};
  k.ino = st.st_ino;
  k.dev = (uint32_t)((major(st.st_dev) << 20) | minor(st.st_dev));
  return k;
}

bool same(const stp_cfi_inode& a, const stp_cfi_inode& b) { return a.ino == b.ino && a.dev == b.dev; }

// One page of `path` mapped as the loader maps it (the descriptor closed: the mapping holds the
// file), and the file's fstat(2) in `st`.
loader::FilePage map_page(const std::string& path, struct stat& st) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::fstat(fd, &st) == 0);
  loader::FilePage page(fd);
  ::close(fd);
  REQUIRE(page.addr() != nullptr);
  return page;
}

// stp_cfi_inode_prog of a module that walks user stacks, compiled by passes 1-4 in-process and
// loaded alone (never attached); -1 when it cannot be (the reason is FAILed or WARNed).
int inode_prog_fd() {
  static struct bpf_object* obj = nullptr;
  static int fd = [] {
    std::ostringstream err;
    static Session s{err};
    s.opts.script_text = "probe process(\"/bin/true\").begin { print_ubacktrace() }";
    s.opts.have_script_text = true;
    s.opts.last_pass = 4;
    if (pass1_parse(s) != 0 || pass2_elaborate(s) != 0 || pass3_translate(s) != 0 ||
        pass4_compile(s) != 0) {
      FAIL("passes 1-4: " << err.str());
      return -1;
    }
    obj = bpf_object__open_file(s.bpf_object_path.c_str(), nullptr);
    if (!obj) return -1;
    struct bpf_program* p;
    bpf_object__for_each_program(p, obj)
      bpf_program__set_autoload(p, std::strcmp(bpf_program__name(p), "stp_cfi_inode_prog") == 0);
    if (bpf_object__load(obj) != 0) return -1;
    struct bpf_program* q = bpf_object__find_program_by_name(obj, "stp_cfi_inode_prog");
    return q ? bpf_program__fd(q) : -1;
  }();
  return fd;
}

}  // namespace

TEST_CASE("kernel_inode_of: nothing asked without a program or a page", "[kernel_inode]") {
  loader::FilePage none(-1);
  CHECK(none.addr() == nullptr);
  test::TempDir dir("kinode");
  struct stat st {};
  loader::FilePage page = map_page(dir.write("f", "x"), st);
  stp_cfi_inode k{};
  CHECK(loader::kernel_inode_of(-1, page, k) == loader::KernelInode::kUnasked);
  CHECK(loader::kernel_inode_of(123456, none, k) == loader::KernelInode::kUnasked);
}

TEST_CASE("register_inode: stat()'s key, the fallback, in the kernel's dev_t encoding", "[kernel_inode]") {
  if (geteuid() != 0) return test::skip_outside_ci("creating a BPF map needs root");
  int map = bpf_map_create(BPF_MAP_TYPE_HASH, "t_inodes", sizeof(stp_cfi_inode), sizeof(uint32_t), 8, nullptr);
  REQUIRE(map >= 0);
  struct stat st {};
  REQUIRE(::stat("/bin/sh", &st) == 0);
  loader::register_inode(map, st.st_dev, st.st_ino, 7, BPF_NOEXIST);
  loader::register_inode(map, st.st_dev, st.st_ino, 8, BPF_NOEXIST);  // never replaces
  stp_cfi_inode k = key_of(st);
  uint32_t id = 0;
  CHECK(bpf_map_lookup_elem(map, &k, &id) == 0);
  CHECK(id == 7);
  ::close(map);
}

TEST_CASE("kernel_inode_of: a file's key is fstat()'s on a filesystem that is not stacked", "[kernel_inode]") {
  if (geteuid() != 0) return test::skip_outside_ci("loading BPF programs needs root");
  int prog = inode_prog_fd();
  REQUIRE(prog >= 0);
  test::TempDir dir("kinode");
  for (const char* content : {"some bytes", ""}) {  // an empty file maps too; its page is never read
    INFO("content: '" << content << "'");
    struct stat st {};
    loader::FilePage page = map_page(dir.write(content[0] ? "full" : "empty", content), st);
    stp_cfi_inode k{};
    REQUIRE(loader::kernel_inode_of(prog, page, k) == loader::KernelInode::kNamed);
    CHECK(same(k, key_of(st)));
  }
  // Anonymous memory at the page's address (mapped over it): no file, nothing named.
  struct stat st {};
  loader::FilePage page = map_page("/bin/sh", st);
  REQUIRE(::mmap(const_cast<void*>(page.addr()), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0) == page.addr());
  stp_cfi_inode k{};
  CHECK(loader::kernel_inode_of(prog, page, k) == loader::KernelInode::kUnasked);
}

TEST_CASE("kernel_inode_of: on an overlay, the lower layer's inode, not stat()'s", "[kernel_inode]") {
  if (geteuid() != 0) return test::skip_outside_ci("mounting an overlay needs root");
  int prog = inode_prog_fd();
  REQUIRE(prog >= 0);
  test::TempDir dir("kinode");
  REQUIRE(test::sh("mkdir '" + dir / "low" + "' '" + dir / "rw" + "' '" + dir / "mnt" + "'"));
  dir.write("low/f", "some bytes");
  struct stat low {};
  REQUIRE(::stat((dir / "low/f").c_str(), &low) == 0);
  // In a child, in a private mount namespace: the overlay is gone with it. Its exit status says
  // what it saw: 0 the lower layer's key, 10+ a step that failed.
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      ::_exit(10);
    std::string rw = dir / "rw", opts = "lowerdir=" + dir / "low" + ",upperdir=" + rw + "/up,workdir=" + rw + "/work";
    if (::mount("tmpfs", rw.c_str(), "tmpfs", 0, nullptr) != 0 || ::mkdir((rw + "/up").c_str(), 0700) != 0 ||
        ::mkdir((rw + "/work").c_str(), 0700) != 0 ||
        ::mount("overlay", (dir / "mnt").c_str(), "overlay", 0, opts.c_str()) != 0)
      ::_exit(11);
    int fd = ::open((dir / "mnt/f").c_str(), O_RDONLY | O_CLOEXEC);
    struct stat over {};
    if (fd < 0 || ::fstat(fd, &over) != 0) ::_exit(12);
    if (over.st_dev == low.st_dev) ::_exit(13);  // not stacked: the test would prove nothing
    loader::FilePage page(fd);
    ::close(fd);
    stp_cfi_inode k{};
    if (loader::kernel_inode_of(prog, page, k) != loader::KernelInode::kNamed) ::_exit(14);
    if (same(k, key_of(over))) ::_exit(15);  // stat()'s key: the walk's lookup would miss
    ::_exit(same(k, key_of(low)) ? 0 : 16);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  INFO("10: no private mount namespace, 11: no overlay, 12: cannot open through it, 13: the overlay "
       "has the lower file's device, 14: the kernel named nothing, 15: it named stat()'s key, "
       "16: another key than the lower file's");
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("kernel_inode_of: while other threads map and unmap, the right key or kBusy, never another", "[kernel_inode]") {
  if (geteuid() != 0) return test::skip_outside_ci("loading BPF programs needs root");
  int prog = inode_prog_fd();
  REQUIRE(prog >= 0);
  struct stat st {};
  loader::FilePage page = map_page("/bin/sh", st);
  // Writers of this process's mmap_lock (bpf_find_vma only trylocks it: -EBUSY while they hold
  // or wait for it).
  std::atomic<bool> stop{false};
  std::thread writers[2];
  for (auto& w : writers)
    w = std::thread([&] {
      while (!stop) {
        void* p = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) ::munmap(p, 1 << 16);
      }
    });
  int named = 0, busy = 0, other = 0;
  for (int i = 0; i < 3000; i++) {
    stp_cfi_inode k{};
    switch (loader::kernel_inode_of(prog, page, k)) {
      case loader::KernelInode::kNamed: same(k, key_of(st)) ? named++ : other++; break;
      case loader::KernelInode::kBusy: busy++; break;
      default: other++;
    }
  }
  stop = true;
  for (auto& w : writers) w.join();
  INFO(named << " named, " << busy << " busy after every try");
  CHECK(other == 0);
  CHECK(named + busy == 3000);
}
