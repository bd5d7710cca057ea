#include "npz/inflater.hpp"

#include <algorithm>
#include <new>

namespace npyguard::npz::detail {

namespace {
constexpr std::size_t max_chunk = std::size_t{64} * 1024;
// One zlib call's output, within uInt (the caller's buffer sets the size).
constexpr std::size_t max_call_output = std::size_t{1} << 30;
} // namespace

inflater::inflater(archive_reader& reader) : reader_(reader) {
  if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
}

void inflater::start(const entry& member) noexcept {
  inflateReset(&stream_); // cannot fail on a stream inflateInit2 set up
  stream_.next_in = nullptr;
  stream_.avail_in = 0;
  member_ = &member;
  fed_ = 0;
  read_end_ = 0;
  chunk_ = 512;
  ended_ = false;
}

inflater::~inflater() { inflateEnd(&stream_); }

// One byte past the allowance is handed over: if it makes output (a stored
// block's data byte), the rule holds at every byte of the stream; if zlib
// needs input with that byte spent and no more output, it does not.
std::optional<error> inflater::feed() {
  const std::uint64_t limit = input_allowance(produced()) + 1;
  if (fed_ == member_->compressed.value || fed_ >= limit) return std::nullopt;
  // Reads go by chunks whatever the allowance hands over, so that a stream
  // kept at its allowance costs no read per byte.
  if (fed_ == read_end_) {
    read_end_ += std::min<std::uint64_t>(chunk_, member_->compressed.value - fed_);
    chunk_ = std::min(chunk_ * 2, max_chunk);
  }
  const auto read = static_cast<std::size_t>(read_end_ - fed_);
  const auto handed = static_cast<std::size_t>(std::min<std::uint64_t>(read, limit - fed_));
  const std::size_t ahead = member_->compressed.value <= max_chunk && !reader_.minimal_reads() ? max_chunk : read;
  const unsigned char* in = nullptr;
  if (auto failure = reader_.view(member_->data_start + fed_, handed, in, ahead)) return failure;
  stream_.next_in = const_cast<Bytef*>(in); // zlib's API is not const; it only reads
  stream_.avail_in = static_cast<uInt>(handed);
  fed_ += handed;
  return std::nullopt;
}

inflater::status inflater::inflate(unsigned char* out, std::size_t size, std::size_t& written,
                                   std::optional<error>& failure) {
  written = 0;
  if (ended_) return status::ended;
  while (written < size) {
    if (stream_.avail_in == 0 && (failure = feed())) return status::exhausted;
    // Called even without input: zlib may hold bits that still make output
    // (a call that filled the output buffer can have consumed the last
    // input bytes with their symbols not yet written).
    const std::size_t want = std::min(size - written, max_call_output);
    stream_.next_out = out + written;
    stream_.avail_out = static_cast<uInt>(want);
    const int code = ::inflate(&stream_, Z_NO_FLUSH);
    written += want - stream_.avail_out;
    if (code == Z_STREAM_END) {
      ended_ = true;
      if (!paid_for()) return status::unbought;
      return written == size ? status::ok : status::ended;
    }
    if (code == Z_MEM_ERROR) throw std::bad_alloc();
    if (code == Z_DATA_ERROR || code == Z_NEED_DICT || code == Z_STREAM_ERROR) return status::corrupt;
    // Z_OK or Z_BUF_ERROR with output room left: zlib needs input, and has
    // made all the output its input gives. The bytes it has then must be
    // paid for; and without more bytes the stream ends before its final block.
    // (feed() hands nothing only past the allowance or at the member's end,
    // so the loop always ends or makes progress.)
    if (stream_.avail_out != 0 && stream_.avail_in == 0) {
      if (!paid_for()) return status::unbought;
      if (fed_ == member_->compressed.value) return status::exhausted;
    }
  }
  return status::ok;
}

} // namespace npyguard::npz::detail
