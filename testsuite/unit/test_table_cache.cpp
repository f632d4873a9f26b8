// runtime/loader/table_cache: compiled unwind tables on disk by build-id. Truth: readelf's
// build-id note, and the table compile_cfi produces for the same file (a cached table must be
// that table, byte for byte); a damaged or foreign cache file must never be used.
#include "test_util.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <string>

#include "loader/table_cache.h"
#include "vma-tracker/table_compiler.h"

using ukstap::loader::elf_build_id;
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
