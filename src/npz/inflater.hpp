// zlib's raw inflate (no zlib or gzip wrapper, inflateInit2(-15)) with the
// stream's state owned, and a member's compressed bytes fed from the
// archive in growing chunks. No I/O: reads through an archive_reader.
#ifndef NPYGUARD_SRC_NPZ_INFLATER_HPP
#define NPYGUARD_SRC_NPZ_INFLATER_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include <zlib.h>

#include "npyguard/error.hpp"
#include "npz/entry.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

// One inflater serves every member of an archive in turn: start() resets
// zlib's state and keeps its allocations (the 32 KiB window among them), so
// a thousand small members cost one setup, not a thousand.
class inflater {
public:
  // Throws std::bad_alloc when zlib cannot allocate its state.
  explicit inflater(archive_reader& reader);
  ~inflater();
  inflater(const inflater&) = delete;
  inflater& operator=(const inflater&) = delete;

  // Begins `member`'s stream (which must outlive the use). A member whose
  // compressed bytes fit in 64 KiB is read with what follows it, so one read
  // of the archive serves many small members.
  void start(const entry& member) noexcept;

  enum class status {
    ok,        // `size` bytes written
    ended,     // the stream's final block came first (fewer written; see produced())
    exhausted, // the compressed bytes ran out before the final block
    corrupt,   // zlib reports a data error
  };
  // Inflates up to `size` bytes into `out`. A read error of the archive
  // (io_error) comes back in `failure`. May throw std::bad_alloc.
  status inflate(unsigned char* out, std::size_t size, std::size_t& written, std::optional<error>& failure);

  [[nodiscard]] std::uint64_t produced() const noexcept { return stream_.total_out; }
  [[nodiscard]] std::uint64_t consumed() const noexcept { return fed_ - stream_.avail_in; }
  [[nodiscard]] bool ended() const noexcept { return ended_; }

private:
  archive_reader& reader_;
  const entry* member_ = nullptr;
  z_stream stream_{};
  std::uint64_t fed_ = 0;   // compressed bytes handed to zlib
  std::size_t chunk_ = 512; // the next read's size, doubling up to 64 KiB
  bool ended_ = false;
};

} // namespace npyguard::npz::detail

#endif
