// The RawArray entry points: each adapts its input (a buffer, a path, a
// descriptor, a source, a stream) to the header checks (ra/header.hpp);
// every exception stops here (core/guard.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "core/source_reads.hpp"
#include "npyguard/ra/validate.hpp"
#include "platform/inputs.hpp"
#include "ra/header.hpp"

namespace npyguard::ra {
namespace {

using npyguard::detail::checked_count;
using npyguard::detail::read_error_from;

// The caller's memory as a source.
class memory_source final : public random_access_source {
public:
  memory_source(const unsigned char* data, std::size_t size) noexcept : data_(data), size_(size) {}
  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (offset >= size_) return 0;
    const std::size_t n = std::min<std::size_t>(size, size_ - static_cast<std::size_t>(offset));
    if (n != 0) std::memcpy(buffer, data_ + offset, n);
    return static_cast<std::ptrdiff_t>(n);
  }

private:
  const unsigned char* data_;
  std::size_t size_;
};

// Little-endian words read as bytes into `dims`, decoded in place.
void decode_dims(std::vector<std::uint64_t>& dims) noexcept {
  for (std::uint64_t& dim : dims) dim = detail::load_u64(reinterpret_cast<const unsigned char*>(&dim));
}

result validate_random_access(random_access_source& input, const options& opts) {
  std::uint64_t input_size = input.size();
  unsigned char fixed[fixed_header_size];
  const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(input_size, sizeof fixed));
  const std::ptrdiff_t got = wanted == 0 ? 0 : checked_count(input.read_at(0, fixed, wanted), wanted);
  if (got < 0) return read_error_from(got);
  const auto have = static_cast<std::size_t>(got);
  if (have < wanted) input_size = have; // the input shrank under us: it ends here
  if (auto failure = detail::check_fixed_fields(fixed, have, opts)) return *failure;
  if (have < fixed_header_size) return detail::truncated_header(input_size, fixed_header_size);

  const std::uint64_t ndims = detail::load_u64(fixed + 40); // <= hard_max_ndim
  const std::uint64_t header_size = fixed_header_size + 8 * ndims;
  if (input_size < header_size) return detail::truncated_header(input_size, header_size);
  // Allocated only now: the limit and the input's size bound it.
  std::vector<std::uint64_t> dims(static_cast<std::size_t>(ndims));
  if (!dims.empty()) { // a source is never asked for 0 bytes (nor given a null buffer)
    const std::size_t dims_bytes = dims.size() * 8;
    const std::ptrdiff_t rest = checked_count(input.read_at(fixed_header_size, dims.data(), dims_bytes), dims_bytes);
    if (rest < 0) return read_error_from(rest);
    if (static_cast<std::size_t>(rest) < dims_bytes) {
      return detail::truncated_header(fixed_header_size + static_cast<std::uint64_t>(rest), header_size);
    }
    decode_dims(dims);
  }
  return detail::check_input_size(detail::build_model(fixed, std::move(dims), opts), input_size, opts);
}

result validate_sequential(byte_source& source, const options& opts) {
  unsigned char fixed[fixed_header_size];
  const std::ptrdiff_t got = npyguard::detail::read_full(source, fixed, sizeof fixed);
  if (got < 0) return read_error_from(got);
  const auto have = static_cast<std::size_t>(got);
  if (auto failure = detail::check_fixed_fields(fixed, have, opts)) return *failure;
  if (have < fixed_header_size) return detail::truncated_header(have, fixed_header_size);

  // The dims grow only with bytes that arrived (max_ndim may allow 2^20).
  const std::uint64_t ndims = detail::load_u64(fixed + 40);
  const std::uint64_t header_size = fixed_header_size + 8 * ndims;
  std::vector<std::uint64_t> dims;
  unsigned char chunk[4096];
  while (dims.size() < ndims) {
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof chunk, 8 * (ndims - dims.size())));
    const std::ptrdiff_t n = npyguard::detail::read_full(source, chunk, wanted);
    if (n < 0) return read_error_from(n);
    const auto arrived = static_cast<std::size_t>(n);
    for (std::size_t at = 0; at + 8 <= arrived; at += 8) dims.push_back(detail::load_u64(chunk + at));
    if (arrived < wanted) {
      return detail::truncated_header(fixed_header_size + 8 * static_cast<std::uint64_t>(dims.size()) + arrived % 8,
                                      header_size);
    }
  }
  result built = detail::build_model(fixed, std::move(dims), opts);
  if (!built.ok()) return built;

  // The data is counted, never stored, and read only until the verdict is
  // certain (SPEC-ra.md section 5): its end, or one byte more when metadata
  // is refused.
  const header& model = built.value();
  const std::uint64_t data_end = model.data_offset + model.data_length; // checked by build_model
  std::uint64_t total = header_size;
  bool ended = false;
  const std::uint64_t enough = opts.ra_reject_metadata ? data_end + 1 : data_end;
  if (const std::ptrdiff_t failed = npyguard::detail::count_until(source, total, enough, ended); failed < 0) {
    return read_error_from(failed);
  }
  return detail::check_stream_size(std::move(built), total, opts);
}

} // namespace

result validate_buffer(const void* data, std::size_t size, const options& opts) noexcept {
  return npyguard::detail::guarded([&] {
    memory_source input(static_cast<const unsigned char*>(data), data == nullptr ? 0 : size);
    return validate_random_access(input, opts);
  });
}

result validate_source(random_access_source& source, const options& opts) noexcept {
  return npyguard::detail::guarded([&] { return validate_random_access(source, opts); });
}

result validate_stream(byte_source& source, const options& opts) noexcept {
  return npyguard::detail::guarded([&] { return validate_sequential(source, opts); });
}

result validate_fd(int fd, const options& opts) noexcept {
  return platform::read_descriptor<result>(
      fd, opts, [&](random_access_source& input) { return validate_random_access(input, opts); },
      [&](byte_source& source) { return validate_sequential(source, opts); });
}

result validate_file(const char* path, const options& opts) noexcept {
  return platform::read_path<result>(
      path, opts, [&](random_access_source& input) { return validate_random_access(input, opts); },
      [&](byte_source& source) { return validate_sequential(source, opts); });
}

} // namespace npyguard::ra
