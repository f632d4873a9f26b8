// unwind-tables/table_cache: compiled unwind tables on disk by content (build-id + a hash of the
// CFI). Truth: readelf's build-id note, and the table compile_cfi produces for the same file (a
// cached table must be that table, byte for byte); a damaged or foreign cache file, or one that
// is not ours and private (stat(2)), must never be used.
#include "test_util.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <fstream>
#include <string>

#include "unwind-tables/table_cache.h"
#include "unwind-tables/table_compiler.h"

using ukstap::loader::elf_build_id;
using ukstap::loader::elf_table_identity;
using ukstap::loader::elf_table_key;
using ukstap::loader::identity_is_cache_key;
using ukstap::loader::TableCache;
using ukstap::test::run;
using ukstap::test::sh;
using ukstap::test::TempDir;
using ukstap::unwind::CfiTable;
using ukstap::unwind::compile_cfi;

namespace {

bool same_table(const CfiTable& a, const CfiTable& b) {
  if (a.base != b.base || a.rows.size() != b.rows.size()) return false;
  if (std::memcmp(a.rows.data(), b.rows.data(), a.rows.size() * sizeof(stp_cfi_row)) != 0)
    return false;
  const auto &x = a.stats, &y = b.stats;
  return x.fdes == y.fdes && x.fdes_skipped == y.fdes_skipped && x.rows == y.rows &&
         x.invalid == y.invalid && x.skip_why == y.skip_why &&
         std::memcmp(x.by_kind, y.by_kind, sizeof x.by_kind) == 0 &&
         std::memcmp(x.by_reason, y.by_reason, sizeof x.by_reason) == 0;
}

std::string readelf_build_id(const std::string& path) {
  std::string id = run("readelf -n '" + path + "' | sed -n 's/.*Build ID: *//p'");
  return id.substr(0, id.find_first_of(" \n"));
}

}  // namespace

TEST_CASE("table cache: build-id = readelf's; a stored table loads back unchanged", "[table_cache]") {
  TempDir dir("tcache");
  dir.write("p.c", "#include <stdio.h>\nint f(int x) { return printf(\"%d\", x); }\n"
                   "int main(int c, char **v) { return f(c); }\n");
  std::string prog = dir / "p";
  REQUIRE(sh("gcc -O2 -fomit-frame-pointer -Wl,--build-id -o '" + prog + "' '" + dir / "p.c" + "'"));
  std::string id = elf_build_id(prog);
  REQUIRE(!id.empty());
  CHECK(id == readelf_build_id(prog));

  CfiTable compiled;
  std::string why;
  REQUIRE(compile_cfi(prog, compiled, why));
  REQUIRE(!compiled.rows.empty());
  TableCache cache(dir / "cache");
  CfiTable none;
  CHECK_FALSE(cache.load(id, none));  // empty cache
  REQUIRE(cache.store(id, compiled));
  CfiTable loaded;
  REQUIRE(cache.load(id, loaded));
  CHECK(same_table(compiled, loaded));

  // libc too (a large table, with INVALID rows and their reasons).
  std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  std::string lid = elf_build_id(libc);
  CHECK(lid == readelf_build_id(libc));
  CfiTable lc, ll;
  REQUIRE(compile_cfi(libc, lc, why));
  REQUIRE(cache.store(lid, lc));
  REQUIRE(cache.load(lid, ll));
  CHECK(same_table(lc, ll));
}

TEST_CASE("table cache: damaged or foreign files are ignored", "[table_cache]") {
  TempDir dir("tcache");
  std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  std::string id = elf_build_id(libc);
  REQUIRE(!id.empty());
  CfiTable t;
  std::string why;
  REQUIRE(compile_cfi(libc, t, why));
  TableCache cache(dir / "cache");
  REQUIRE(cache.store(id, t));
  std::string path = cache.path_for(id);

  SECTION("truncated") {
    REQUIRE(sh("truncate -s -100 '" + path + "'"));
    CfiTable x;
    CHECK_FALSE(cache.load(id, x));
  }
  SECTION("another build's file under this build's name") {
    std::string other = std::string(id.size(), 'a');
    REQUIRE(sh("mkdir -p \"$(dirname '" + cache.path_for(other) + "')\" && cp '" + path + "' '" +
               cache.path_for(other) + "'"));
    CfiTable x;
    CHECK_FALSE(cache.load(other, x));
  }
  SECTION("garbage") {
    std::ofstream(path, std::ios::trunc) << std::string(4096, 'x');
    CfiTable x;
    CHECK_FALSE(cache.load(id, x));
  }
  SECTION("no cache directory: nothing is stored or loaded") {
    TableCache off("");
    CHECK_FALSE(off.store(id, t));
    CfiTable x;
    CHECK_FALSE(off.load(id, x));
  }
}

TEST_CASE("table cache: a file without a build-id has no key", "[table_cache]") {
  TempDir dir("tcache");
  dir.write("p.c", "int main(void) { return 0; }\n");
  std::string prog = dir / "p";
  REQUIRE(sh("gcc -O2 -Wl,--build-id=none -o '" + prog + "' '" + dir / "p.c" + "'"));
  CHECK(readelf_build_id(prog).empty());
  CHECK(elf_build_id(prog).empty());
  CHECK(elf_build_id(dir / "missing").empty());
}

