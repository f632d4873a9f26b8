// The record that ties a compiled module to the source it was compiled from: pass 4 writes
// module.sum beside the objects (a private 0600 file, owned_files.h), one line with the cache key
// (the hash of the generated C, the runtime headers, the compilers and the flags: compile.cpp),
// then one line per object with the hash of its bytes. Pass 4 uses a cached module only when the
// record names its key and every object's bytes hash as recorded; pass 5 loads an object only
// from a descriptor whose bytes it has just hashed (VerifiedObject), through /proc/self/fd/N, so
// that no file can be swapped in between the check and dlopen or libbpf.
//
// The hash is SHA-256 (content_hash.h). The protection against other users is that nobody else
// can write the files (owned_files.h); the record catches a cached object that does not belong
// to its key (replaced, truncated, from another build).
#pragma once

#include <string>
#include <vector>

namespace ukstap::loader {

constexpr const char* kModuleSumFile = "module.sum";

// Records `key` and the hashes of `objects` (file names in `dir`).
bool write_module_sum(const std::string& dir, const std::string& key,
                      const std::vector<std::string>& objects, std::string& why);

// `dir`'s record names `key` and each of `objects` is a private file whose bytes hash as
// recorded; false with `why` (naming the file) otherwise, `why` empty when an object or the
// record is simply missing (a module not cached yet, or cached by an older ukstap). The checked
// descriptors are kept for VerifiedObject::open of the same paths (no second hashing).
bool check_module_sum(const std::string& dir, const std::string& key,
                      const std::vector<std::string>& objects, std::string& why);

// An object opened for loading: a private file whose bytes match its directory's record.
class VerifiedObject {
 public:
  VerifiedObject() = default;
  VerifiedObject(const VerifiedObject&) = delete;
  VerifiedObject& operator=(const VerifiedObject&) = delete;
  ~VerifiedObject();
  bool open(const std::string& path, std::string& why);
  // "/proc/self/fd/N": the verified file itself, for dlopen or bpf_object__open_file.
  std::string proc_path() const;

 private:
  int fd_ = -1;
};

}  // namespace ukstap::loader
