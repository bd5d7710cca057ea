// The RawArray header checks (SPEC-ra.md section 6), sans I/O: the entry
// points read the bytes, these functions say what they mean. Each step takes
// only what the step before it made certain.
#ifndef NPYGUARD_SRC_RA_HEADER_HPP
#define NPYGUARD_SRC_RA_HEADER_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "npyguard/error.hpp"
#include "npyguard/options.hpp"
#include "npyguard/ra/model.hpp"

namespace npyguard::ra::detail {

// The little-endian u64 at `bytes`.
[[nodiscard]] std::uint64_t load_u64(const unsigned char* bytes) noexcept;

// limits.max_ndim, counted as at most hard_max_ndim.
[[nodiscard]] std::uint32_t ndim_limit(const options& opts) noexcept;

// Steps 1 and 2 over the first `have` bytes of the input (have <= 48): the
// magic byte by byte, then flags, eltype, elbyte and ndims, each when its 8
// bytes are present. May throw std::bad_alloc (messages).
[[nodiscard]] std::optional<error> check_fixed_fields(const unsigned char* bytes, std::size_t have,
                                                      const options& opts);

// Step 3: truncated_header at the input size.
[[nodiscard]] error truncated_header(std::uint64_t input_size, std::uint64_t header_size);

// Steps 4 and 5 over a whole header (the 48 fixed bytes that passed
// check_fixed_fields and the dims): the model without its metadata fields,
// or size_overflow, data_length_mismatch, data_too_large. May throw
// std::bad_alloc.
[[nodiscard]] result build_model(const unsigned char* fixed, std::vector<std::uint64_t> dims, const options& opts);

// Step 6 for an input of known size: truncated_data at the input size, or
// with ra_reject_metadata trailing_data at the data end; else the model with
// its metadata fields set.
[[nodiscard]] result check_input_size(result built, std::uint64_t input_size, const options& opts);

// Step 6 for a stream that delivered `total` bytes, read up to the data end
// (one byte more with ra_reject_metadata) or to its end before that: the
// same errors; the metadata fields stay null.
[[nodiscard]] result check_stream_size(result built, std::uint64_t total, const options& opts);

} // namespace npyguard::ra::detail

#endif
