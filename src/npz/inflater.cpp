#include "npz/inflater.hpp"

#include <algorithm>

namespace npyguard::npz::detail {

namespace {
constexpr std::size_t max_chunk = std::size_t{64} * 1024;
} // namespace

inflater::inflater(archive_reader& reader) : reader_(reader), decoder_(std::make_unique<deflate_decoder>()) {}

void inflater::start(const entry& member) noexcept {
  decoder_->reset();
  next_ = nullptr;
  available_ = 0;
  member_ = &member;
  fed_ = 0;
  read_end_ = 0;
  chunk_ = 512;
  ended_ = false;
}

// One byte past the allowance is handed over: if it makes output (a stored
// block's data byte), the rule holds at every byte of the stream; if the
// decoder needs input with that byte spent and no more output, it does not.
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
  next_ = in;
  available_ = handed;
  fed_ += handed;
  return std::nullopt;
}

inflater::status inflater::inflate(unsigned char* out, std::size_t size, std::size_t& written,
                                   std::optional<error>& failure) {
  written = 0;
  if (ended_) return status::ended;
  while (written < size) {
    if (available_ == 0 && (failure = feed())) return status::exhausted;
    // Called even without input: the decoder may hold a literal or match
    // that still makes output (a call that filled the output buffer decodes
    // the next one, as zlib does, and may have consumed the last input
    // bytes with it).
    const deflate_decoder::progress step = decoder_->decode(next_, available_, out + written, size - written);
    next_ += step.consumed;
    available_ -= step.consumed;
    written += step.written;
    if (step.result == deflate_decoder::outcome::ended) {
      ended_ = true;
      if (!paid_for()) return status::unbought;
      return written == size ? status::ok : status::ended;
    }
    if (step.result == deflate_decoder::outcome::corrupt) return status::corrupt;
    // Output room left: the decoder needs input, and has made all the
    // output its input gives. The bytes it has then must be paid for; and
    // without more bytes the stream ends before its final block.
    // (feed() hands nothing only past the allowance or at the member's end,
    // so the loop always ends or makes progress.)
    if (written != size && available_ == 0) {
      if (!paid_for()) return status::unbought;
      if (fed_ == member_->compressed.value) return status::exhausted;
    }
  }
  return status::ok;
}

} // namespace npyguard::npz::detail
