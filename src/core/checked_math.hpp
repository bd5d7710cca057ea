// Checked 64-bit arithmetic (SPEC.md section 4). Every operation reports
// overflow instead of wrapping; nothing in npyguard multiplies sizes any
// other way.
#ifndef NPYGUARD_SRC_SIZE_MATH_HPP
#define NPYGUARD_SRC_SIZE_MATH_HPP

#include <cstdint>
#include <optional>

namespace npyguard::detail {

inline constexpr std::uint64_t max_signed_size = 0x7FFF'FFFF'FFFF'FFFFull; // 2^63-1
inline constexpr std::uint64_t max_itemsize = 0x7FFF'FFFFull;              // 2^31-1

// a * b, or empty when the exact product exceeds `limit`.
[[nodiscard]] constexpr std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b,
                                                                 std::uint64_t limit = max_signed_size) noexcept {
  std::uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > limit) return std::nullopt;
  return product;
}

// a + b, or empty when the exact sum exceeds `limit`.
[[nodiscard]] constexpr std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b,
                                                                 std::uint64_t limit = max_signed_size) noexcept {
  std::uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum) || sum > limit) return std::nullopt;
  return sum;
}

struct array_size {
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;
};

// numpy's rule for an array of `ndim` dimensions: the product of the
// non-zero dimensions times the itemsize stays <= 2^63-1 even when a zero
// dimension makes the array empty ("array is too big"). npyguard also keeps
// the element count itself <= 2^63-1 (it matters for itemsize 0).
// Returns empty on overflow; `failing_index` names the dimension that overflowed.
[[nodiscard]] std::optional<array_size> compute_array_size(const std::uint64_t* dims, std::size_t ndim,
                                                           std::uint64_t itemsize, std::size_t& failing_index) noexcept;

} // namespace npyguard::detail

#endif
