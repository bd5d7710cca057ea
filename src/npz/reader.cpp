#include "npz/reader.hpp"

#include <algorithm>

#include "core/io_error.hpp"

namespace npyguard::npz::detail {

namespace {

constexpr std::size_t min_window = std::size_t{64} * 1024;

} // namespace

std::optional<error> archive_reader::view(std::uint64_t offset, std::size_t length, const unsigned char*& out,
                                          std::size_t ahead) {
  const bool held = offset >= window_offset_ && offset + length <= window_offset_ + window_length_;
  const std::size_t wanted = static_cast<std::size_t>(std::min<std::uint64_t>(std::max(length, ahead), size_ - offset));
  if (memory_ != nullptr) {
    // No copy; bytes_read counts what a source would have been asked for.
    out = memory_ + offset;
    if (!held) {
      bytes_read_ += wanted;
      window_offset_ = offset;
      window_length_ = wanted;
    }
    return std::nullopt;
  }
  if (held) {
    out = window_.data() + (offset - window_offset_);
    return std::nullopt;
  }
  if (auto failure = fill_window(offset, wanted)) return failure;
  out = window_.data();
  return std::nullopt;
}

std::optional<error> archive_reader::fill_window(std::uint64_t offset, std::size_t length) {
  if (window_.size() < length) window_.resize(std::max(length, min_window));
  window_length_ = 0;
  bytes_read_ += length;
  const std::ptrdiff_t got = source_->read_at(offset, window_.data(), length);
  if (got < 0) return npyguard::detail::read_error_from(got);
  if (static_cast<std::size_t>(got) != length) {
    return error{error_code::io_error, std::nullopt, "the archive shrank while it was read"};
  }
  window_offset_ = offset;
  window_length_ = length;
  return std::nullopt;
}

} // namespace npyguard::npz::detail
