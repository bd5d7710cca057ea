// What the command prints: one line per file, the compiler-style excerpt
// under an error, JSON objects, and inspect's dtype tree.
#ifndef NPYGUARD_CLI_REPORT_HPP
#define NPYGUARD_CLI_REPORT_HPP

#include <string>

#include <nlohmann/json.hpp>

#include "inputs.hpp"
#include "npyguard/npyguard.hpp"

namespace npyguard_cli {

// Bytes below 0x20, 0x7F and the backslash escaped (\n, \t, \xNN, \\), so
// no file name or header byte can move the cursor or recolour a terminal.
[[nodiscard]] std::string escaped(const std::string& bytes, bool escape_non_ascii = false);

// "FILE: ok, version 1.0, descr '<f8', shape (3,), nbytes 24" or
// "FILE:OFFSET: CODE: message".
[[nodiscard]] std::string verdict_line(const std::string& file, const npyguard::result& verdict);

// For an error with an offset: the line of the file around the offset (the
// header is one line) with every byte that is not printable ASCII escaped,
// and a caret under the byte at the offset; empty when there is nothing to
// show (the offset is in the data, or the bytes cannot be read again).
[[nodiscard]] std::string excerpt_lines(const checked& result);

// check --json: file, valid, and the model's summary or the error.
[[nodiscard]] nlohmann::json verdict_json(const std::string& file, const npyguard::result& verdict);

// inspect --json: verdict_json plus "dtype", the dtype tree as objects.
[[nodiscard]] nlohmann::json dtype_json(const npyguard::dtype& type);

// inspect's text: the model as a list of properties and an indented dtype tree.
[[nodiscard]] std::string inspect_text(const std::string& file, const npyguard::header& model);

} // namespace npyguard_cli

#endif
