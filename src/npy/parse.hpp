// Header text -> AST, with the PEGTL grammar of grammar/npy_header.hpp.
#ifndef NPYGUARD_SRC_PARSE_HPP
#define NPYGUARD_SRC_PARSE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include "npy/ast.hpp"
#include "npyguard/error.hpp"

namespace npyguard::detail {

struct parse_settings {
  bool utf8 = false;              // version 3.0: strings are UTF-8, else latin-1
  bool ascii_only = false;        // no byte >= 0x80: strings need no transcoding
  bool allow_long_suffix = true;  // versions 1.0 and 2.0: Python 2 '10L'
  std::uint32_t max_depth = 32;   // nesting of lists and tuples
  std::uint64_t base_offset = 10; // file offset of the first header byte
};

// Parses `size` bytes of header text (already checked by check_header_text)
// into `out`. Returns the error, or nothing on success. May throw
// std::bad_alloc; every other failure is returned.
[[nodiscard]] std::optional<error> parse_header_text(const char* text, std::size_t size, const parse_settings& settings,
                                                     ast& out);

} // namespace npyguard::detail

#endif
