// Checked arithmetic and numpy's array-size rule, against 128-bit arithmetic.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "core/checked_math.hpp"

using npyguard::detail::checked_add;
using npyguard::detail::checked_mul;
using npyguard::detail::compute_array_size;
using npyguard::detail::max_signed_size;

namespace {

__extension__ typedef unsigned __int128 uint128; // GCC/Clang extension, fine in a test

// The reference: exact 128-bit products, numpy's rule written out plainly.
bool reference_fits(const std::vector<std::uint64_t>& dims, std::uint64_t itemsize) {
  uint128 count = 1;
  uint128 bytes = itemsize;
  for (std::uint64_t dim : dims) {
    if (dim == 0) continue;
    count *= dim;
    bytes *= dim;
    if (count > max_signed_size || bytes > max_signed_size) return false;
  }
  return true;
}

} // namespace

TEST_CASE("checked_mul and checked_add", "[size]") {
  CHECK(checked_mul(0, UINT64_MAX) == std::uint64_t{0});
  CHECK(checked_mul(3, 5) == std::uint64_t{15});
  CHECK(checked_mul(std::uint64_t{1} << 31, std::uint64_t{1} << 31) == std::uint64_t{1} << 62);
  CHECK_FALSE(checked_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32));
  CHECK_FALSE(checked_mul(std::uint64_t{1} << 62, 2)); // 2^63 > 2^63-1
  CHECK(checked_mul(max_signed_size, 1) == max_signed_size);
  CHECK_FALSE(checked_mul(10, 10, 99));
  CHECK(checked_add(max_signed_size - 1, 1) == max_signed_size);
  CHECK_FALSE(checked_add(max_signed_size, 1));
  CHECK_FALSE(checked_add(UINT64_MAX, UINT64_MAX));
}

TEST_CASE("compute_array_size follows numpy's rule", "[size]") {
  std::size_t failing = 99;
  const std::vector<std::uint64_t> empty_huge = {0, std::uint64_t{1} << 62, std::uint64_t{1} << 62};
  CHECK_FALSE(compute_array_size(empty_huge.data(), empty_huge.size(), 1, failing));
  CHECK(failing == 2);
  const std::vector<std::uint64_t> empty_ok = {0, std::uint64_t{1} << 40};
  const auto empty = compute_array_size(empty_ok.data(), empty_ok.size(), 8, failing);
  REQUIRE(empty);
  CHECK(empty->count == 0);
  CHECK(empty->nbytes == 0);
  const auto scalar = compute_array_size(nullptr, 0, 8, failing);
  REQUIRE(scalar);
  CHECK(scalar->count == 1);
  CHECK(scalar->nbytes == 8);
}

TEST_CASE("compute_array_size agrees with 128-bit arithmetic", "[size]") {
  const std::uint64_t values[] = {0,
                                  1,
                                  2,
                                  3,
                                  7,
                                  255,
                                  65536,
                                  1u << 31,
                                  (1ull << 32) - 1,
                                  1ull << 32,
                                  (1ull << 62) - 1,
                                  1ull << 62,
                                  max_signed_size,
                                  UINT64_MAX};
  const std::uint64_t itemsizes[] = {0, 1, 8, 2147483647};
  std::size_t checked = 0;
  for (std::uint64_t a : values) {
    for (std::uint64_t b : values) {
      for (std::uint64_t c : {std::uint64_t{1}, std::uint64_t{0}, std::uint64_t{3}}) {
        for (std::uint64_t itemsize : itemsizes) {
          const std::vector<std::uint64_t> dims = {a, b, c};
          std::size_t failing = 0;
          const auto size = compute_array_size(dims.data(), dims.size(), itemsize, failing);
          INFO(a << " " << b << " " << c << " itemsize " << itemsize);
          REQUIRE(size.has_value() == reference_fits(dims, itemsize));
          if (size) {
            const bool empty = a == 0 || b == 0 || c == 0;
            CHECK(size->count == (empty ? 0 : a * b * c));
            CHECK(size->nbytes == size->count * itemsize);
          }
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 14 * 14 * 3 * 4);
}
