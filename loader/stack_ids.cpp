// Stacks stored in the kernel under an id (see stack_ids.h).
#include "loader/stack_ids.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cstring>

namespace ukstap::loader {

const StoredStack* StackIds::find(uint64_t id) const {
  auto it = cache_.find(id);
  if (it != cache_.end()) return &it->second;
  if (fd_ < 0 || value_size_ < sizeof(stp_ustack)) return nullptr;
  std::vector<unsigned char> v(value_size_);
  if (bpf_map_lookup_elem(fd_, &id, v.data()) != 0) return nullptr;
  StoredStack s;
  std::memcpy(&s.h, v.data(), sizeof s.h);
  size_t max = (value_size_ - sizeof s.h) / 8;
  s.pcs.resize(std::min<size_t>(s.h.nr, max));
  if (!s.pcs.empty()) std::memcpy(s.pcs.data(), v.data() + sizeof s.h, s.pcs.size() * 8);
  return &cache_.emplace(id, std::move(s)).first->second;
}

}  // namespace ukstap::loader