TEST_CASE("table cache: the key is the file's CFI, not the build-id it claims", "[table_cache]") {
  TempDir dir("tcache");
  std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  std::string id = readelf_build_id(libc);
  REQUIRE(!id.empty());
  // A decoy linked with libc's build-id (`ld --build-id=0x...`).
  dir.write("d.c", "#include <unistd.h>\nint main(void) { return getppid() < 0; }\n");
  std::string decoy = dir / "decoy";
  REQUIRE(sh("gcc -O2 -Wl,--build-id=0x" + id + " -o '" + decoy + "' '" + dir / "d.c" + "'"));
  REQUIRE(readelf_build_id(decoy) == id);
  std::string lkey = elf_table_key(libc), dkey = elf_table_key(decoy);
  CHECK(lkey.rfind(id + "-", 0) == 0);
  CHECK(dkey.rfind(id + "-", 0) == 0);
  CHECK(lkey != dkey);

  // The same bytes elsewhere share the key (one cached table for every path); one byte changed
  // inside .eh_frame does not.
  std::string copy = dir / "libc-copy", patched = dir / "libc-patched";
  REQUIRE(sh("cp '" + libc + "' '" + copy + "' && cp '" + libc + "' '" + patched + "'"));
  CHECK(elf_table_key(copy) == lkey);
  std::string off = run("readelf -SW '" + libc +
                        "' | sed -n 's/.* \\.eh_frame  *PROGBITS  *[0-9a-f]*  *\\([0-9a-f]*\\) .*/\\1/p'");
  REQUIRE(!off.empty());
  REQUIRE(sh("printf '\\377' | dd of='" + patched + "' bs=1 seek=$((0x" + off.substr(0, off.find('\n')) +
             " + 100)) conv=notrunc status=none"));
  CHECK(readelf_build_id(patched) == id);
  CHECK(elf_table_key(patched) != lkey);

  // The decoy's table stored first is not what libc's key loads.
  CfiTable dt, lt, x;
  std::string why;
  REQUIRE(compile_cfi(decoy, dt, why));
  TableCache cache(dir / "cache");
  REQUIRE(cache.store(dkey, dt));
  CHECK_FALSE(cache.load(lkey, x));
  REQUIRE(compile_cfi(libc, lt, why));
  REQUIRE(cache.store(lkey, lt));
  REQUIRE(cache.load(lkey, x));
  CHECK(same_table(x, lt));
  REQUIRE(cache.load(dkey, x));
  CHECK(same_table(x, dt));
}

namespace {
std::string identity_of(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string id = fd >= 0 ? elf_table_identity(fd) : "";
  if (fd >= 0) ::close(fd);
  return id;
}
}  // namespace

TEST_CASE("table identity: content, not path or build-id; compressed .debug_frame hashed", "[table_cache]") {
  // The loader gives one table to every file of the same identity (loader/table_sharing.h).
  TempDir dir("tcache");
  dir.write("p.c", "#include <unistd.h>\nint main(void) { return getppid() < 0; }\n");
  std::string a = dir / "a", b = dir / "b", z = dir / "z", z2 = dir / "z2";
  // No build-id (Go's linker writes none): no cache key, still an identity, equal for a copy.
  REQUIRE(sh("gcc -O2 -Wl,--build-id=none -o '" + a + "' '" + dir / "p.c" + "' && cp '" + a + "' '" + b + "'"));
  CHECK(elf_table_key(a).empty());
  std::string ia = identity_of(a);
  CHECK(ia.size() > 10);
  CHECK_FALSE(identity_is_cache_key(ia));
  CHECK(identity_of(b) == ia);
  // With a build-id the identity is the cache key.
  REQUIRE(sh("gcc -O2 -g -fno-asynchronous-unwind-tables -Wl,--build-id -Wl,--compress-debug-sections=zlib -o '" +
             z + "' '" + dir / "p.c" + "' && cp '" + z + "' '" + z2 + "'"));
  CHECK(identity_of(z) == elf_table_key(z));
  CHECK(identity_is_cache_key(identity_of(z)));
  // One byte of the compressed .debug_frame changed (readelf's section offset, past its Chdr):
  // another key, although the build-id is the same.
  std::string off = run("readelf -SW '" + z +
                        "' | sed -n 's/.* \\.debug_frame  *PROGBITS  *[0-9a-f]*  *\\([0-9a-f]*\\) .*/\\1/p'");
  REQUIRE(!off.empty());
  REQUIRE(sh("printf '\\377' | dd of='" + z2 + "' bs=1 seek=$((0x" + off.substr(0, off.find('\n')) +
             " + 40)) conv=notrunc status=none"));
  CHECK(readelf_build_id(z2) == readelf_build_id(z));
  CHECK(elf_table_key(z2) != elf_table_key(z));
}

TEST_CASE("table cache: a file not ours and private is not read", "[table_cache]") {
  TempDir dir("tcache");
  std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  std::string key = elf_table_key(libc);
  REQUIRE(!key.empty());
  CfiTable t, x;
  std::string why;
  REQUIRE(compile_cfi(libc, t, why));
  TableCache cache(dir / "cache");
  REQUIRE(cache.store(key, t));
  std::string path = cache.path_for(key);
  CHECK(run("stat -c '%a %u' '" + path + "'") == "600 0\n");
  CHECK(run("stat -c '%a' \"$(dirname '" + path + "')\"") == "700\n");
  REQUIRE(cache.load(key, x));

  SECTION("owned by another user") {
    REQUIRE(sh("chown nobody '" + path + "'"));
    CHECK_FALSE(cache.load(key, x));
  }
  SECTION("writable by others") {
    REQUIRE(sh("chmod 0666 '" + path + "'"));
    CHECK_FALSE(cache.load(key, x));
  }
  SECTION("a symlink to a good table") {
    REQUIRE(sh("mv '" + path + "' '" + dir / "elsewhere" + "' && ln -s '" + dir / "elsewhere" + "' '" + path + "'"));
    CHECK_FALSE(cache.load(key, x));
    // Storing again replaces the link, it does not write through it.
    REQUIRE(cache.store(key, t));
    CHECK(run("stat -c %F '" + path + "'") == "regular file\n");
  }
}
