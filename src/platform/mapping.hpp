// A read-only shared mapping of part of a file, unmapped on destruction.
#ifndef NPYGUARD_SRC_PLATFORM_MAPPING_HPP
#define NPYGUARD_SRC_PLATFORM_MAPPING_HPP

#include <cstddef>
#include <cstdint>
#include <utility>

namespace npyguard::platform {

// munmap(address, length); nothing for a null address.
void unmap(void* address, std::size_t length) noexcept;

// Move-only. data() is the first requested byte; the mapping itself starts
// at the page boundary at or below it (address(), length()).
class mapping {
public:
  mapping() noexcept = default;
  mapping(mapping&& other) noexcept
      : address_(std::exchange(other.address_, nullptr)),
        length_(std::exchange(other.length_, 0)),
        data_(std::exchange(other.data_, nullptr)) {}
  mapping& operator=(mapping&& other) noexcept {
    if (this != &other) {
      unmap(address_, length_);
      address_ = std::exchange(other.address_, nullptr);
      length_ = std::exchange(other.length_, 0);
      data_ = std::exchange(other.data_, nullptr);
    }
    return *this;
  }
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  ~mapping() { unmap(address_, length_); }

  [[nodiscard]] const unsigned char* data() const noexcept { return data_; }
  [[nodiscard]] void* address() const noexcept { return address_; }
  [[nodiscard]] std::size_t length() const noexcept { return length_; }
  // Gives the mapping up without unmapping it: the caller passes address()
  // and length(), read before, to unmap() later.
  [[nodiscard]] void* release() noexcept {
    length_ = 0;
    data_ = nullptr;
    return std::exchange(address_, nullptr);
  }

private:
  friend int map_readonly(int fd, std::uint64_t offset, std::size_t length, mapping& out) noexcept;

  void* address_ = nullptr;
  std::size_t length_ = 0;
  const unsigned char* data_ = nullptr;
};

// mmap of [offset, offset + length) of `fd`, PROT_READ and MAP_SHARED; the
// offset need not be page-aligned. `length` must not be 0. Returns 0, or
// minus an errno value with `out` untouched.
[[nodiscard]] int map_readonly(int fd, std::uint64_t offset, std::size_t length, mapping& out) noexcept;

} // namespace npyguard::platform

#endif
