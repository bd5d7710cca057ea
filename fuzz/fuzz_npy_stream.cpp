// The same files as fuzz_npy_file through the unknown-size reader, delivered
// in fuzzer-chosen chunk sizes, and (on request) through a real file
// descriptor: every verdict must equal the memory-buffer verdict exactly,
// model, error code, offset and message; only trailing_data's message may
// differ, because a stream stops reading at the first byte past the data
// and cannot count the rest. The stream must never read more than that.
//
// Input: four configuration bytes, then the file.
//   bytes 0-1: options and limits (fuzz_common.hpp)
//   byte 2:    bits 0-1 the chunk pattern (random up to 4096, single bytes,
//              random up to 16, as much as asked), bits 2-7 seed its sizes
//   byte 3:    bit 0 also validate a memfd through validate_file (pread of a
//              regular file) and validate_fd; bit 1 make the source fail
//              with EIO part way
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "fuzz_common.hpp"

namespace {

using namespace npyguard;

class chunked_source final : public byte_source {
public:
  chunked_source(const std::uint8_t* data, std::size_t size, std::uint8_t pattern, std::size_t fail_at) noexcept
      : data_(data), size_(size), pattern_(pattern & 3u), state_(0x9E3779B9u ^ pattern), fail_at_(fail_at) {}

  [[nodiscard]] std::size_t position() const noexcept { return position_; }

  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    if (position_ >= fail_at_) {
      return -EIO;
    }
    std::size_t n = std::min({size, size_ - position_, next_chunk(), fail_at_ - position_});
    if (size != 0 && n == 0 && position_ < size_) n = 1;
    if (n != 0) std::memcpy(buffer, data_ + position_, n);
    position_ += n;
    return static_cast<std::ptrdiff_t>(n);
  }

private:
  std::size_t next_chunk() noexcept {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    switch (pattern_) {
      case 0: return 1 + state_ % 4096;
      case 1: return 1;
      case 2: return 1 + state_ % 16;
      default: return static_cast<std::size_t>(-1);
    }
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t position_ = 0;
  unsigned pattern_;
  std::uint32_t state_;
  std::size_t fail_at_;
};

// Equal, except that a stream's trailing_data message cannot count the bytes.
bool same_verdict(const result& streamed, const result& expected) {
  if (!streamed.ok() && !expected.ok() && expected.failure().code == error_code::trailing_data) {
    return streamed.failure().code == error_code::trailing_data &&
           streamed.failure().offset == expected.failure().offset;
  }
  return streamed == expected;
}

// validate_file on a regular file (the pread path) and validate_fd on the
// same descriptor (the read path), both compared with the buffer verdict.
void check_descriptor_paths(const std::uint8_t* data, std::size_t size, const options& opts, const result& expected) {
  const int fd = ::memfd_create("npyguard-fuzz", MFD_CLOEXEC);
  if (fd < 0) return; // no memfd: nothing to compare
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    NPYGUARD_FUZZ_CHECK(n > 0);
    written += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  NPYGUARD_FUZZ_CHECK(validate_file(path.c_str(), opts) == expected);
  NPYGUARD_FUZZ_CHECK(::lseek(fd, 0, SEEK_SET) == 0);
  NPYGUARD_FUZZ_CHECK(same_verdict(validate_fd(fd, opts), expected));
  ::close(fd);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input_reader in(data, size);
  const std::uint8_t first = in.byte();
  const options opts = fuzz::decode_options(first, in.byte());
  const std::uint8_t pattern = in.byte();
  const std::uint8_t paths = in.byte();
  const auto file = fuzz::exact_copy(in.data(), in.size());

  const result expected = validate_buffer(file.get(), in.size(), opts);

  chunked_source whole(file.get(), in.size(), pattern, static_cast<std::size_t>(-1));
  const result streamed = validate_stream(whole, opts);
  if (streamed != expected) {
    std::fprintf(stderr, "buffer: %s\nstream: %s\n", expected.ok() ? "ok" : expected.failure().message.c_str(),
                 streamed.ok() ? "ok" : streamed.failure().message.c_str());
  }
  NPYGUARD_FUZZ_CHECK(same_verdict(streamed, expected));
  // Read only until the verdict is certain: at most one byte past the data
  // (the 12-byte preamble read aside), nothing after a pickle's header.
  if (const header* model = expected.value_if(); model != nullptr && !model->data_is_pickle) {
    const std::uint64_t data_end = model->data_offset + model->nbytes;
    NPYGUARD_FUZZ_CHECK(whole.position() <= std::max<std::uint64_t>(data_end + (opts.allow_trailing_data ? 0 : 1), 12));
  }
  if (!expected.ok() && expected.failure().code == error_code::trailing_data) {
    NPYGUARD_FUZZ_CHECK(whole.position() <= std::max<std::uint64_t>(*expected.failure().offset + 1, 12));
  }

  if ((paths & 2u) != 0) {
    // A read error part way: the stream either reports it or had already
    // decided, from bytes it did read, the verdict the whole input gets.
    const std::size_t fail_at = in.size() == 0 ? 0 : (pattern * 257u + paths) % in.size();
    chunked_source failing(file.get(), in.size(), pattern, fail_at);
    const result broken = validate_stream(failing, opts);
    const bool reported =
        !broken.ok() && broken.failure().code == error_code::io_error && !broken.failure().offset.has_value();
    NPYGUARD_FUZZ_CHECK(reported || same_verdict(broken, expected));
  }
  if ((paths & 1u) != 0) check_descriptor_paths(file.get(), in.size(), opts, expected);
  return 0;
}
