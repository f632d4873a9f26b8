#include "passes/kernel_module_c.h"

#include <cctype>
#include <filesystem>

namespace ukstap::passes {

namespace {

// `code` with comments and the contents of string and character literals blanked out, so a
// comment such as "the current task" is not taken for code. Line structure is kept.
std::string strip_comments_and_strings(const std::string& code) {
  std::string out = code;
  size_t i = 0, n = code.size();
  while (i < n) {
    if (code.compare(i, 2, "/*") == 0) {
      size_t end = code.find("*/", i + 2);
      end = end == std::string::npos ? n : end + 2;
      for (size_t k = i; k < end; ++k)
        if (out[k] != '\n') out[k] = ' ';
      i = end;
    } else if (code.compare(i, 2, "//") == 0) {
      while (i < n && code[i] != '\n') out[i++] = ' ';
    } else if (code[i] == '"' || code[i] == '\'') {
      char q = code[i++];
      while (i < n && code[i] != q && code[i] != '\n') {
        if (code[i] == '\\' && i + 1 < n) out[i++] = ' ';
        out[i++] = ' ';
      }
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether the word `word` occurs at `pos` as a whole identifier.
bool whole_word(const std::string& s, size_t pos, size_t len) {
  return (pos == 0 || !ident_char(s[pos - 1])) &&
         (pos + len >= s.size() || !ident_char(s[pos + len]));
}

size_t skip_space(const std::string& s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  return i;
}

bool user_header_exists(const std::string& header) {
  std::error_code ec;
  for (const char* dir : {"/usr/include/", "/usr/include/x86_64-linux-gnu/",
                          "/usr/include/aarch64-linux-gnu/"})
    if (std::filesystem::exists(dir + header, ec)) return true;
  return false;
}

}  // namespace

std::string kernel_module_only_use(const std::string& raw) {
  std::string code = strip_comments_and_strings(raw);
  // The module's probe context and its older spelling.
  for (const char* ctx : {"CONTEXT", "THIS"}) {
    std::string w = ctx;
    for (size_t p = code.find(w); p != std::string::npos; p = code.find(w, p + 1)) {
      if (!whole_word(code, p, w.size())) continue;
      size_t q = skip_space(code, p + w.size());
      if (code.compare(q, 2, "->") == 0) return w + "->";
    }
  }
  // The kernel's current task: `current->x`, or `current` passed as an argument, unless the
  // code declares a `current` of its own (`long current`, `struct task_struct *current`).
  bool declared = false;
  for (size_t p = code.find("current"); p != std::string::npos; p = code.find("current", p + 1)) {
    if (!whole_word(code, p, 7)) continue;
    size_t b = p;
    while (b > 0 && (code[b - 1] == ' ' || code[b - 1] == '\t' || code[b - 1] == '*')) --b;
    if (b < p && b > 0 && ident_char(code[b - 1])) {
      size_t w = b;
      while (w > 0 && ident_char(code[w - 1])) --w;
      std::string prev = code.substr(w, b - w);
      if (prev != "return" && prev != "sizeof") declared = true;
    }
  }
  for (size_t p = code.find("current"); !declared && p != std::string::npos;
       p = code.find("current", p + 1)) {
    if (!whole_word(code, p, 7)) continue;
    if (p > 0 && (code[p - 1] == '.' || (p > 1 && code.compare(p - 2, 2, "->") == 0))) continue;
    size_t q = skip_space(code, p + 7);
    if (code.compare(q, 2, "->") == 0) return "current->";
    size_t b = p;
    while (b > 0 && (code[b - 1] == ' ' || code[b - 1] == '\t')) --b;
    bool arg_start = b > 0 && (code[b - 1] == '(' || code[b - 1] == ',');
    if (arg_start && q < code.size() && (code[q] == ')' || code[q] == ',')) return "current";
  }
  // #include <...> of a header only the kernel tree has.
  for (size_t p = code.find("#"); p != std::string::npos; p = code.find("#", p + 1)) {
    size_t q = skip_space(code, p + 1);
    if (code.compare(q, 7, "include") != 0) continue;
    q = skip_space(code, q + 7);
    if (q >= code.size() || code[q] != '<') continue;
    size_t e = code.find('>', q);
    if (e == std::string::npos) continue;
    std::string header = code.substr(q + 1, e - q - 1);
    for (const char* dir : {"linux/", "asm/", "net/", "trace/", "generated/", "uapi/"})
      if (header.rfind(dir, 0) == 0 && !user_header_exists(header)) return "<" + header + ">";
  }
  return "";
}

std::string kernel_module_c_message(const std::string& what) {
  return "embedded C uses " + what +
         ", which only SystemTap's kernel-module backend has (ukstap compiles embedded C as BPF "
         "and user-space C)";
}

}  // namespace ukstap::passes
