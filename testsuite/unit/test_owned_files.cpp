// loader/owned_files and module_sum: which files a root ukstap trusts. Truth: the
// ownership and modes chown/chmod/ln set up (stat(2) after each write), sha256sum's digest of a
// recorded module. Run as root (the unit tests are), so "another user" is nobody.
#include "test_util.h"

#include <catch2/catch.hpp>
#include <string>

#include "loader/module_sum.h"
#include "loader/owned_files.h"
#include "loader/util.h"

using namespace ukstap::loader;
using ukstap::test::run;
using ukstap::test::sh;
using ukstap::test::TempDir;

TEST_CASE("owned files: ancestors must be root's or ours, not writable by others unless sticky",
          "[owned_files]") {
  TempDir dir("owned");
  std::string why;
  CHECK(trusted_real_path("/tmp", why) == "/tmp");  // root's, world-writable but sticky
  CHECK(trusted_real_path(dir.path, why) == dir.path);
  REQUIRE(sh("mkdir -p '" + dir / "a/b" + "' && ln -s a/b '" + dir / "lnk" + "'"));
  CHECK(trusted_real_path(dir / "lnk", why) == dir / "a/b");  // resolved: the real path is checked

  REQUIRE(sh("chown nobody '" + dir / "a" + "'"));
  CHECK(trusted_real_path(dir / "a/b", why).empty());
  CHECK(why.find(dir / "a is owned by uid") == 0);
  REQUIRE(sh("chown root '" + dir / "a" + "' && chmod 0777 '" + dir / "a" + "'"));
  CHECK(trusted_real_path(dir / "a/b", why).empty());
  CHECK(why == dir / "a is writable by group or others");
  REQUIRE(sh("chmod 1777 '" + dir / "a" + "'"));
  CHECK(trusted_real_path(dir / "a/b", why) == dir / "a/b");
}

TEST_CASE("owned files: private directories are made 0700 and checked at every level",
          "[owned_files]") {
  TempDir dir("owned");
  std::string why;
  REQUIRE(make_private_dirs(dir.path, "x/y/z", why));
  CHECK(run("stat -c '%a %u %F' '" + dir / "x" + "' '" + dir / "x/y/z" + "'") ==
        "700 0 directory\n700 0 directory\n");
  REQUIRE(sh("chmod 0770 '" + dir / "x/y" + "'"));
  CHECK_FALSE(make_private_dirs(dir.path, "x/y/z", why));
  CHECK(why == dir / "x/y is writable by group or others");
  REQUIRE(sh("chmod 0700 '" + dir / "x/y" + "' && chown nobody '" + dir / "x/y/z" + "'"));
  CHECK_FALSE(make_private_dirs(dir.path, "x/y/z", why));
  REQUIRE(sh("mkdir '" + dir / "real" + "' && ln -s real '" + dir / "x/sym" + "'"));
  CHECK_FALSE(make_private_dirs(dir.path, "x/sym", why));
  CHECK(why == dir / "x/sym is a symbolic link");
  CHECK_FALSE(make_private_dirs(dir.path, "x/../x", why));
}

TEST_CASE("owned files: a private file is ours, regular, not writable by others, no symlink",
          "[owned_files]") {
  TempDir dir("owned");
  std::string why, out;
  std::string f = dir / "f";
  REQUIRE(write_private_file(f, "data", why));
  CHECK(run("stat -c '%a %u %F' '" + f + "'") == "600 0 regular file\n");
  REQUIRE(read_private_file(f, out, why));
  CHECK(out == "data");
  CHECK_FALSE(read_private_file(dir / "missing", out, why));
  CHECK(why.empty());  // absent is not an error

  REQUIRE(sh("ln -s f '" + dir / "l" + "'"));
  CHECK_FALSE(read_private_file(dir / "l", out, why));
  CHECK(why == dir / "l is a symbolic link");
  REQUIRE(sh("mkfifo '" + dir / "fifo" + "'"));
  CHECK_FALSE(read_private_file(dir / "fifo", out, why));  // and no hang
  CHECK(why == dir / "fifo is not a regular file");
  REQUIRE(sh("chmod 0620 '" + f + "'"));
  CHECK_FALSE(read_private_file(f, out, why));
  REQUIRE(sh("chmod 0600 '" + f + "' && chown nobody '" + f + "'"));
  CHECK_FALSE(read_private_file(f, out, why));
  CHECK(why.find(f + " is owned by uid") == 0);

  // Writing over a symlink replaces the link; its target is untouched.
  REQUIRE(sh("echo keep > '" + dir / "target" + "' && ln -s target '" + dir / "l2" + "'"));
  REQUIRE(write_private_file(dir / "l2", "new", why));
  CHECK(run("cat '" + dir / "target" + "'") == "keep\n");
  CHECK(run("stat -c %F '" + dir / "l2" + "'") == "regular file\n");
}

TEST_CASE("module sum: objects load only with the bytes recorded for their key", "[owned_files]") {
  TempDir dir("owned");
  std::string why;
  REQUIRE(write_private_file(dir / "m.so", "module bytes", why));
  REQUIRE(write_private_file(dir / "m.bpf.o", "bpf bytes", why));
  REQUIRE(write_module_sum(dir.path, "KEY", {"m.so", "m.bpf.o"}, why));
  std::string sum = run("cat '" + dir / kModuleSumFile + "'");
  CHECK(sum.find(run("sha256sum < '" + dir / "m.so" + "' | cut -d' ' -f1").substr(0, 64) + " m.so\n") !=
        std::string::npos);
  CHECK(check_module_sum(dir.path, "KEY", {"m.so", "m.bpf.o"}, why));
  CHECK_FALSE(check_module_sum(dir.path, "OTHER", {"m.so"}, why));
  CHECK(why == dir / "module.sum records another module");
  {
    VerifiedObject v;
    REQUIRE(v.open(dir / "m.so", why));
    std::string bytes;
    REQUIRE(read_file(v.proc_path(), bytes));  // this process's descriptor, opened by name
    CHECK(bytes == "module bytes");
  }
  REQUIRE(sh("printf 'other bytes!' > '" + dir / "m.so" + "'"));
  CHECK_FALSE(check_module_sum(dir.path, "KEY", {"m.so"}, why));
  CHECK(why == dir / "m.so does not match the hash recorded when it was compiled");
  VerifiedObject v;
  CHECK_FALSE(v.open(dir / "m.so", why));
  REQUIRE(sh("rm '" + dir / kModuleSumFile + "'"));
  CHECK_FALSE(check_module_sum(dir.path, "KEY", {"m.bpf.o"}, why));
  CHECK(why.empty());  // no record: not cached (by this ukstap), compiled again silently
}
