#include "platform/mapping.hpp"

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace npyguard::platform {

void unmap(void* address, std::size_t length) noexcept {
  if (address != nullptr) ::munmap(address, length);
}

int map_readonly(int fd, std::uint64_t offset, std::size_t length, mapping& out) noexcept {
  const long page = ::sysconf(_SC_PAGESIZE);
  const std::uint64_t page_size = page > 0 ? static_cast<std::uint64_t>(page) : 4096;
  const std::uint64_t map_offset = offset - offset % page_size;
  const auto delta = static_cast<std::size_t>(offset - map_offset);
  const std::size_t map_length = delta + length;
  void* address = ::mmap(nullptr, map_length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(map_offset));
  if (address == MAP_FAILED) return -errno;
  mapping mapped;
  mapped.address_ = address;
  mapped.length_ = map_length;
  mapped.data_ = static_cast<const unsigned char*>(address) + delta;
  out = std::move(mapped);
  return 0;
}

} // namespace npyguard::platform
