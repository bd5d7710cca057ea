#include "core/checked_math.hpp"

namespace npyguard::detail {

std::optional<array_size> compute_array_size(const std::uint64_t* dims, std::size_t ndim, std::uint64_t itemsize,
                                             std::size_t& failing_index) noexcept {
  std::uint64_t nonzero_count = 1;
  std::uint64_t nonzero_bytes = itemsize;
  bool empty = false;
  for (std::size_t i = 0; i < ndim; ++i) {
    if (dims[i] == 0) {
      empty = true;
      continue;
    }
    auto count = checked_mul(nonzero_count, dims[i]);
    auto bytes = checked_mul(nonzero_bytes, dims[i]);
    if (!count || !bytes) {
      failing_index = i;
      return std::nullopt;
    }
    nonzero_count = *count;
    nonzero_bytes = *bytes;
  }
  if (empty) return array_size{0, 0};
  return array_size{nonzero_count, nonzero_bytes};
}

} // namespace npyguard::detail
