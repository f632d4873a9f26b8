#include "loader/symbol_key_merge.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "codegen/module_info.h"
#include "common/stp_stack_abi.h"
#include "common/stp_format.h"

namespace ukstap::loader {

namespace {

using Bytes = std::vector<unsigned char>;

struct Field {
  size_t offset, size;
  bool text;  // a placeholder key: compared by its rendered text
};

// The key struct the emitter writes (codegen/emitter.cpp): int64_t for a number, char[24] for a
// ubacktrace() token key, char[MAXSTRINGLEN] for other strings, in order, no padding.
bool key_fields(const codegen::MapInfo& mi, size_t key_size, std::vector<Field>& out) {
  size_t fixed = 0, strings = 0;
  for (size_t k = 0; k < mi.key_types.size(); ++k) {
    bool token = k < mi.token_keys.size() && mi.token_keys[k];
    if (mi.key_types[k] != ast::Type::String) fixed += 8;
    else if (token) fixed += STP_TOKEN_KEY_SIZE;
    else ++strings;
  }
  if (key_size < fixed || (strings && (key_size - fixed) % strings)) return false;
  size_t str = strings ? (key_size - fixed) / strings : 0, off = 0;
  for (size_t k = 0; k < mi.key_types.size(); ++k) {
    bool token = k < mi.token_keys.size() && mi.token_keys[k];
    size_t n = mi.key_types[k] != ast::Type::String ? 8 : token ? STP_TOKEN_KEY_SIZE : str;
    out.push_back({off, n, k < mi.text_keys.size() && mi.text_keys[k]});
    off += n;
  }
  return off == key_size;
}

// The key with its placeholder fields replaced by their text (length-prefixed, so fields cannot
// run into each other); false when one of its placeholders has no text yet.
bool render(const Bytes& key, const std::vector<Field>& fields,
            const std::function<std::string(const std::string&)>& expand, std::string& out) {
  for (const Field& f : fields) {
    const char* p = reinterpret_cast<const char*>(key.data() + f.offset);
    std::string part = f.text ? std::string(p, strnlen(p, f.size)) : std::string(p, f.size);
    if (f.text) {
      for (size_t a = part.find('\x1e'); a != std::string::npos; a = part.find('\x1e', a + 1))
        if (a + STP_TOKEN_LEN <= part.size() && expand(part.substr(a, STP_TOKEN_LEN)).empty())
          return false;
      part = expand(part);
    }
    out += std::to_string(part.size()) + ':' + part;
  }
  return true;
}

struct Layout {
  bool stats;
  size_t value_size;  // per CPU for statistics (rounded to 8, as the kernel copies them)
  int cpus;
  size_t nbuckets;
  size_t bytes() const { return value_size * (stats ? cpus : 1); }
};

// The smallest nonzero insertion number of a value (statistics: over CPUs).
uint64_t seq_of(const Bytes& v, const Layout& l) {
  if (!l.stats) {
    uint64_t s;
    std::memcpy(&s, v.data(), 8);
    return s ? s : UINT64_MAX;
  }
  uint64_t best = UINT64_MAX;
  for (int c = 0; c < l.cpus; ++c) {
    stp_stat_base b;
    std::memcpy(&b, v.data() + c * l.value_size, sizeof b);
    if (b.count && b.seq && uint64_t(b.seq) < best) best = uint64_t(b.seq);
  }
  return best;
}

// dst += src: a count's sum (and the smaller insertion number), a statistic's merge per CPU.
void add(Bytes& dst, const Bytes& src, const Layout& l) {
  if (!l.stats) {
    uint64_t ds, ss;
    int64_t dv, sv;
    std::memcpy(&ds, dst.data(), 8);
    std::memcpy(&ss, src.data(), 8);
    std::memcpy(&dv, dst.data() + 8, 8);
    std::memcpy(&sv, src.data() + 8, 8);
    if (ss && (!ds || ss < ds)) ds = ss;
    dv = int64_t(uint64_t(dv) + uint64_t(sv));
    std::memcpy(dst.data(), &ds, 8);
    std::memcpy(dst.data() + 8, &dv, 8);
    return;
  }
  for (int c = 0; c < l.cpus; ++c) {
    unsigned char* d = dst.data() + c * l.value_size;
    const unsigned char* s = src.data() + c * l.value_size;
    stp_stat_base db, sb;
    std::memcpy(&db, d, sizeof db);
    std::memcpy(&sb, s, sizeof sb);
    stp_stat_merge(&db, &sb);
    std::memcpy(d, &db, sizeof db);
    for (size_t b = 0; b < l.nbuckets; ++b) {
      int64_t x, y;
      std::memcpy(&x, d + sizeof db + 8 * b, 8);
      std::memcpy(&y, s + sizeof db + 8 * b, 8);
      x += y;
      std::memcpy(d + sizeof db + 8 * b, &x, 8);
    }
  }
}

size_t merge_map(const codegen::MapInfo& mi, struct bpf_map* map,
                 const std::function<std::string(const std::string&)>& expand) {
  int fd = bpf_map__fd(map);
  size_t ksize = bpf_map__key_size(map);
  std::vector<Field> fields;
  if (fd < 0 || !key_fields(mi, ksize, fields)) return 0;
  Layout l{mi.stats, mi.stats ? (bpf_map__value_size(map) + 7) & ~size_t(7) : bpf_map__value_size(map),
           std::max(1, libbpf_num_possible_cpus()), 0};
  if (l.stats) l.nbuckets = (bpf_map__value_size(map) - sizeof(stp_stat_base)) / 8;
  // Summed: { seq; int64_t v } or a statistic. Kept: every entry holds the one literal the script
  // assigns (passes/symbol_key_merge.h), so the first inserted is the merged entry.
  bool keep_one = mi.text_keys_keep_one;
  if (!keep_one && !l.stats && l.value_size != 16) return 0;

  std::map<std::string, std::vector<Bytes>> groups;
  Bytes key(ksize), next(ksize);
  void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
    key = next;
    prev = key.data();
    std::string text;
    if (render(key, fields, expand, text)) groups[text].push_back(key);
  }
  size_t folded = 0;
  for (auto& [text, keys] : groups) {
    if (keys.size() < 2) continue;
    std::vector<Bytes> vals;
    std::vector<size_t> live;
    for (size_t i = 0; i < keys.size(); ++i) {
      Bytes v(l.bytes());
      if (bpf_map_lookup_elem(fd, keys[i].data(), v.data()) == 0) {
        vals.push_back(std::move(v));
        live.push_back(i);
      }
    }
    if (live.size() < 2) continue;
    size_t keep = 0;
    for (size_t j = 1; j < live.size(); ++j)
      if (seq_of(vals[j], l) < seq_of(vals[keep], l)) keep = j;
    Bytes sum(l.bytes(), 0);
    bool have = false;
    for (size_t j = 0; j < live.size(); ++j) {
      if (j == keep) continue;
      if (keep_one) {
        if (bpf_map_delete_elem(fd, keys[live[j]].data()) == 0) ++folded;
        continue;
      }
      Bytes v(l.bytes());
      // A duplicate's last value and its removal in one step: an update a kernel probe makes
      // meanwhile lands in a fresh entry that a later read folds again.
      if (bpf_map_lookup_and_delete_elem(fd, keys[live[j]].data(), v.data()) != 0) {
        if (bpf_map_lookup_elem(fd, keys[live[j]].data(), v.data()) != 0) continue;
        bpf_map_delete_elem(fd, keys[live[j]].data());
      }
      if (!have) sum = v, have = true;
      else add(sum, v, l);
      ++folded;
    }
    if (!have) continue;
    Bytes kept(l.bytes());
    const unsigned char* kk = keys[live[keep]].data();
    if (bpf_map_lookup_elem(fd, kk, kept.data()) != 0) kept = vals[keep];
    add(kept, sum, l);
    bpf_map_update_elem(fd, kk, kept.data(), BPF_ANY);
  }
  return folded;
}

}  // namespace

size_t merge_text_keys(const codegen::ModuleInfo& m, struct bpf_object* obj,
                       const std::function<std::string(const std::string&)>& expand) {
  if (!obj) return 0;
  size_t folded = 0;
  for (const auto& mi : m.maps) {
    if (std::find(mi.text_keys.begin(), mi.text_keys.end(), true) == mi.text_keys.end()) continue;
    if (auto* map = bpf_object__find_map_by_name(obj, mi.bpf_name.c_str()))
      folded += merge_map(mi, map, expand);
  }
  return folded;
}

}  // namespace ukstap::loader
