// Before user space reads an array keyed by symbol placeholders, its entries whose keys print the
// same text become one, as SystemTap's text keys would be (passes/symbol_key_merge.h says which
// arrays, and which value updates make the merge exact).
//
// A placeholder (usymname(), sprint_ubacktrace(), ...) hashes the address and the process, so
// `a[usymname(uaddr())]++` in a function called from two places holds two entries printing one
// name. The loader knows each placeholder's text (the records that defined it), so it renders
// every key, and folds each group of equal texts into the entry inserted first: counts are summed
// and statistics merged per CPU (count, sum, min, max, variance, buckets), the smallest insertion
// number kept (foreach order). A key with a placeholder not defined yet is left alone. Run before
// a native probe only when no kernel probe is attached (begin, end, error: the end probes run
// after detach and drain), so the write-back races no BPF update; pass 2
// (passes/symbol_key_merge.h) refuses what this cannot make exact: reading such an array in a
// probe that runs while the kernel probes do (timer.s, procfs, input), adding to it in user space
// (a key made after the fold), and using the value of one entry in a kernel probe.
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
