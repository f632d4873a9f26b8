// SHA-256 (OpenSSL's libcrypto) of what a cached file stands for: the bytes of a compiled module
// (module_sum.h), the CFI a cached unwind table was compiled from (table_cache.h). These inputs
// can come from another user (a traced binary is anybody's): a key they could collide on purpose
// would let them choose what root's cache serves, so the hash is a cryptographic one, unlike
// loader::Hasher (a cache key over inputs root chose).
#pragma once

#include <cstddef>
#include <string>

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace ukstap::loader {

class ContentHash {
 public:
  ContentHash();
  ~ContentHash();
  ContentHash(const ContentHash&) = delete;
  ContentHash& operator=(const ContentHash&) = delete;
  void add(const void* p, size_t n);
  // Length-prefixed: "ab" + "c" differs from "a" + "bc".
  void add(const std::string& s);
  // 64 hex digits; ends the hash.
  std::string hex();

 private:
  EVP_MD_CTX* ctx_;
};

}  // namespace ukstap::loader
