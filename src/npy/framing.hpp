// Framing (SPEC.md section 1): magic, version, HEADER_LEN and the limits
// that are decided before any header byte is read or any buffer allocated.
#ifndef NPYGUARD_SRC_FRAMING_HPP
#define NPYGUARD_SRC_FRAMING_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include "npyguard/error.hpp"
#include "npyguard/options.hpp"

namespace npyguard::detail {

inline constexpr std::size_t max_preamble_size = 12;

// Magic, version and HEADER_LEN: 10 bytes in version 1.0, 12 in 2.0 and 3.0.
[[nodiscard]] constexpr std::size_t preamble_size(unsigned major_version) noexcept {
  return major_version == 1 ? 10 : 12;
}

struct preamble {
  std::uint8_t major_version = 0;
  std::uint8_t minor_version = 0;
  std::uint32_t header_length = 0;
  std::uint64_t header_offset = 0; // 10 for 1.0, 12 otherwise
  [[nodiscard]] std::uint64_t data_offset() const noexcept { return header_offset + header_length; }
};

// `prefix` holds the first min(12, input size) bytes of the input: fewer
// than 12 means the input ends there. Checks magic, version, length field
// and max_header_bytes.
[[nodiscard]] std::optional<error> read_preamble(const unsigned char* prefix, std::size_t size, const options& opts,
                                                 preamble& out);

// truncated_header: the input ends at `input_size`, before the header does.
[[nodiscard]] error header_cut_short(const preamble& framing, std::uint64_t input_size);

// When the total input size is known: the header must fit in it.
[[nodiscard]] std::optional<error> check_header_fits(const preamble& framing, std::uint64_t input_size);

} // namespace npyguard::detail

#endif
