#include "npy/framing.hpp"

#include <string>

#include "core/refused.hpp"

namespace npyguard::detail {

std::optional<error> read_preamble(const unsigned char* prefix, std::size_t size, const options& opts, preamble& out) {
  static constexpr unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  for (std::size_t i = 0; i < 6 && i < size; ++i) {
    if (prefix[i] != magic[i]) {
      return error{error_code::bad_magic, i, "not a .npy file: it must start with \\x93NUMPY"};
    }
  }
  if (size >= 8) {
    const unsigned major = prefix[6];
    const unsigned minor = prefix[7];
    if (minor != 0 || major < 1 || major > 3) {
      return error{error_code::unsupported_version, 6,
                   "format version " + std::to_string(major) + "." + std::to_string(minor) + " is not 1.0, 2.0 or 3.0"};
    }
    out.major_version = static_cast<std::uint8_t>(major);
    out.minor_version = 0;
    out.header_offset = preamble_size(major);
  }
  if (size < 8 || size < out.header_offset) {
    const std::size_t needed = size < 8 ? 10 : out.header_offset;
    return error{error_code::truncated_preamble, size,
                 "the input ends after " + std::to_string(size) + " bytes, inside the " + std::to_string(needed) +
                     "-byte preamble"};
  }
  out.header_length = out.major_version == 1
                          ? static_cast<std::uint32_t>(prefix[8] | (prefix[9] << 8))
                          : static_cast<std::uint32_t>(prefix[8]) | (static_cast<std::uint32_t>(prefix[9]) << 8) |
                                (static_cast<std::uint32_t>(prefix[10]) << 16) |
                                (static_cast<std::uint32_t>(prefix[11]) << 24);
  if (out.header_length > opts.limits.max_header_bytes) {
    return refused(error{error_code::header_too_large, 8,
                         "HEADER_LEN is " + std::to_string(out.header_length) + " bytes, above the limit of " +
                             std::to_string(opts.limits.max_header_bytes)},
                   "max_header_bytes", opts.limits.max_header_bytes, out.header_length);
  }
  return std::nullopt;
}

error header_cut_short(const preamble& framing, std::uint64_t input_size) {
  return error{error_code::truncated_header, input_size,
               "HEADER_LEN claims a header up to byte " + std::to_string(framing.data_offset()) +
                   ", but the input ends at byte " + std::to_string(input_size)};
}

std::optional<error> check_header_fits(const preamble& framing, std::uint64_t input_size) {
  if (framing.data_offset() > input_size) return header_cut_short(framing, input_size);
  return std::nullopt;
}

} // namespace npyguard::detail
