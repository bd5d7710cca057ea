// npyguard: the data of a validated RawArray (.ra) file, read or mapped from
// the very descriptor that was validated, as for .npy (npy/data.hpp).
//
// Element order. RawArray is column-major: dims[0] varies fastest. The
// element at indices (i0, i1, ..., i(n-1)), each ik < dims[k], is element
//   i0 + dims[0] * (i1 + dims[1] * (i2 + ... + dims[n-2] * i(n-1)))
// of view<T>() (and at that index times elbyte in bytes()). That is numpy's
// shape = dims with order='F', or shape = reversed(dims) in C order.
// The metadata after the data is never part of the view.
#ifndef NPYGUARD_RA_DATA_HPP
#define NPYGUARD_RA_DATA_HPP

#include "npyguard/export.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

#include "npyguard/data_view.hpp"
#include "npyguard/error.hpp"
#include "npyguard/options.hpp"
#include "npyguard/ra/model.hpp"

namespace npyguard::ra {
namespace detail {
struct data_view_access; // src/ra/data.cpp builds array_data objects through it

// Whether view<T>() may show elements of `eltype` and `elbyte` as a T of
// `category` and `size` bytes: bool is type 5 of 1 byte (RawArray.jl's Bool),
// integers types 1 and 2, float and double type 3, complex type 4.
constexpr bool type_matches(npyguard::detail::scalar_category category, std::size_t size, element_type eltype,
                            std::uint64_t elbyte) noexcept {
  if (elbyte != size) return false;
  switch (category) {
    case npyguard::detail::scalar_category::boolean: return eltype == element_type::extension;
    case npyguard::detail::scalar_category::signed_integer: return eltype == element_type::signed_integer;
    case npyguard::detail::scalar_category::unsigned_integer: return eltype == element_type::unsigned_integer;
    case npyguard::detail::scalar_category::floating: return eltype == element_type::floating;
    case npyguard::detail::scalar_category::complex_floating: break;
  }
  return eltype == element_type::complex_floating;
}
} // namespace detail

// The data of one validated regular .ra file: exactly its data_length bytes
// at data_offset, never the metadata. Move-only; owns the open descriptor and
// the mapping or buffer. A default-constructed (or moved-from) array_data
// holds nothing: size() 0, bytes() nullptr, every view refused.
//
// The guarantees are those of the .npy view (npy/data.hpp): one open() for
// the validation and the data; fstat again after mapping or reading (a file
// cut into its data is truncated_data, one grown past the data while
// ra_reject_metadata is on is trailing_data, any other change of size,
// identity or modification time is io_error); SIGBUS if another process
// truncates a mapped file (use data_access::read or read_array to avoid it).
class NPYGUARD_API array_data {
public:
  array_data() noexcept;
  ~array_data();
  array_data(array_data&& other) noexcept;
  array_data& operator=(array_data&& other) noexcept;
  array_data(const array_data&) = delete;
  array_data& operator=(const array_data&) = delete;

  // Opens `path` once (as npyguard::array_data::open), requires a regular
  // file (anything else: io_error before any byte is read), validates it
  // with `opts` (ra::validate_source on the descriptor), then maps or reads
  // exactly [data_offset, data_offset + data_length). Returns the validation
  // result or the error that stopped the view; `out` is replaced only on
  // success.
  [[nodiscard]] static result open(const char* path, array_data& out, const options& opts = {},
                                   data_access access = data_access::map) noexcept;

  // The same view over a whole .ra file the caller holds in memory: validates
  // [data, data + size) like ra::validate_buffer, then views its data range
  // in place (data_access::borrowed; nothing copied; the memory must outlive
  // `out`). `out` is replaced only on success.
  [[nodiscard]] static result over(const void* data, std::size_t size, array_data& out,
                                   const options& opts = {}) noexcept;

  // The validated header (a default header when nothing is open).
  [[nodiscard]] const header& model() const noexcept { return model_; }
  // Exactly size() data bytes in the file's byte order; a non-null pointer
  // to no bytes when data_length is 0; nullptr when nothing is open. The data
  // offset 48 + 8 * ndims is a multiple of 8, so mapped and borrowed bytes
  // are 8-aligned when the mapping or the caller's memory is.
  [[nodiscard]] const unsigned char* bytes() const noexcept { return range_.data(); }
  // data_length of the model (0 when nothing is open).
  [[nodiscard]] std::uint64_t size() const noexcept { return range_.size(); }
  [[nodiscard]] data_access access() const noexcept { return range_.access(); }

  // A typed view (count = model().count elements, in file order: see the
  // element order above) only when the element type and size match T
  // (bool: type 5 of 1 byte, whose every byte must then be 0 or 1, checked
  // in one pass per call; std::int8_t ... std::uint64_t: types 1 and 2 of
  // the same size and signedness; float and double: type 3 of 4 and 8
  // bytes; std::complex<float> and <double>: type 4 of 8 and 16 bytes), the
  // elements are in the machine's byte order (the big-endian flag, or an
  // elbyte of 1) and bytes() is aligned for alignof(T). Otherwise {nullptr, 0}.
  // User types (0), bfloat16, float16 and 16-byte integers have no view; use
  // bytes() or copy_native().
  template <typename T>
  [[nodiscard]] typed_view<T> view() const noexcept {
    using traits = npyguard::detail::view_traits<T>;
    static_assert(traits::supported,
                  "view<T>: T must be bool, an integer of 1, 2, 4 or 8 bytes, float, double, "
                  "std::complex<float> or std::complex<double>");
    if (!detail::type_matches(traits::category, sizeof(T), model_.eltype, model_.elbyte)) return {};
    const void* typed = typed_data(alignof(T), traits::category == npyguard::detail::scalar_category::boolean);
    if (typed == nullptr) return {};
    return {static_cast<const T*>(typed), model_.count};
  }

  // Copies the data into `destination` in the machine's byte order: when the
  // big-endian flag is not the machine's order, every element of types 1 to
  // 5 of more than one byte is reversed (complex: each half). A user type (0)
  // of more than one byte has no known inner layout: in the other byte order
  // it is refused with not_convertible at the flags field (offset 8) and
  // nothing is written; in the machine's order it is copied as it is.
  // destination_size must be at least size(): otherwise buffer_too_small (no
  // offset) and nothing is written. Nothing open: nullopt.
  [[nodiscard]] std::optional<error> copy_native(void* destination, std::size_t destination_size) const noexcept;

  // fstat of the kept descriptor against what validation saw
  // (npyguard::array_data::verify_unchanged); over(): nullopt.
  [[nodiscard]] std::optional<error> verify_unchanged() const noexcept { return range_.verify_unchanged(); }

private:
  friend struct detail::data_view_access;

  [[nodiscard]] const void* typed_data(std::size_t alignment, bool boolean) const noexcept;

  header model_{};
  data_range range_;
};

// Opens `path` once, validates it like array_data::open (regular files only)
// and reads exactly data_length bytes of data into `buffer` (at least that
// large, else buffer_too_small before any data byte is read), then puts it
// in the machine's byte order when `order` is data_order::native (as
// copy_native, with its refusal of foreign-order user types, checked before
// any data byte is read). A file that shrinks after validation is
// truncated_data where the data ended. Returns the validation result; on any
// error the buffer's contents are unspecified.
[[nodiscard]] NPYGUARD_API result read_array(const char* path, void* buffer, std::size_t buffer_size,
                                             const options& opts = {},
                                             data_order order = data_order::as_stored) noexcept;

} // namespace npyguard::ra

#endif
