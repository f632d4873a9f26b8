// vma-tracker/traced_file.h: the one way traced files are opened. The truth is the file system
// itself (stat(2) of what the test made), not ukstap's answer.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "vma-tracker/traced_file.h"

namespace fs = std::filesystem;
using ukstap::vma::open_traced_file;
using ukstap::vma::TracedFile;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    char t[] = "/tmp/ukstap-traced-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
};
}  // namespace

TEST_CASE("open_traced_file: a FIFO is refused at once, without a writer", "[traced_file]") {
  TempDir d;
  std::string fifo = d.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto t0 = std::chrono::steady_clock::now();
  std::string why;
  CHECK(open_traced_file(fifo, why) == -1);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  CHECK(why == "cannot read " + fifo + ": it is a FIFO, not a regular file");
  // Through a symlink too (the path is resolved first, the FIFO is what it names).
  std::string link = d.path / "link";
  fs::create_symlink(fifo, link);
  CHECK(open_traced_file(link, why) == -1);
  CHECK(why.find("a FIFO") != std::string::npos);
}

TEST_CASE("open_traced_file: devices, directories and missing files are refused", "[traced_file]") {
  TempDir d;
  std::string why;
  CHECK(open_traced_file("/dev/null", why) == -1);
  CHECK(why.find("a character device") != std::string::npos);
  CHECK(open_traced_file(d.path.string(), why) == -1);
  CHECK(why.find("a directory") != std::string::npos);
  CHECK(open_traced_file((d.path / "missing").string(), why) == -1);
  CHECK(why.find("missing") != std::string::npos);
}

TEST_CASE("open_traced_file: a regular file, also through a symlink, is the file stat names", "[traced_file]") {
  TempDir d;
  std::string file = d.path / "lib.so", link = d.path / "lib.so.1";
  std::ofstream(file) << "not really ELF";
  fs::create_symlink("lib.so", link);
  struct stat want;
  REQUIRE(::stat(file.c_str(), &want) == 0);
  TracedFile f(link);
  REQUIRE(f.fd() >= 0);
  CHECK(f.st().st_ino == want.st_ino);
  CHECK(f.st().st_dev == want.st_dev);
  struct stat got;
  REQUIRE(::fstat(f.fd(), &got) == 0);
  CHECK(got.st_ino == want.st_ino);
  char buf[3] = {};
  CHECK(::read(f.fd(), buf, 3) == 3);  // blocking mode again: an ordinary read
  CHECK(std::string(buf, 3) == "not");
}

TEST_CASE("open_traced_file: ukstap's own descriptors by /proc/self/fd/N (a memfd)", "[traced_file]") {
  int m = ::memfd_create("ukstap-test", MFD_CLOEXEC);
  REQUIRE(m >= 0);
  REQUIRE(::write(m, "abc", 3) == 3);
  std::string why;
  int fd = open_traced_file("/proc/self/fd/" + std::to_string(m), why);
  CHECK(fd >= 0);
  struct stat a, b;
  REQUIRE(::fstat(m, &a) == 0);
  if (fd >= 0) {
    REQUIRE(::fstat(fd, &b) == 0);
    CHECK(a.st_ino == b.st_ino);
    ::close(fd);
  }
  ::close(m);
}
