// Reading from the caller's sources (npyguard/io.hpp) without trusting
// their answers: shared by every format's pipeline. No I/O of its own.
#ifndef NPYGUARD_SRC_CORE_SOURCE_READS_HPP
#define NPYGUARD_SRC_CORE_SOURCE_READS_HPP

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "npyguard/io.hpp"

namespace npyguard::detail {

// A source's answer to a request for `asked` bytes: a count above it is a
// broken source (-EIO), never trusted as a length.
[[nodiscard]] inline std::ptrdiff_t checked_count(std::ptrdiff_t answer, std::size_t asked) noexcept {
  return answer > 0 && static_cast<std::size_t>(answer) > asked ? -EIO : answer;
}

// Reads until `size` bytes arrived or the input ended: how many, or on a
// read error the source's negative answer (minus an errno value).
[[nodiscard]] inline std::ptrdiff_t read_full(byte_source& source, unsigned char* buffer, std::size_t size) noexcept {
  std::size_t got = 0;
  while (got < size) {
    const std::ptrdiff_t n = checked_count(source.read(buffer + got, size - got), size - got);
    if (n < 0) return n;
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<std::ptrdiff_t>(got);
}

// Reads and drops bytes through a fixed buffer until `total` (what arrived
// so far) reaches `enough` or the input ends (`ended`). Returns 0, or on a
// read error the source's negative answer. May throw std::bad_alloc (the
// 64 KiB buffer, allocated only when there is something to read).
[[nodiscard]] std::ptrdiff_t count_until(byte_source& source, std::uint64_t& total, std::uint64_t enough, bool& ended);

} // namespace npyguard::detail

#endif
