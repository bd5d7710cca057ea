// Test helpers: RawArray files built field by field (SPEC-ra.md section 2).
#ifndef NPYGUARD_TESTS_RA_SUPPORT_HPP
#define NPYGUARD_TESTS_RA_SUPPORT_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npyguard_test {

inline void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

struct ra_fields {
  std::uint64_t flags = 0;
  std::uint64_t eltype = 3;
  std::uint64_t elbyte = 8;
  std::vector<std::uint64_t> dims{2, 3};
  std::optional<std::uint64_t> size{};  // default: product(dims) * elbyte
  std::optional<std::uint64_t> ndims{}; // default: dims.size()
};

inline std::uint64_t product_bytes(const ra_fields& f) {
  std::uint64_t n = f.elbyte;
  for (const std::uint64_t d : f.dims) n *= d;
  return n;
}

// The header only.
inline std::string ra_header(const ra_fields& f) {
  std::string out("rawarray");
  put_u64(out, f.flags);
  put_u64(out, f.eltype);
  put_u64(out, f.elbyte);
  put_u64(out, f.size.value_or(product_bytes(f)));
  put_u64(out, f.ndims.value_or(f.dims.size()));
  for (const std::uint64_t d : f.dims) put_u64(out, d);
  return out;
}

// Header, the data (size bytes of a pattern) and metadata.
inline std::string ra_file(const ra_fields& f, const std::string& metadata = {}) {
  std::string out = ra_header(f);
  const std::uint64_t size = f.size.value_or(product_bytes(f));
  for (std::uint64_t i = 0; i < size; ++i) out.push_back(static_cast<char>(i * 7 + 1));
  return out + metadata;
}

} // namespace npyguard_test

#endif
