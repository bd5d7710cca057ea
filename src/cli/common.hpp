// What every command shares: exit statuses, output, and what counts as an
// I/O failure rather than a verdict.
#ifndef NPYGUARD_CLI_COMMON_HPP
#define NPYGUARD_CLI_COMMON_HPP

#include <cstddef>
#include <cstdio>
#include <string>

#include "npyguard/npyguard.hpp"

namespace npyguard_cli {

inline constexpr int exit_valid = 0;
inline constexpr int exit_invalid = 1;
inline constexpr int exit_usage_or_io = 2;

// Bytes of the file shown either side of an error's offset.
inline constexpr std::size_t excerpt_context = 40;

inline const char* const exit_status_text =
    "Exit status: 0 every file valid; 1 some file invalid; 2 a usage error, or a file or\n"
    "directory that cannot be opened or read (2 wins over 1).";

inline void write_out(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

inline bool is_io(const npyguard::error* failure) {
  return failure != nullptr &&
         (failure->code == npyguard::error_code::io_error || failure->code == npyguard::error_code::out_of_memory);
}
inline bool is_io(const npyguard::result& verdict) { return is_io(verdict.failure_if()); }

} // namespace npyguard_cli

#endif
