// Text the command prints: the one escaping function every text output goes
// through, and the command's flags for the options the library's errors name.
#ifndef NPYGUARD_CLI_TEXT_HPP
#define NPYGUARD_CLI_TEXT_HPP

#include <string>
#include <string_view>

namespace npyguard_cli {

enum class shown_as {
  // A file or field name: a backslash as \\, a newline as \n, a tab as \t,
  // other C0 controls and DEL as \xNN, each byte that is not part of valid
  // UTF-8 as \xNN, and the C1 controls (U+0080-U+009F) and the bidi
  // controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) as
  // \uNNNN. So \xNN is always one raw byte and \uNNNN always one UTF-8
  // encoded code point; everything else is printed as it is.
  name,
  // Text that already uses backslash escapes (messages, numpy's repr of a
  // descr): as `name`, but a backslash is left as it is, so the escapes the
  // text has are not doubled.
  escaped_text,
  // The bytes of a file: printable ASCII as it is, a backslash as \\, a
  // newline as \n, a tab as \t, every other byte as \xNN.
  bytes,
};

// Code points a terminal acts on although they are valid UTF-8: the C1
// controls (U+009B is CSI, as ESC [ is) and the bidirectional controls,
// which reorder what follows them on the line ("Trojan Source").
[[nodiscard]] inline bool acts_on_terminal(char32_t c) noexcept {
  return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

// Nothing the terminal acts on (cursor movement, colours, CSI, a reversed
// line) survives.
[[nodiscard]] std::string escaped(std::string_view text, shown_as how);

// The command's flag for an option the library's errors name
// (npyguard::error::option: "max_header_bytes" -> "--max-header-bytes",
// "timeout_ms" -> "--timeout", "ra_allow_type5" -> "--no-ra-type5"); empty
// for a name the command has no flag for.
[[nodiscard]] std::string_view flag_of(std::string_view option) noexcept;

} // namespace npyguard_cli

#endif
