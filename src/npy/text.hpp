// Text decoding: the header bytes must be latin-1 (1.0, 2.0) or strict
// UTF-8 (3.0), hold no NUL, and end with '\n' (or an unpadded '}'). Other
// raw control characters are left to the grammar: string content inside
// strings, control_character outside them.
#ifndef NPYGUARD_SRC_TEXT_HPP
#define NPYGUARD_SRC_TEXT_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include "npyguard/error.hpp"

namespace npyguard::detail {

// Checks the text; on success sets `ascii_only` when no byte is >= 0x80
// (then latin-1 and UTF-8 read it the same way).
[[nodiscard]] std::optional<error> check_header_text(const unsigned char* text, std::size_t size, bool utf8,
                                                     std::uint64_t base_offset, bool& ascii_only);

} // namespace npyguard::detail

#endif
