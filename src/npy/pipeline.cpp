#include "npy/pipeline.hpp"

#include <algorithm>
#include <cstring>

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

std::optional<error> validate_text(workspace& space, const preamble& framing, const unsigned char* text,
                                   const options& opts, header& model) {
  const bool utf8 = framing.major_version == 3;
  parse_settings settings;
  if (auto failure = check_header_text(text, framing.header_length, utf8, framing.header_offset, settings.ascii_only)) {
    return failure;
  }
  settings.utf8 = utf8;
  settings.allow_long_suffix = !utf8;
  settings.max_depth = std::min(opts.limits.max_depth, hard_max_depth);
  settings.base_offset = framing.header_offset;
  if (auto failure =
          parse_header_text(reinterpret_cast<const char*>(text), framing.header_length, settings, space.tree)) {
    return failure;
  }
  if (auto failure = build_model(space.tree, framing, opts, space, model)) return failure;
  // The canonical comparison comes before the data-size verdict: errors are
  // reported in the order of their offsets, and its offset is in the header.
  if (opts.canonical) return check_canonical(model, framing, text);
  return std::nullopt;
}

std::optional<error> validate_contiguous(workspace& space, const unsigned char* data, std::size_t size,
                                         const options& opts, header& model) {
  preamble framing;
  if (auto failure = read_preamble(data, std::min(size, max_preamble_size), opts, framing)) return failure;
  if (auto failure = check_header_fits(framing, size)) return failure;
  if (auto failure = validate_text(space, framing, data + framing.header_offset, opts, model)) return failure;
  return check_data_size(model, size, opts);
}

std::optional<error> validate_random_access(workspace& space, random_access_source& input, const options& opts,
                                            header& model) {
  const std::uint64_t file_size = input.size();
  unsigned char prefix[file_prefix_size];
  // Minimal reads: the preamble, then exactly the rest of the header.
  const std::size_t first = opts.minimal_reads ? max_preamble_size : sizeof prefix;
  const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(file_size, first));
  const std::ptrdiff_t got = checked_count(input.read_at(0, prefix, wanted), wanted);
  if (got < 0) return read_error_from(got);
  const auto available = static_cast<std::size_t>(got);
  preamble framing;
  if (auto failure = read_preamble(prefix, std::min(available, max_preamble_size), opts, framing)) return failure;
  if (auto failure = check_header_fits(framing, file_size)) return failure;
  const std::uint64_t header_end = framing.data_offset();
  const unsigned char* text = prefix + framing.header_offset;
  if (header_end > available) {
    // Read into the workspace: max_header_bytes and the input size bound it.
    std::vector<unsigned char>& buffer = space.text;
    buffer.resize(framing.header_length);
    const std::size_t already = available - static_cast<std::size_t>(framing.header_offset);
    std::memcpy(buffer.data(), prefix + framing.header_offset, already);
    const std::ptrdiff_t rest = checked_count(
        input.read_at(available, buffer.data() + already, buffer.size() - already), buffer.size() - already);
    if (rest < 0) return read_error_from(rest);
    if (static_cast<std::size_t>(rest) != buffer.size() - already) { // the file shrank under us
      return header_cut_short(framing, available + static_cast<std::uint64_t>(rest));
    }
    text = buffer.data();
  }
  if (auto failure = validate_text(space, framing, text, opts, model)) return failure;
  return check_data_size(model, file_size, opts);
}

std::optional<error> validate_sequential(workspace& space, byte_source& source, const options& opts, header& model) {
  unsigned char prefix[max_preamble_size];
  const std::ptrdiff_t got = read_full(source, prefix, sizeof prefix);
  if (got < 0) return read_error_from(got);
  const auto available = static_cast<std::size_t>(got);
  preamble framing;
  if (auto failure = read_preamble(prefix, available, opts, framing)) return failure;

  std::vector<unsigned char>& text = space.text;
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
      return header_cut_short(framing, framing.header_offset + text.size());
    }
  }
  if (auto failure = validate_text(space, framing, text.data(), opts, model)) return failure;

  // The data is counted, never stored, and read only until the verdict is
  // certain (SPEC.md section 5): the first byte past the data is
  // trailing_data, and with trailing data allowed the end of the data is
  // enough. A pickle's length is unknown: nothing more to read. The
  // preamble read may have taken bytes past a short header.
  if (model.data_is_pickle) return std::nullopt;
  std::uint64_t total = framing.header_offset + text.size() + (available - framing.header_offset - already);
  const std::uint64_t data_end = model.data_offset + model.nbytes; // checked by size_array
  const std::uint64_t enough = opts.allow_trailing_data ? data_end : data_end + 1;
  bool ended = false;
  if (const std::ptrdiff_t failed = count_until(source, total, enough, ended); failed < 0) {
    return read_error_from(failed);
  }
  return check_data_size(model, total, opts, ended);
}

} // namespace npyguard::detail
