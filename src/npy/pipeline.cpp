#include "npy/pipeline.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/io_error.hpp"
#include "core/source_reads.hpp"
#include "npy/data_size.hpp"
#include "npy/encode.hpp"
#include "npy/model_builder.hpp"
#include "npy/parse.hpp"
#include "npy/text.hpp"

namespace npyguard::detail {
namespace {

// Header and preamble of a regular file are read with one pread when they fit.
constexpr std::size_t file_prefix_size = 4096;
// Streams grow the header buffer by at most what has already arrived (at
// least this much), so a short input claiming a huge header costs little.
constexpr std::size_t first_stream_chunk = 4096;

} // namespace

result validate_text(const preamble& framing, const unsigned char* text, const options& opts) {
  const bool utf8 = framing.major_version == 3;
  parse_settings settings;
  if (auto failure = check_header_text(text, framing.header_length, utf8, framing.header_offset, settings.ascii_only)) {
    return *failure;
  }
  settings.utf8 = utf8;
  settings.allow_long_suffix = !utf8;
  settings.max_depth = std::min(opts.limits.max_depth, hard_max_depth);
  settings.base_offset = framing.header_offset;
  ast tree;
  if (auto failure = parse_header_text(reinterpret_cast<const char*>(text), framing.header_length, settings, tree)) {
    return *failure;
  }
  result built = build_model(tree, framing, opts);
  // The canonical comparison comes before the data-size verdict: errors are
  // reported in the order of their offsets, and its offset is in the header.
  if (built.ok() && opts.canonical) {
    if (auto failure = check_canonical(built.value(), framing, text)) return *failure;
  }
  return built;
}

result validate_contiguous(const unsigned char* data, std::size_t size, const options& opts) {
  preamble framing;
  if (auto failure = read_preamble(data, std::min(size, max_preamble_size), opts, framing)) return *failure;
  if (auto failure = check_header_fits(framing, size)) return *failure;
  return check_data_size(validate_text(framing, data + framing.header_offset, opts), size, opts);
}

result validate_random_access(random_access_source& input, const options& opts) {
  const std::uint64_t file_size = input.size();
  unsigned char prefix[file_prefix_size];
  const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(file_size, sizeof prefix));
  const std::ptrdiff_t got = checked_count(input.read_at(0, prefix, wanted), wanted);
  if (got < 0) return read_error_from(got);
  const auto available = static_cast<std::size_t>(got);
  preamble framing;
  if (auto failure = read_preamble(prefix, std::min(available, max_preamble_size), opts, framing)) return *failure;
  if (auto failure = check_header_fits(framing, file_size)) return *failure;
  const std::uint64_t header_end = framing.data_offset();
  if (header_end <= available) {
    return check_data_size(validate_text(framing, prefix + framing.header_offset, opts), file_size, opts);
  }
  // Allocated only now: max_header_bytes and the input size bound it.
  std::vector<unsigned char> text(framing.header_length);
  const std::size_t already = available - static_cast<std::size_t>(framing.header_offset);
  std::memcpy(text.data(), prefix + framing.header_offset, already);
  const std::ptrdiff_t rest =
      checked_count(input.read_at(available, text.data() + already, text.size() - already), text.size() - already);
  if (rest < 0) return read_error_from(rest);
  if (static_cast<std::size_t>(rest) != text.size() - already) { // the file shrank under us
    return check_header_fits(framing, available + static_cast<std::uint64_t>(rest)).value();
  }
  return check_data_size(validate_text(framing, text.data(), opts), file_size, opts);
}

result validate_sequential(byte_source& source, const options& opts) {
  unsigned char prefix[max_preamble_size];
  const std::ptrdiff_t got = read_full(source, prefix, sizeof prefix);
  if (got < 0) return read_error_from(got);
  const auto available = static_cast<std::size_t>(got);
  preamble framing;
  if (auto failure = read_preamble(prefix, available, opts, framing)) return *failure;

  std::vector<unsigned char> text;
  const std::size_t already = std::min<std::size_t>(available - framing.header_offset, framing.header_length);
  text.assign(prefix + framing.header_offset, prefix + framing.header_offset + already);
  while (text.size() < framing.header_length) {
    const std::size_t chunk =
        std::min<std::size_t>(framing.header_length - text.size(), std::max(first_stream_chunk, text.size()));
    const std::size_t old_size = text.size();
    text.resize(old_size + chunk);
    const std::ptrdiff_t n = read_full(source, text.data() + old_size, chunk);
    if (n < 0) return read_error_from(n);
    text.resize(old_size + static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < chunk) {
      return check_header_fits(framing, framing.header_offset + text.size()).value();
    }
  }
  result checked = validate_text(framing, text.data(), opts);
  if (!checked.ok()) return checked;

  // The data is counted, never stored, and read only until the verdict is
  // certain (SPEC.md section 5): the first byte past the data is
  // trailing_data, and with trailing data allowed the end of the data is
  // enough. A pickle's length is unknown: nothing more to read. The
  // preamble read may have taken bytes past a short header.
  const header& model = checked.value();
  if (model.data_is_pickle) return checked;
  std::uint64_t total = framing.header_offset + text.size() + (available - framing.header_offset - already);
  text.clear();
  text.shrink_to_fit();
  const std::uint64_t data_end = model.data_offset + model.nbytes; // checked by size_array
  const std::uint64_t enough = opts.allow_trailing_data ? data_end : data_end + 1;
  bool ended = false;
  if (const std::ptrdiff_t failed = count_until(source, total, enough, ended); failed < 0) {
    return read_error_from(failed);
  }
  return check_data_size(std::move(checked), total, opts, ended);
}

} // namespace npyguard::detail
