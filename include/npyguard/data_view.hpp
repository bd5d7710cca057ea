// npyguard: what the data views of every format share (npy/data.hpp,
// ra/data.hpp): how the bytes are reached, the typed window on them, and the
// validated range of one open file that a view holds.
#ifndef NPYGUARD_DATA_VIEW_HPP
#define NPYGUARD_DATA_VIEW_HPP

#include "npyguard/export.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

#include "npyguard/error.hpp"

namespace npyguard {

enum class data_access : std::uint8_t {
  map,      // mmap of the data range, PROT_READ, MAP_SHARED (see the SIGBUS note)
  read,     // pread into memory owned by the view: a private snapshot
  borrowed, // the caller's memory (array_data::over): nothing is copied or owned
};

// The byte order read_array leaves the data in.
enum class data_order : std::uint8_t {
  as_stored, // the file's bytes as they are
  native,    // each element in this machine's byte order (as copy_native)
};

// A typed window on the data: `count` elements of T, in file order.
// A refused view is {nullptr, 0} and converts to false. An accepted view of
// an empty array has count 0 and a non-null `data` that must not be
// dereferenced, so "the type matches" and "there are elements" stay
// distinct questions: test the view, then the count.
template <typename T>
struct typed_view {
  const T* data = nullptr;
  std::uint64_t count = 0;
  explicit operator bool() const noexcept { return data != nullptr; }
  const T* begin() const noexcept { return data; }
  const T* end() const noexcept { return data + count; }
};

namespace detail {

// What an element type of view<T>() stands for; each format maps it to its
// own type codes (a dtype kind, a RawArray eltype).
enum class scalar_category : std::uint8_t { boolean, signed_integer, unsigned_integer, floating, complex_floating };

template <typename T>
struct scalar_traits {
  static constexpr bool supported = false;
};
template <>
struct scalar_traits<bool> {
  static constexpr bool supported = true;
  static constexpr scalar_category category = scalar_category::boolean;
};
template <>
struct scalar_traits<float> {
  static constexpr bool supported = true;
  static constexpr scalar_category category = scalar_category::floating;
};
template <>
struct scalar_traits<double> {
  static constexpr bool supported = true;
  static constexpr scalar_category category = scalar_category::floating;
};
template <>
struct scalar_traits<std::complex<float>> {
  static constexpr bool supported = true;
  static constexpr scalar_category category = scalar_category::complex_floating;
};
template <>
struct scalar_traits<std::complex<double>> {
  static constexpr bool supported = true;
  static constexpr scalar_category category = scalar_category::complex_floating;
};
// Integers of 1, 2, 4 or 8 bytes (std::int8_t ... std::uint64_t, and long
// long where it is a distinct type). Character types are not integers here:
// plain char has no fixed signedness, and text is not a number.
template <typename T>
inline constexpr bool is_view_integer =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
    !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t> &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
template <typename T>
struct integer_scalar_traits {
  static constexpr bool supported = true;
  static constexpr scalar_category category =
      std::is_signed_v<T> ? scalar_category::signed_integer : scalar_category::unsigned_integer;
};
template <typename T>
using view_traits = std::conditional_t<is_view_integer<T>, integer_scalar_traits<T>, scalar_traits<T>>;

struct data_range_access; // src/platform/data_range.cpp opens, maps, reads and checks

} // namespace detail

// The validated data range of one file (or of the caller's memory), as the
// formats' array_data classes hold it; only they make one. Move-only; owns
// the descriptor and the mapping or the buffer. A default-constructed (or
// moved-from) range holds nothing.
class NPYGUARD_API data_range {
public:
  data_range() noexcept = default;
  ~data_range();
  data_range(data_range&& other) noexcept;
  data_range& operator=(data_range&& other) noexcept;
  data_range(const data_range&) = delete;
  data_range& operator=(const data_range&) = delete;

  // The first data byte: nullptr when nothing is held, a non-null pointer to
  // no bytes for an empty range.
  [[nodiscard]] const unsigned char* data() const noexcept { return state_.data; }
  [[nodiscard]] std::uint64_t size() const noexcept { return state_.size; }
  [[nodiscard]] data_access access() const noexcept { return state_.access; }

  // data() when it is held and aligned for `alignment`, and, for a boolean
  // view, every byte is 0 or 1 (one pass over the data); otherwise nullptr.
  [[nodiscard]] const void* typed(std::size_t alignment, bool boolean) const noexcept;

  // nullopt when the file is the one validated (size, st_dev, st_ino,
  // st_mtim); truncated_data or trailing_data when the data range is cut or
  // no longer ends where the format allows; io_error for any other change
  // and when nothing is held. The caller's memory (borrowed): nullopt.
  [[nodiscard]] std::optional<error> verify_unchanged() const noexcept;

  void reset() noexcept;

private:
  friend struct detail::data_range_access;

  // Trivially copyable, so that a move takes it whole.
  struct state {
    const unsigned char* data = nullptr;
    std::uint64_t size = 0;
    std::uint64_t offset = 0; // of data() in the file
    int fd = -1;
    void* mapping = nullptr;
    std::size_t mapping_length = 0;
    data_access access = data_access::map;
    bool bytes_may_follow = false; // what the format accepts after the data
    // What fstat said at validation (integers: no <sys/stat.h> here).
    std::uint64_t file_size = 0;
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::int64_t mtime_seconds = 0;
    std::int64_t mtime_nanoseconds = 0;
  };

  std::unique_ptr<unsigned char[]> buffer_;
  state state_;
};

} // namespace npyguard

#endif
