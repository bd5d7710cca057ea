// Format detection by the first bytes and the name; the peeked stream.
#include "npyguard/detect.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace npyguard {
namespace {

bool ends_with(std::string_view name, std::string_view suffix) noexcept {
  return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

bool starts_with(const unsigned char* head, std::size_t size, const char* magic, std::size_t length) noexcept {
  return size >= length && std::memcmp(head, magic, length) == 0;
}

} // namespace

file_format detect_format(const void* head, std::size_t size, std::string_view name) noexcept {
  const auto* bytes = static_cast<const unsigned char*>(head);
  if (bytes == nullptr) size = 0;
  // SPEC.md section 9: a name is a claim, judged by that format alone.
  if (ends_with(name, ".npy")) return file_format::npy;
  if (ends_with(name, ".npz")) return file_format::npz;
  if (ends_with(name, ".ra")) return file_format::ra;
  if (starts_with(bytes, size, "\x93NUMPY", 6)) return file_format::npy;
  if (starts_with(bytes, size, "PK\x03\x04", 4) || starts_with(bytes, size, "PK\x05\x06", 4)) return file_format::npz;
  if (starts_with(bytes, size, "rawarray", 8)) return file_format::ra;
  return file_format::npy;
}

void peeked_source::peek() noexcept {
  while (head_size_ < sizeof head_) {
    const std::ptrdiff_t n = rest_.read(head_ + head_size_, sizeof head_ - head_size_);
    if (n <= 0 || static_cast<std::size_t>(n) > sizeof head_ - head_size_) {
      pending_ = n <= 0 ? n : -EIO; // a source that answers more than it was asked
      has_pending_ = true;
      return;
    }
    head_size_ += static_cast<std::size_t>(n);
  }
}

std::ptrdiff_t peeked_source::read(void* buffer, std::size_t size) noexcept {
  if (size == 0) return 0;
  if (served_ < head_size_) {
    const std::size_t n = std::min(size, head_size_ - served_);
    std::memcpy(buffer, head_ + served_, n);
    served_ += n;
    return static_cast<std::ptrdiff_t>(n);
  }
  if (has_pending_) {
    has_pending_ = false;
    return pending_;
  }
  return rest_.read(buffer, size);
}

} // namespace npyguard
