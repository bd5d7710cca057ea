// Header text -> AST. The PEGTL grammar of grammar/npy_header.hpp is the
// definition; a hand-written fast path (npy/fast_parse.cpp) reads the headers
// the grammar accepts into the same tree, and hands every other text to the
// grammar, which decides and says why. fuzz_header_text holds the two to
// the same verdict and the same tree.
#ifndef NPYGUARD_SRC_PARSE_HPP
#define NPYGUARD_SRC_PARSE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include "npy/ast.hpp"
#include "npy/ast_builder.hpp"
#include "npyguard/error.hpp"

namespace npyguard::detail {

// Parses `size` bytes of header text (already checked by check_header_text)
// into `out`: the fast path, then the grammar if the fast path gave up.
// Returns the error, or nothing on success. May throw std::bad_alloc; every
// other failure is returned.
[[nodiscard]] std::optional<error> parse_header_text(const char* text, std::size_t size, const parse_settings& settings,
                                                     ast& out);

// The grammar alone (the definition).
[[nodiscard]] std::optional<error> parse_header_text_grammar(const char* text, std::size_t size,
                                                             const parse_settings& settings, ast& out);

// The fast path alone: true with `out` filled when the grammar accepts the
// text; false when it does not, or when the fast path cannot tell (then
// `out` holds a partial tree). May throw std::bad_alloc.
[[nodiscard]] bool parse_header_text_fast(const char* text, std::size_t size, const parse_settings& settings, ast& out);

} // namespace npyguard::detail

#endif
