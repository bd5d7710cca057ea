// npyguard: which format an input is, from its first bytes (and its name),
// as the command decides it; and a stream whose first bytes were read for
// that and are served again.
#ifndef NPYGUARD_DETECT_HPP
#define NPYGUARD_DETECT_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "npyguard/export.hpp"
#include "npyguard/io.hpp"

namespace npyguard {

enum class file_format : std::uint8_t {
  npy = 1, // validate / validate_* (npyguard/npy/validate.hpp)
  npz = 2, // npz::validate_*
  ra = 3,  // ra::validate_*
};

// How many first bytes detect_format looks at.
inline constexpr std::size_t detect_bytes = 8;

// The format of an input whose first `size` bytes (up to detect_bytes) are
// `head` and whose name (a path, or empty) is `name`, by SPEC.md section 9:
// a name ending in ".npy", ".npz" or ".ra" claims that format, and the input
// is judged by it alone whatever its bytes (a .npy name holding a zip is
// bad_magic: a name is a claim to check, never a hint); otherwise
// "\x93NUMPY" is .npy, "PK\3\4" or "PK\5\6" .npz, "rawarray" RawArray, and
// anything else .npy (whose validator says bad_magic). The suffixes are
// case-sensitive, as -r's.
[[nodiscard]] NPYGUARD_API file_format detect_format(const void* head, std::size_t size,
                                                     std::string_view name = {}) noexcept;

// A stream read through `rest` whose first bytes are read once by peek()
// (to detect the format) and served again before the rest of the stream.
class NPYGUARD_API peeked_source final : public byte_source {
public:
  explicit peeked_source(byte_source& rest) noexcept : rest_(rest) {}

  // Reads up to detect_bytes bytes; an end or a read error met on the way
  // becomes the answer of the read() after those bytes. Call once, first.
  void peek() noexcept;
  [[nodiscard]] const unsigned char* head() const noexcept { return head_; }
  [[nodiscard]] std::size_t head_size() const noexcept { return head_size_; }

  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override;

private:
  byte_source& rest_;
  unsigned char head_[detect_bytes] = {};
  std::size_t head_size_ = 0;
  std::size_t served_ = 0;
  std::ptrdiff_t pending_ = 0;
  bool has_pending_ = false;
};

} // namespace npyguard

#endif
