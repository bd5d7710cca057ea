#include "platform/file_status.hpp"

#include <sys/stat.h>

#include <cerrno>

namespace npyguard::platform {
namespace {

file_type type_of(mode_t mode) noexcept {
  if (S_ISREG(mode)) return file_type::regular;
  if (S_ISDIR(mode)) return file_type::directory;
  if (S_ISFIFO(mode)) return file_type::fifo;
  if (S_ISCHR(mode)) return file_type::character_device;
  if (S_ISBLK(mode)) return file_type::block_device;
  if (S_ISSOCK(mode)) return file_type::socket;
  if (S_ISLNK(mode)) return file_type::symbolic_link;
  return file_type::other;
}

// `answer` is what the stat call returned.
int status_from(int answer, const struct stat& info, file_status& status) noexcept {
  if (answer != 0) return -errno;
  status.type = type_of(info.st_mode);
  status.size = static_cast<std::uint64_t>(info.st_size);
  status.device = static_cast<std::uint64_t>(info.st_dev);
  status.inode = static_cast<std::uint64_t>(info.st_ino);
  status.mtime_seconds = static_cast<std::int64_t>(info.st_mtim.tv_sec);
  status.mtime_nanoseconds = static_cast<std::int64_t>(info.st_mtim.tv_nsec);
  return 0;
}

} // namespace

int stat_fd(int fd, file_status& status) noexcept {
  struct stat info {};
  const int answer = ::fstat(fd, &info);
  return status_from(answer, info, status);
}

int stat_path(const char* path, file_status& status) noexcept {
  struct stat info {};
  const int answer = ::stat(path, &info);
  return status_from(answer, info, status);
}

int lstat_path(const char* path, file_status& status) noexcept {
  struct stat info {};
  const int answer = ::lstat(path, &info);
  return status_from(answer, info, status);
}

} // namespace npyguard::platform
