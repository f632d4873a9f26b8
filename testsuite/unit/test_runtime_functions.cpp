// Which runtime global functions a module compiles (codegen/runtime_functions.cpp), against the
// runtime's own text: the functions marked STP_RT_FN in runtime/bpf/*.h, and every macro or
// function of runtime/bpf and runtime/common that calls one of them, directly or through
// another. A caller added to the runtime without its line in the table fails here.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/runtime_functions.h"

using namespace ukstap::codegen;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// name -> text of its definition: each `#define NAME` with its continuation lines, and each
// function from its signature (a line starting in column 0) to the `}` in column 0 closing it.
std::map<std::string, std::string> runtime_definitions() {
  std::map<std::string, std::string> defs;
  const std::filesystem::path rt = std::filesystem::path(UKSTAP_SRCDIR) / "runtime";
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"bpf", "common"})
    for (auto& e : std::filesystem::directory_iterator(rt / dir))
      if (e.path().extension() == ".h") files.push_back(e.path());
  static const std::regex define_re(R"(^\s*#\s*define\s+(\w+))"), name_re(R"((\w+)\s*\()");
  for (auto& f : files) {
    std::vector<std::string> lines;
    std::istringstream in(slurp(f));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      std::smatch m;
      if (std::regex_search(l, m, define_re)) {
        std::string& body = defs[m[1]];
        body += l + "\n";
        while (!lines[i].empty() && lines[i].back() == '\\' && i + 1 < lines.size()) body += lines[++i] + "\n";
        continue;
      }
      if (l.empty() || std::isspace(static_cast<unsigned char>(l[0])) || l.find('(') == std::string::npos ||
          std::string("#/*}{").find(l[0]) != std::string::npos)
        continue;
      std::string sig = l;
      size_t j = i;
      while (sig.find('{') == std::string::npos && sig.back() != ';' && j + 1 < lines.size()) sig += lines[++j];
      if (sig.find('{') == std::string::npos) continue;
      // The function's name: the first `name(` that is not an attribute or a marker macro.
      std::string name;
      for (auto it = std::sregex_iterator(sig.begin(), sig.end(), name_re); it != std::sregex_iterator(); ++it) {
        std::string n = (*it)[1];
        if (n != "SEC" && n != "STP_RT_FN" && n != "__attribute__" && n != "noinline") {
          name = n;
          break;
        }
      }
      std::string body = sig + "\n";
      size_t k = j + 1;
      while (k < lines.size() && lines[k].rfind('}', 0) != 0) body += lines[k++] + "\n";
      if (!name.empty()) defs[name] += body;
      i = k;
    }
  }
  return defs;
}

