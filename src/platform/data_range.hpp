// The steps every data view shares (npy/data.cpp, ra/data.cpp): one open()
// of a regular file, a mapping or a read of exactly the validated range, and
// fstat again to see that the file is still the one validated.
#ifndef NPYGUARD_SRC_PLATFORM_DATA_RANGE_HPP
#define NPYGUARD_SRC_PLATFORM_DATA_RANGE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include "npyguard/data_view.hpp"
#include "npyguard/error.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard::detail {

// Where the validated data lies and what may follow it.
struct validated_range {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool bytes_may_follow = false; // .npy: allow_trailing_data; .ra: metadata not refused
};

struct data_range_access {
  // Opens `path` (platform::open_for_reading) and requires a regular file,
  // before any byte is read: io_error otherwise. On failure `fd` is empty.
  static std::optional<error> open_regular(const char* path, platform::unique_fd& fd, platform::file_status& info);

  // Maps or reads `range` of the validated descriptor `fd` (whose fstat at
  // validation was `info`) into `out`, then checks the file again. Always
  // takes ownership of `fd` (closed on failure); `out` is replaced only on
  // success. data_too_large when the range does not fit in this address
  // space, out_of_memory for the buffer, io_error for mmap or pread.
  static std::optional<error> attach(int fd, const platform::file_status& info, const validated_range& range,
                                     data_access access, data_range& out);

  // The range [data, data + length) of the caller's memory, borrowed.
  static void borrow(const unsigned char* data, std::uint64_t length, data_range& out) noexcept;

  // Reads `range` into `buffer`. A short read means the file shrank after
  // validation: truncated_data where the data ended.
  static std::optional<error> read_range(int fd, const validated_range& range, unsigned char* buffer);

  // The file behind `fd` compared with `validated`, as data_range::verify_unchanged.
  static std::optional<error> check_unchanged(int fd, const validated_range& range,
                                              const platform::file_status& validated);

  // buffer_too_small (no offset) when `destination_size` < `length`.
  static std::optional<error> destination_too_small(std::uint64_t length, std::size_t destination_size);
};

} // namespace npyguard::detail

#endif
