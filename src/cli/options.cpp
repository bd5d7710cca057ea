#include "options.hpp"

#include <cstdio>
#include <map>

#include "common.hpp"
#include "text.hpp"

namespace npyguard_cli {

// Numbers are plain decimals: CLI11 would read "050" as octal, "0x10" as
// hex, and wrap "-1" into an unsigned limit of 2^64-1. With `suffixes`, a
// K, M or G after the digits multiplies by 1024, 1024^2 or 1024^3. The
// validator checks the range itself, so no value wraps around when CLI11
// converts it, and leaves the plain decimal value for CLI11 to convert.
CLI::Validator decimal_number(std::uint64_t lowest, std::uint64_t highest, bool suffixes) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::string quoted = "'" + text + "'";
        std::string digits = text;
        unsigned shift = 0;
        if (suffixes && !digits.empty()) {
          const char last = digits.back();
          shift = last == 'K' ? 10 : last == 'M' ? 20 : last == 'G' ? 30 : 0;
          if (shift != 0) digits.pop_back();
        }
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
          return quoted + (suffixes ? " is not a decimal number (optionally followed by K, M or G)"
                                    : " is not a decimal number");
        }
        if (digits.size() > 1 && digits[0] == '0') return quoted + " has a leading zero";
        const std::string above = quoted + " is above " + std::to_string(highest);
        std::uint64_t value = 0;
        for (const char digit : digits) {
          const auto d = static_cast<std::uint64_t>(digit - '0');
          if (value > (UINT64_MAX - d) / 10) return above;
          value = value * 10 + d;
        }
        if (shift != 0 && value > (UINT64_MAX >> shift)) return above;
        value <<= shift;
        if (value > highest) return above;
        if (value < lowest) return quoted + " is below " + std::to_string(lowest);
        text = std::to_string(value);
        return {};
      },
      ""); // the options' type names say what the number is
}

// The acceptance policy, shared by the commands that validate.
void add_policy_options(CLI::App& command, npyguard::options& opts) {
  command.add_flag("--allow-object", opts.allow_object,
                   "Accept object ('O') dtypes; the pickle is never read, data-size checks are skipped");
  command.add_flag("--allow-trailing-data", opts.allow_trailing_data, "Accept bytes after the array data");
  command
      .add_option("--max-header-bytes", opts.limits.max_header_bytes,
                  "Largest accepted HEADER_LEN, up to 4294967295 (suffixes K, M, G: times 1024, 1024^2, 1024^3)")
      ->default_val(opts.limits.max_header_bytes)
      ->transform(decimal_number(0, UINT32_MAX, true))
      ->type_name("BYTES");
  command
      .add_option("--max-depth", opts.limits.max_depth,
                  "Deepest nesting of lists and tuples (at most 199, Python's own limit inside the dict)")
      ->default_val(opts.limits.max_depth)
      ->transform(decimal_number(0, npyguard::hard_max_depth))
      ->type_name("N");
  command
      .add_option("--max-ndim", opts.limits.max_ndim,
                  "Most dimensions in the shape, of .npy files and .npz members alike (numpy 2 builds 64, numpy 1.x "
                  "32: pass 32 when loading with numpy 1.x; .ra: at most 1048576)")
      ->default_val(opts.limits.max_ndim)
      ->transform(decimal_number(0, UINT32_MAX))
      ->type_name("N");
  command
      .add_option("--max-data-bytes", opts.limits.max_data_bytes,
                  "Largest accepted array size in bytes (default: no limit; suffixes K, M, G)")
      ->transform(decimal_number(0, UINT64_MAX, true))
      ->type_name("BYTES");
}

void add_format_options(CLI::App& command, npyguard::options& opts, file_format& format) {
  command
      .add_option("--format", format,
                  "Read every FILE as this format instead of detecting it: npy, npz, ra (default: a name ending in "
                  ".npy, .npz or .ra is judged as that format alone, whatever it holds; other names by the first "
                  "bytes, \\x93NUMPY, PK or rawarray, else npy)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, file_format>{
          {"npy", file_format::npy}, {"npz", file_format::npz}, {"ra", file_format::ra}}))
      ->type_name("FORMAT");
  command.add_flag("--verify", opts.verify,
                   ".npz: also read every member in full (inflate to the end, exact lengths, CRC-32); by default "
                   "only each member's header is read");
  command.add_flag("--ra-reject-metadata", opts.ra_reject_metadata,
                   ".ra: refuse bytes after the data (trailing_data); by default they are metadata, reported and "
                   "never read");
  command.add_flag_callback(
      "--no-ra-type5", [&opts] { opts.ra_allow_type5 = false; },
      ".ra: refuse element type 5 (RawArray.jl's bool, rawarray-rust's bfloat16) as unknown_element_type");
  command.add_option("--max-members", opts.limits.max_members, ".npz: most members an archive may declare")
      ->default_val(opts.limits.max_members)
      ->transform(decimal_number(0, UINT64_MAX))
      ->type_name("N");
  command
      .add_option("--max-total-bytes", opts.limits.max_total_bytes,
                  ".npz: largest sum of the members' declared sizes (default 4G; suffixes K, M, G)")
      ->transform(decimal_number(0, UINT64_MAX, true))
      ->type_name("BYTES");
  command
      .add_option("--max-ratio", opts.limits.max_ratio,
                  ".npz: largest declared size per compressed byte of a deflated member (DEFLATE's own bound is 1032)")
      ->default_val(opts.limits.max_ratio)
      ->transform(decimal_number(1, UINT64_MAX))
      ->type_name("N");
  command
      .add_option("--max-stream-bytes", opts.limits.max_stream_bytes,
                  ".npz from standard input or a FIFO: the most bytes spooled to an unlinked temporary file in $TMPDIR "
                  "(default /tmp; the directory is at the end), "
                  "never more than --max-total-bytes + 64M (default 4G + 64M; suffixes K, M, G)")
      ->transform(decimal_number(0, UINT64_MAX, true))
      ->type_name("BYTES");
}

// --timeout: for check and inspect, whose inputs may be FIFOs and devices.
void add_timeout_option(CLI::App& command, std::uint32_t& seconds) {
  command
      .add_option("--timeout", seconds,
                  "Longest wait in seconds for a FIFO, socket or device named as FILE, or for standard input, then "
                  "io_error (default and 0: no limit)")
      ->transform(decimal_number(0, max_timeout_seconds))
      ->type_name("SECONDS");
}

// Usage errors: one line on standard error, "npyguard: WHAT; run 'npyguard
// [COMMAND] --help'", escaped like every other text the command prints (an
// argument may be any bytes).
int usage_error(const std::string& what, const std::string& command) {
  const std::string help = command.empty() ? "npyguard --help" : "npyguard " + command + " --help";
  std::fprintf(stderr, "npyguard: %s; run '%s'\n", escaped(what, shown_as::name).c_str(), help.c_str());
  return exit_usage_or_io;
}

} // namespace npyguard_cli
