// Before user space reads an array keyed by symbol placeholders, its entries whose keys print the
// same text become one, as SystemTap's text keys would be (passes/symbol_key_merge.h says which
// arrays, and which value updates make the merge exact).
//
// A placeholder (usymname(), sprint_ubacktrace(), ...) hashes the address and the process, so
// `a[usymname(uaddr())]++` in a function called from two places holds two entries printing one
// name. The loader knows each placeholder's text (the records that defined it), so it renders
// every key, and folds each group of equal texts into the entry inserted first: counts are summed
// and statistics merged per CPU (count, sum, min, max, variance, buckets), the smallest insertion
// number kept (foreach order). A key with a placeholder not defined yet (its record is still in
// the ring, mid-run) is left alone until a later read. Run before every native probe (end,
// timer.s, procfs, input), so foreach, print, delete, membership and the end-of-run display all
// see text keys. Kernel probes may still add to the folded entries (lookup_and_delete takes a
// duplicate's last value atomically); what one of them adds to the kept entry between its read
// and its write here is lost, as with two CPUs' `a[k]++`.
#pragma once

#include <functional>
#include <string>

struct bpf_object;

namespace ukstap {
namespace codegen {
struct ModuleInfo;
}

namespace loader {

// `expand` replaces the placeholders in a string with their text ("" for an unknown one).
// Returns how many entries were folded into another.
size_t merge_text_keys(const codegen::ModuleInfo& m, struct bpf_object* obj,
                       const std::function<std::string(const std::string&)>& expand);

}  // namespace loader
}  // namespace ukstap