// Whether text names id as a whole identifier (what the regex \bid\b matched: id is all word
// characters). A plain search: a std::regex built and run per (body, name) pair, in a test
// compiled at -O0, made this file's transitive-callers case 36 s of the unit tests' 53.
bool names(const std::string& text, const std::string& id) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(id); at != std::string::npos; at = text.find(id, at + 1)) {
    size_t end = at + id.size();
    if ((at == 0 || !word(text[at - 1])) && (end == text.size() || !word(text[end]))) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("runtime functions: the table is the runtime's STP_RT_FN functions", "[codegen][runtime_functions]") {
  std::set<std::string> marked;
  const std::filesystem::path bpf = std::filesystem::path(UKSTAP_SRCDIR) / "runtime" / "bpf";
  static const std::regex marked_re(R"(^STP_RT_FN\((\w+)\))");
  for (auto& e : std::filesystem::directory_iterator(bpf)) {
    std::istringstream in(slurp(e.path()));
    for (std::string l; std::getline(in, l);)
      if (std::smatch m; std::regex_search(l, m, marked_re)) marked.insert(m[1]);
  }
  std::set<std::string> listed;
  for (auto& f : runtime_functions()) listed.insert(f.name);
  CHECK(marked.size() >= 15);
  CHECK(listed == marked);
}

TEST_CASE("runtime functions: every caller in the runtime is listed", "[codegen][runtime_functions]") {
  auto defs = runtime_definitions();
  for (auto& f : runtime_functions()) {
    std::set<std::string> need = {f.name};
    for (bool grew = true; grew;) {  // the transitive callers
      grew = false;
      for (auto& [n, body] : defs) {
        if (need.count(n)) continue;
        for (auto& x : need)
          if (names(body, x)) {
            need.insert(n);
            grew = true;
            break;
          }
      }
    }
    need.erase(f.name);
    std::set<std::string> listed(f.callers.begin(), f.callers.end());
    for (auto& n : need) {
      INFO(f.name << " is called by " << n);
      CHECK(listed.count(n) == 1);
    }
  }
}

TEST_CASE("runtime functions: what the BPF side of the C calls", "[codegen][runtime_functions]") {
  const std::string inc = "#include \"stp_runtime.h\"\n";
  using V = std::vector<std::string>;
  // Nothing called: none.
  CHECK(used_runtime_functions(inc + "int x;\n") == V{});
  // A caller's name, a function's own name; the order is the table's.
  CHECK(used_runtime_functions(inc + "  stp__uwalk(k);\n  _stp_substr(a, b, 1, 2);\n") ==
        V{"stp_bpf_substr", "stp_uwalk_frame", "stp_cfi_row_key", "stp_uread_refill", "stp_pc_file",
          "stp_cfi_row_search", "stp_chain_check"});
  CHECK(used_runtime_functions(inc + "x = stp_bpf_strtol(s, 10);\n") == V{"stp_bpf_strtol"});
  // Whole identifiers only.
  CHECK(used_runtime_functions(inc + "my_stp_str_cmp(); stp_str_cmp_x();\n") == V{});
  // Native-only code is not compiled for BPF: skipped, nested too; its #else is BPF code.
  CHECK(used_runtime_functions(inc + "#ifdef __UKSTAP_NATIVE__\n#if 1\nstp_str_cmp();\n#endif\n"
                                     "stp_sfmt_long();\n#else\n_stp_strpos(a, b);\n#endif\n") ==
        V{"stp_bpf_strpos"});
  CHECK(used_runtime_functions(inc + "#ifndef __UKSTAP_BPF__\nstp_str_cmp();\n#endif\n") == V{});
  CHECK(used_runtime_functions(inc + "#ifdef __UKSTAP_BPF__\nstp_str_cmp();\n#else\n_stp_strtol(s, 1);\n#endif\n") ==
        V{"stp_bpf_strcmp"});
  // A conditional on anything else is read both ways.
  CHECK(used_runtime_functions(inc + "#ifdef STP_CTF\n_stp_flags_str(o, v, 1);\n#else\n_stp_tokenize(a, b, c);\n#endif\n") ==
        V{"stp_bpf_tokenize", "stp_bpf_flags_str"});
  // The user's -D lines come before the runtime's #include: not the program's calls.
  CHECK(used_runtime_functions("#define X stp_str_cmp\n" + inc) == V{});
}

TEST_CASE("runtime functions: the defines before the runtime's #include", "[codegen][runtime_functions]") {
  std::string src = "#define STP_NPROBES 1\n#include \"stp_runtime.h\"\nvoid f(void) { _stp_strtol(s, 10); }\n";
  std::string out = select_runtime_functions(src);
  size_t inc = out.find("#include \"stp_runtime.h\"");
  REQUIRE(inc != std::string::npos);
  std::string head = out.substr(0, inc);
  CHECK(head.find("#define STP_RT_SELECT 1") != std::string::npos);
  for (auto& f : runtime_functions()) {
    std::string want = std::string("#define STP_USES_") + f.name + (f.name == std::string("stp_bpf_strtol") ? " 1\n" : " 0\n");
    INFO(want);
    CHECK(head.find(want) != std::string::npos);
  }
  CHECK(out.substr(inc) == src.substr(src.find("#include")));
  // No runtime #include (not a module): unchanged.
  CHECK(select_runtime_functions("int x;\n") == "int x;\n");
}
