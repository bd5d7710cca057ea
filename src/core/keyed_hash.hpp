// A keyed hash for tables that hostile input fills: SipHash-1-3 with a key
// drawn once per process, so names cannot be chosen offline to collide.
#ifndef NPYGUARD_SRC_KEYED_HASH_HPP
#define NPYGUARD_SRC_KEYED_HASH_HPP

#include <cstdint>
#include <string_view>

namespace npyguard::detail {

// SipHash-1-3 (Aumasson and Bernstein; the variant Rust's HashMap uses) of
// `text` under the process's key.
[[nodiscard]] std::uint64_t keyed_hash(std::string_view text) noexcept;

} // namespace npyguard::detail

#endif
