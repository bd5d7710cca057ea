#include "npz/inflater.hpp"

#include <algorithm>
#include <new>

namespace npyguard::npz::detail {

namespace {
constexpr std::size_t max_chunk = std::size_t{64} * 1024;
}

inflater::inflater(archive_reader& reader) : reader_(reader) {
  if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
}

void inflater::start(const entry& member) noexcept {
  inflateReset(&stream_); // cannot fail on a stream inflateInit2 set up
  stream_.next_in = nullptr;
  stream_.avail_in = 0;
  member_ = &member;
  fed_ = 0;
  chunk_ = 512;
  ended_ = false;
}

inflater::~inflater() { inflateEnd(&stream_); }

inflater::status inflater::inflate(unsigned char* out, std::size_t size, std::size_t& written,
                                   std::optional<error>& failure) {
  written = 0;
  if (ended_) return status::ended;
  while (written < size) {
    const std::uint64_t left = member_->compressed.value - fed_;
    if (stream_.avail_in == 0 && left > 0) {
      const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_, left));
      const std::size_t ahead = member_->compressed.value <= max_chunk && !reader_.minimal_reads() ? max_chunk : chunk;
      const unsigned char* in = nullptr;
      if ((failure = reader_.view(member_->data_start + fed_, chunk, in, ahead))) return status::exhausted;
      stream_.next_in = const_cast<Bytef*>(in); // zlib's API is not const; it only reads
      stream_.avail_in = static_cast<uInt>(chunk);
      fed_ += chunk;
      chunk_ = std::min(chunk_ * 2, max_chunk);
    }
    // Called even when every compressed byte was fed: zlib may hold bits
    // that still make output (a call that filled the output buffer can have
    // consumed the last input bytes with their symbols not yet written).
    const std::size_t want = std::min<std::size_t>(size - written, max_chunk);
    stream_.next_out = out + written;
    stream_.avail_out = static_cast<uInt>(want);
    const int code = ::inflate(&stream_, Z_NO_FLUSH);
    const std::size_t made = want - stream_.avail_out;
    written += made;
    if (code == Z_STREAM_END) {
      ended_ = true;
      return written == size ? status::ok : status::ended;
    }
    if (code == Z_MEM_ERROR) throw std::bad_alloc();
    if (code == Z_DATA_ERROR || code == Z_NEED_DICT || code == Z_STREAM_ERROR) return status::corrupt;
    // Z_OK or Z_BUF_ERROR: without input left and without progress, the
    // stream ends before its final block.
    if (stream_.avail_in == 0 && member_->compressed.value == fed_ && made == 0) return status::exhausted;
  }
  return status::ok;
}

} // namespace npyguard::npz::detail
