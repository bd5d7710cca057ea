// Reading an archive by offset, for the phases that parse it: the whole
// archive in memory (views into it, no copy) or a random_access_source
// (a window buffer refilled on demand). Counts the bytes it reads. No OS
// calls: the source does the I/O.
#ifndef NPYGUARD_SRC_NPZ_READER_HPP
#define NPYGUARD_SRC_NPZ_READER_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "npyguard/error.hpp"
#include "npyguard/io.hpp"

namespace npyguard::npz::detail {

class archive_reader {
public:
  explicit archive_reader(random_access_source& source) noexcept : source_(&source), size_(source.size()) {}
  archive_reader(const unsigned char* data, std::uint64_t size) noexcept : memory_(data), size_(size) {}

  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }
  [[nodiscard]] bool in_memory() const noexcept { return memory_ != nullptr; }
  // options::minimal_reads: callers then ask for no bytes ahead that the
  // verdict may not need (the central directory's are always needed).
  [[nodiscard]] bool minimal_reads() const noexcept { return minimal_reads_; }
  void set_minimal_reads(bool minimal) noexcept { minimal_reads_ = minimal; }

  // Points `out` at `length` bytes at `offset`, valid until the next call.
  // Precondition: offset + length <= size(). `ahead` (at least `length`)
  // asks for more in the same read when the caller will want the bytes that
  // follow (the directory); the window then holds them. An error: the
  // source's read error, or io_error when it answers short (the input shrank).
  // May throw std::bad_alloc (the window holds at most max(ahead, 64 KiB)).
  [[nodiscard]] std::optional<error> view(std::uint64_t offset, std::size_t length, const unsigned char*& out,
                                          std::size_t ahead = 0);

private:
  // Reads `length` bytes at `offset` from the source into the window.
  [[nodiscard]] std::optional<error> fill_window(std::uint64_t offset, std::size_t length);

  random_access_source* source_ = nullptr;
  const unsigned char* memory_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::vector<unsigned char> window_;
  std::uint64_t window_offset_ = 0;
  std::size_t window_length_ = 0;
  bool minimal_reads_ = false;
};

} // namespace npyguard::npz::detail

#endif
