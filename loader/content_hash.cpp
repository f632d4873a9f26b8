// SHA-256 of file contents (content_hash.h).
#include "loader/content_hash.h"

#include <openssl/evp.h>

#include <cstdint>
#include <cstdio>
#include <new>

namespace ukstap::loader {

ContentHash::ContentHash() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) throw std::bad_alloc();
}

ContentHash::~ContentHash() { EVP_MD_CTX_free(ctx_); }

void ContentHash::add(const void* p, size_t n) { EVP_DigestUpdate(ctx_, p, n); }

void ContentHash::add(const std::string& s) {
  uint64_t len = s.size();
  add(&len, sizeof len);
  add(s.data(), s.size());
}

std::string ContentHash::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_, md, &n);
  std::string out;
  char b[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", md[i]);
    out += b;
  }
  return out;
}

}  // namespace ukstap::loader
