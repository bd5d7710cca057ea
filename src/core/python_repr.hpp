// Python's repr() of a str, byte for byte as CPython 3 writes it (quote
// choice, escapes, which characters count as printable).
#ifndef NPYGUARD_SRC_PYTHON_REPR_HPP
#define NPYGUARD_SRC_PYTHON_REPR_HPP

#include <string>
#include <string_view>

namespace npyguard::detail {

// `text` is UTF-8 without surrogates (every string the parser produces).
void append_python_repr(std::string& out, std::string_view text);

// For error messages: the repr of at most `max_bytes` of `text` (cut at a
// character boundary), with "..." after it when cut.
[[nodiscard]] std::string python_repr_for_message(std::string_view text, std::size_t max_bytes = 64);

} // namespace npyguard::detail

#endif
