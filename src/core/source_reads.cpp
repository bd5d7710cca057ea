#include "core/source_reads.hpp"

#include <algorithm>
#include <memory>

namespace npyguard::detail {

std::ptrdiff_t count_until(byte_source& source, std::uint64_t& total, std::uint64_t enough, bool& ended) {
  constexpr std::size_t chunk = std::size_t{64} * 1024;
  ended = false;
  if (total >= enough) return 0;
  const auto drain = std::make_unique<unsigned char[]>(chunk);
  while (total < enough) {
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, enough - total));
    const std::ptrdiff_t n = checked_count(source.read(drain.get(), wanted), wanted);
    if (n < 0) return n;
    if (n == 0) {
      ended = true;
      return 0;
    }
    total += static_cast<std::uint64_t>(n);
  }
  return 0;
}

} // namespace npyguard::detail
