// What fstat, stat and lstat say, in the few fields the library uses, so
// that no caller outside platform needs <sys/stat.h>.
#ifndef NPYGUARD_SRC_PLATFORM_FILE_STATUS_HPP
#define NPYGUARD_SRC_PLATFORM_FILE_STATUS_HPP

#include <cstdint>

namespace npyguard::platform {

enum class file_type : std::uint8_t {
  regular,
  directory,
  fifo,
  character_device,
  block_device,
  socket,
  symbolic_link, // only from lstat_path
  other,
};

struct file_status {
  file_type type = file_type::other;
  std::uint64_t size = 0; // st_size
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t mtime_seconds = 0;
  std::int64_t mtime_nanoseconds = 0;

  [[nodiscard]] bool is_regular() const noexcept { return type == file_type::regular; }
  [[nodiscard]] bool is_directory() const noexcept { return type == file_type::directory; }
  // The same file (device and inode), whatever its name.
  [[nodiscard]] bool same_file(const file_status& other) const noexcept {
    return device == other.device && inode == other.inode;
  }
};

// fstat, stat (follows a final symbolic link) and lstat (does not): 0, or
// minus an errno value with `status` untouched.
[[nodiscard]] int stat_fd(int fd, file_status& status) noexcept;
[[nodiscard]] int stat_path(const char* path, file_status& status) noexcept;
[[nodiscard]] int lstat_path(const char* path, file_status& status) noexcept;

} // namespace npyguard::platform

#endif
