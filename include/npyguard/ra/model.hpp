// npyguard: the model of an accepted RawArray (.ra) file (SPEC-ra.md).
//
// RawArray is column-major: dims[0] varies fastest. The data seen by numpy
// is shape = dims with order='F', or shape = reversed(dims) in C order.
//
// Thread safety: a plain value, like the .npy header.
#ifndef NPYGUARD_RA_MODEL_HPP
#define NPYGUARD_RA_MODEL_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npyguard/export.hpp"
#include "npyguard/result.hpp"

namespace npyguard::ra {

// The eltype field (SPEC-ra.md section 3); the values are the file's codes.
enum class element_type : std::uint8_t {
  user = 0,             // user-defined: structs, strings, anything of elbyte bytes
  signed_integer = 1,   // elbyte 1, 2, 4, 8, 16
  unsigned_integer = 2, // elbyte 1, 2, 4, 8, 16
  floating = 3,         // IEEE-754, elbyte 2, 4, 8, 16
  complex_floating = 4, // a pair of floats, elbyte 4, 8, 16, 32
  extension = 5,        // elbyte 1: RawArray.jl's Bool; elbyte 2: rawarray-rust's bfloat16
};

// The header is 48 + 8 * ndims bytes; limits::max_ndim above this counts as this.
inline constexpr std::uint32_t hard_max_ndim = std::uint32_t{1} << 20;

// The fixed part of the header: magic, flags, eltype, elbyte, size, ndims.
inline constexpr std::uint64_t fixed_header_size = 48;

// The first header word: the bytes "rawarray".
inline constexpr unsigned char magic[8] = {'r', 'a', 'w', 'a', 'r', 'r', 'a', 'y'};

struct header {
  std::uint64_t flags = 0; // 0 or 1: bit 0 is the only one accepted
  bool big_endian = false; // flags bit 0: the data elements are big-endian (the header never is)
  element_type eltype = element_type::user;
  std::uint64_t elbyte = 0;        // bytes per element
  std::vector<std::uint64_t> dims; // file order: dims[0] varies fastest
  std::uint64_t count = 0;         // elements: the product of dims (1 for ndims 0)
  std::uint64_t data_offset = 0;   // 48 + 8 * ndims
  std::uint64_t data_length = 0;   // the size field, equal to count * elbyte
  // The bytes after the data (accepted, never read). Null when the input was
  // a stream: reading stops at the end of the data.
  std::optional<std::uint64_t> metadata_offset;
  std::optional<std::uint64_t> metadata_length;
};

inline bool operator==(const header& a, const header& b) noexcept {
  return a.flags == b.flags && a.big_endian == b.big_endian && a.eltype == b.eltype && a.elbyte == b.elbyte &&
         a.dims == b.dims && a.count == b.count && a.data_offset == b.data_offset && a.data_length == b.data_length &&
         a.metadata_offset == b.metadata_offset && a.metadata_length == b.metadata_length;
}
inline bool operator!=(const header& a, const header& b) noexcept { return !(a == b); }

// The name reports use (SPEC-ra.md section 3): "user<elbyte>",
// "int<8*elbyte>", "uint<8*elbyte>", "float<8*elbyte>", "complex<8*elbyte>"
// (numpy's convention: complex64 is a pair of float32), "bool", "bfloat16".
// Never throws: empty when the string cannot be allocated.
[[nodiscard]] NPYGUARD_API std::string type_name(element_type eltype, std::uint64_t elbyte) noexcept;

using result = basic_result<header>;

} // namespace npyguard::ra

#endif
