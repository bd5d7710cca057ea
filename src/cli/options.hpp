// The command's options shared by several commands: the acceptance policy,
// --timeout, plain decimal numbers, and the one format of usage errors.
#ifndef NPYGUARD_CLI_OPTIONS_HPP
#define NPYGUARD_CLI_OPTIONS_HPP

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "inputs.hpp"
#include "npyguard/npyguard.hpp"

namespace npyguard_cli {

// Numbers are plain decimals from `lowest` to `highest`; with `suffixes`, K,
// M or G multiply by 1024, 1024^2, 1024^3.
[[nodiscard]] CLI::Validator decimal_number(std::uint64_t lowest, std::uint64_t highest, bool suffixes = false);

// --allow-object, --allow-trailing-data and the --max-* limits.
void add_policy_options(CLI::App& command, npyguard::options& opts);

// --format, --verify and the archive limits (--max-members, --max-total-bytes,
// --max-ratio, --max-stream-bytes): for check and inspect.
void add_format_options(CLI::App& command, npyguard::options& opts, file_format& format);

// options::timeout_ms holds milliseconds in 32 bits.
inline constexpr std::uint32_t max_timeout_seconds = UINT32_MAX / 1000;

// --timeout SECONDS: for check and inspect, whose inputs may be FIFOs and devices.
void add_timeout_option(CLI::App& command, std::uint32_t& seconds);

// "npyguard: WHAT; run 'npyguard [COMMAND] --help'" on standard error,
// escaped like every other text the command prints; returns exit status 2.
int usage_error(const std::string& what, const std::string& command);

} // namespace npyguard_cli

#endif
