#include "npz/reader.hpp"

#include <algorithm>
#include <cstring>

#include "core/io_error.hpp"

namespace npyguard::npz::detail {

namespace {

constexpr std::size_t min_window = std::size_t{64} * 1024;

error shrank() { return error{error_code::io_error, std::nullopt, "the archive shrank while it was read", {}, {}}; }

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
  if (window_.size() < wanted) window_.resize(std::max(wanted, min_window));
  window_length_ = 0;
  if (auto failure = read(offset, window_.data(), wanted)) return failure;
  window_offset_ = offset;
  window_length_ = wanted;
  out = window_.data();
  return std::nullopt;
}

std::optional<error> archive_reader::read(std::uint64_t offset, void* buffer, std::size_t length) {
  bytes_read_ += length;
  if (memory_ != nullptr) {
    std::memcpy(buffer, memory_ + offset, length);
    return std::nullopt;
  }
  const std::ptrdiff_t got = source_->read_at(offset, buffer, length);
  if (got < 0) return npyguard::detail::read_error_from(got);
  if (static_cast<std::size_t>(got) != length) return shrank();
  return std::nullopt;
}

} // namespace npyguard::npz::detail
