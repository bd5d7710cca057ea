// The header np.save writes (numpy 1.24's _write_array_header and
// _wrap_header_guess_version), and the canonical profile's comparison.
#ifndef NPYGUARD_SRC_ENCODE_HPP
#define NPYGUARD_SRC_ENCODE_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npy/framing.hpp"
#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"

namespace npyguard::detail {

// What np.save writes as fortran_order: numpy writes True only for an array
// that is Fortran-contiguous and not also C-contiguous. An array read from a
// file with itemsize 0 has all strides 0 and is both.
[[nodiscard]] bool written_fortran_order(const std::vector<std::uint64_t>& shape, std::uint64_t itemsize,
                                         bool fortran_order) noexcept;

// Replaces `out` with the bytes from the magic string to the '\n'. Returns
// false when the header does not fit even a 3.0 HEADER_LEN (4 GiB), as
// numpy raises. Throws std::bad_alloc only.
bool encode_header_bytes(const dtype& type, const std::vector<std::uint64_t>& shape, bool fortran_order,
                         std::string& out);

// The canonical profile for a model built from `text` (HEADER_LEN bytes after
// the preamble `framing`): empty when preamble + text are exactly
// encode_header_bytes of the model, else not_canonical at the first byte
// that differs. Throws std::bad_alloc only.
[[nodiscard]] std::optional<error> check_canonical(const header& model, const preamble& framing,
                                                   const unsigned char* text);

} // namespace npyguard::detail

#endif
