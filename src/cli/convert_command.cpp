// npyguard convert: RawArray to .npy and back (SPEC-ra.md section 10a).
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "common.hpp"
#include "options.hpp"
#include "report.hpp"
#include "text.hpp"

namespace npyguard_cli {
namespace {

// The direction: IN's name, else IN's first bytes, else OUT's name. The
// bytes come through the library's boundary (one open without blocking,
// read only when IN is a regular file): a FIFO or a device is never waited
// on here, and the conversion itself refuses it at once (io_error: it reads
// its input by offset).
file_format input_format(const std::string& input, const std::string& output) {
  if (has_suffix(input, ".ra")) return file_format::ra;
  if (has_suffix(input, ".npy")) return file_format::npy;
  const auto head = npyguard::read_input_head(input.c_str());
  if (const npyguard::input_head* bytes = head.value_if()) {
    if (bytes->length == 8 && std::memcmp(bytes->bytes, "rawarray", 8) == 0) return file_format::ra;
    if (bytes->length >= 6 && std::memcmp(bytes->bytes, "\x93NUMPY", 6) == 0) return file_format::npy;
  }
  if (has_suffix(output, ".npy")) return file_format::ra;
  if (has_suffix(output, ".ra")) return file_format::npy;
  return file_format::detect;
}

// OUT's suffix, when it names a format, must be the one written: a .ra
// file holding .npy bytes (or the reverse) would be judged by its name.
bool output_named_otherwise(const std::string& output, file_format written) {
  const bool named_npy = has_suffix(output, ".npy");
  const bool named_ra = has_suffix(output, ".ra");
  const bool named_npz = has_suffix(output, ".npz");
  return written == file_format::npy ? named_ra || named_npz : named_npy || named_npz;
}

int failed(const std::string& line, const npyguard::error& failure) {
  std::fprintf(stderr, "npyguard convert: %s\n", line.c_str());
  return is_io(&failure) ? exit_usage_or_io : exit_invalid;
}

} // namespace

int run_convert(const std::string& input, const std::string& output, const npyguard::options& opts) {
  const file_format from = input_format(input, output);
  if (from == file_format::ra || from == file_format::npy) {
    const file_format written = from == file_format::ra ? file_format::npy : file_format::ra;
    if (output_named_otherwise(output, written)) {
      return usage_error("OUT '" + output + "' is named for another format than the " +
                             (written == file_format::npy ? ".npy" : ".ra") +
                             " file convert would write; nothing was written",
                         "convert");
    }
  }
  switch (from) {
    case file_format::ra: {
      const auto converted = npyguard::convert_ra_to_npy(input.c_str(), output.c_str(), opts);
      if (!converted.ok())
        return failed(verdict_line(input, npyguard::ra::result(converted.failure())), converted.failure());
      write_out(verdict_line(output, npyguard::result(converted.value().output)) + "\n");
      if (const std::uint64_t dropped = converted.value().input.metadata_length.value_or(0); dropped != 0) {
        std::fflush(stdout);
        std::fprintf(stderr, "npyguard convert: %s: %llu bytes of metadata after the data were not carried over\n",
                     escaped(input, shown_as::name).c_str(), static_cast<unsigned long long>(dropped));
      }
      return exit_valid;
    }
    case file_format::npy: {
      const auto converted = npyguard::convert_npy_to_ra(input.c_str(), output.c_str(), opts);
      if (!converted.ok())
        return failed(verdict_line(input, npyguard::result(converted.failure())), converted.failure());
      npyguard::ra::header written = converted.value().output;
      write_out(verdict_line(output, npyguard::ra::result(written)) + "\n");
      return exit_valid;
    }
    case file_format::detect:
    case file_format::npz: break;
  }
  return usage_error(
      "cannot tell the direction: IN is neither a .ra nor a .npy file by its name or its first bytes, "
      "and OUT's name ends in neither",
      "convert");
}

} // namespace npyguard_cli
