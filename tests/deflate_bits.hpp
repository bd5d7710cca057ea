// Hand-written deflate streams for the decoder's tests and benchmark: a bit
// writer in deflate's bit order and the canonical codes of RFC 1951.
#ifndef NPYGUARD_TESTS_DEFLATE_BITS_HPP
#define NPYGUARD_TESTS_DEFLATE_BITS_HPP

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace npyguard::deflate_bits {

using bytes = std::vector<unsigned char>;

// Deflate's bit order: fields least significant bit first, Huffman codes
// most significant bit first.
class bit_writer {
public:
  bit_writer& put(std::uint32_t value, unsigned width) {
    for (unsigned i = 0; i < width; ++i) bit((value >> i) & 1);
    return *this;
  }
  bit_writer& code(std::uint32_t value, unsigned width) {
    for (unsigned i = width; i-- > 0;) bit((value >> i) & 1);
    return *this;
  }
  bit_writer& align() {
    while (count_ % 8 != 0) bit(0);
    return *this;
  }
  bit_writer& raw(std::initializer_list<unsigned char> values) {
    align();
    for (unsigned char value : values) put(value, 8);
    return *this;
  }
  [[nodiscard]] std::size_t size() const { return out_.size(); }
  [[nodiscard]] bytes done() const { return out_; }
  bytes take() { return std::move(out_); }

private:
  void bit(std::uint32_t value) {
    if (count_ % 8 == 0) out_.push_back(0);
    out_.back() = static_cast<unsigned char>(out_.back() | value << (count_ % 8));
    ++count_;
  }
  bytes out_;
  std::size_t count_ = 0;
};

// Canonical codes (RFC 1951 section 3.2.2) for a list of code lengths.
inline std::vector<std::uint32_t> canonical(const std::vector<unsigned>& lengths) {
  std::vector<unsigned> counts(16, 0);
  for (unsigned length : lengths) ++counts[length];
  counts[0] = 0;
  std::vector<std::uint32_t> next(16, 0);
  std::uint32_t code = 0;
  for (unsigned length = 1; length < 16; ++length) {
    code = (code + counts[length - 1]) << 1;
    next[length] = code;
  }
  std::vector<std::uint32_t> codes;
  for (unsigned length : lengths) codes.push_back(length != 0 ? next[length]++ : 0);
  return codes;
}

} // namespace npyguard::deflate_bits

#endif
