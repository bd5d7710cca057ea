// A member's raw deflate stream inflated by deflate_decoder (zlib's raw
// inflate, inflateInit2(-15), to the byte, at a cost per compressed byte
// that does not depend on the block structure), its compressed bytes fed
// from the archive in growing chunks, never more than the output so far
// pays for (SPEC-npz.md section 9, "compressed bytes buy output"). No I/O:
// reads through an archive_reader.
#ifndef NPYGUARD_SRC_NPZ_INFLATER_HPP
#define NPYGUARD_SRC_NPZ_INFLATER_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "npyguard/error.hpp"
#include "npz/deflate_decoder.hpp"
#include "npz/entry.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

// The compressed bytes that `produced` bytes of output pay for:
// 512 + P + floor(P / 16). Checked at every byte of the stream: the first
// k compressed bytes must make at least the output that pays for k.
[[nodiscard]] constexpr std::uint64_t input_allowance(std::uint64_t produced) noexcept {
  return 512 + produced + produced / 16;
}

// One inflater serves every member of an archive in turn: start() resets
// the decoder's state and keeps its allocation (the window and tables), so
// a thousand small members cost one setup, not a thousand.
class inflater {
public:
  // Throws std::bad_alloc when the decoder cannot be allocated.
  explicit inflater(archive_reader& reader);
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
    corrupt,   // not a deflate stream (where zlib reports a data error)
    unbought,  // the stream needs more compressed bytes than its output pays for (input_allowance)
  };
  // Inflates up to `size` bytes into `out`. A read error of the archive
  // (io_error) comes back in `failure`.
  status inflate(unsigned char* out, std::size_t size, std::size_t& written, std::optional<error>& failure);

  [[nodiscard]] std::uint64_t produced() const noexcept { return decoder_->total_out(); }
  [[nodiscard]] std::uint64_t consumed() const noexcept { return fed_ - available_; }
  [[nodiscard]] bool ended() const noexcept { return ended_; }

private:
  // Hands the decoder the next compressed bytes, as many as the chunk size, the
  // member and the allowance permit; none when one of them is spent.
  std::optional<error> feed();
  // Whether the bytes consumed so far are within what the output pays for.
  [[nodiscard]] bool paid_for() const noexcept { return consumed() <= input_allowance(produced()); }

  archive_reader& reader_;
  const entry* member_ = nullptr;
  std::unique_ptr<deflate_decoder> decoder_; // about 90 KB: on the heap, not the caller's stack
  const unsigned char* next_ = nullptr;      // the bytes handed over and not yet consumed
  std::size_t available_ = 0;
  std::uint64_t fed_ = 0;      // compressed bytes handed to the decoder
  std::uint64_t read_end_ = 0; // the end of the last chunk asked of the reader
  std::size_t chunk_ = 512;    // the next read's size, doubling up to 64 KiB
  bool ended_ = false;
};

} // namespace npyguard::npz::detail

#endif
