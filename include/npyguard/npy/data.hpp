// npyguard: the data of a validated file, read or mapped from the very
// descriptor that was validated (no second open, no window between the
// verdict and the bytes it describes).
#ifndef NPYGUARD_NPY_DATA_HPP
#define NPYGUARD_NPY_DATA_HPP

#include "npyguard/export.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "npyguard/data_view.hpp"
#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard {

namespace detail {
// The dtype kind a view<T>() element type stands for.
constexpr dtype_kind kind_of(scalar_category category) noexcept {
  switch (category) {
    case scalar_category::boolean: return dtype_kind::boolean;
    case scalar_category::signed_integer: return dtype_kind::signed_integer;
    case scalar_category::unsigned_integer: return dtype_kind::unsigned_integer;
    case scalar_category::floating: return dtype_kind::floating;
    case scalar_category::complex_floating: break;
  }
  return dtype_kind::complex_floating;
}

struct data_view_access; // src/npy/data.cpp builds array_data objects through it
} // namespace detail

// The data of one validated regular file. Move-only; owns the open
// descriptor and the mapping or buffer. A default-constructed (or moved-from)
// array_data holds nothing: size() 0, bytes() nullptr, every view refused.
//
// What is guaranteed, and what is not:
// - The header model and the data range come from one open() of the path:
//   the descriptor that was validated is the one mapped or read.
// - After mapping (or reading), open() checks the file again with fstat:
//   the size must be the one validated, otherwise truncated_data or
//   trailing_data (what validation would now say); the same size with
//   another modification time, or a size change that validation would still
//   accept (allow_trailing_data), is io_error ("the file changed").
// - data_access::map: if another process truncates the file WHILE it is
//   mapped, touching the lost pages raises SIGBUS. That is kernel behaviour
//   with no portable defence. verify_unchanged() detects a change between
//   uses; data_access::read and read_array() avoid the problem entirely.
//   Writes by others into the mapped range are visible through bytes()
//   (npyguard guarantees the extent of the data, not that nobody else
//   writes it); data_access::read gives a private snapshot.
class NPYGUARD_API array_data {
public:
  array_data() noexcept;
  ~array_data();
  array_data(array_data&& other) noexcept;
  array_data& operator=(array_data&& other) noexcept;
  array_data(const array_data&) = delete;
  array_data& operator=(const array_data&) = delete;

  // Opens `path` once (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK: a FIFO
  // path must not block the open, and regular files ignore O_NONBLOCK),
  // requires a regular file (anything else: io_error, before any byte is
  // read), validates it with `opts`, then maps or reads exactly the
  // validated data range [data_offset, data_offset + nbytes).
  // Returns the validation result, or the error that stopped the data view:
  // - object dtypes are refused even with opts.allow_object (object_dtype at
  //   data_offset): the data is a pickle of unknown length, which the view
  //   cannot describe and npyguard never reads;
  // - a file that shrank after validation: truncated_data at the offset where
  //   the data ended, never uninitialised bytes;
  // - I/O failures (open, mmap, pread): io_error.
  // `out` is replaced only on success; on failure it is left as it was.
  [[nodiscard]] static result open(const char* path, array_data& out, const options& opts = {},
                                   data_access access = data_access::map) noexcept;

  // The same view over a whole .npy file the caller holds in memory (an
  // upload that needs no temporary file): validates [data, data + size) like
  // validate_buffer, then views exactly its validated data range, in place.
  // Nothing is copied; the caller's memory must outlive `out` and stay
  // unchanged while it is used. The typed-view checks are those of a file
  // (kind, size, byte order, and the alignment of data + data_offset).
  // Object dtypes are refused as by open(). access() is data_access::borrowed
  // and verify_unchanged() has no file to check (nullopt). `out` is replaced
  // only on success.
  [[nodiscard]] static result over(const void* data, std::size_t size, array_data& out,
                                   const options& opts = {}) noexcept;

  // The validated header (a default header when nothing is open).
  [[nodiscard]] const header& model() const noexcept { return model_; }
  // Exactly size() validated data bytes, in file byte order. For an empty
  // array (nbytes 0) a non-null pointer to no bytes; nullptr when nothing is
  // open. With data_access::read the bytes are aligned for any scalar type;
  // with data_access::map bytes() has the alignment of data_offset (modulo
  // the page size), which a legacy header may leave odd.
  [[nodiscard]] const unsigned char* bytes() const noexcept { return range_.data(); }
  // nbytes of the model (0 when nothing is open).
  [[nodiscard]] std::uint64_t size() const noexcept { return range_.size(); }
  [[nodiscard]] data_access access() const noexcept { return range_.access(); }

  // A typed view only when the dtype is not structured, T's kind and size
  // match the dtype (bool: boolean; signed/unsigned integers of the same
  // size; float/double: floating of 4/8 bytes; std::complex<float/double>:
  // complex_floating of 8/16 bytes), the byte order is the machine's (or
  // irrelevant: '|', or an itemsize of 1) and bytes() is aligned for
  // alignof(T). For bool every byte must also be 0 or 1 (any other byte in a
  // bool object is undefined behaviour in C++), which costs one pass over
  // the data per call. Otherwise {nullptr, 0}. Datetime, timedelta, text and
  // void data are not offered as typed views; use bytes() or copy_native().
  template <typename T>
  [[nodiscard]] typed_view<T> view() const noexcept {
    using traits = detail::view_traits<T>;
    static_assert(traits::supported,
                  "view<T>: T must be bool, an integer of 1, 2, 4 or 8 bytes, float, double, "
                  "std::complex<float> or std::complex<double>");
    const void* typed = typed_data(detail::kind_of(traits::category), sizeof(T), alignof(T));
    if (typed == nullptr) return {};
    return {static_cast<const T*>(typed), model_.count};
  }

  // Copies the data into `destination` in the machine's byte order: every
  // multi-byte scalar is swapped when its byte order is the other one, through
  // structs (by field offsets) and subarrays; S and V bytes untouched; U by
  // 4-byte UCS-4 units; complex numbers as two halves; datetime and
  // timedelta as 8-byte integers; padding bytes copied unchanged.
  // destination_size must be at least size(): otherwise buffer_too_small (no
  // offset; the message names both sizes) and nothing is written. Nothing
  // open: nothing to copy, nullopt. out_of_memory if the swap plan (bounded
  // by the size of the dtype, never by the data) cannot be allocated.
  [[nodiscard]] std::optional<error> copy_native(void* destination, std::size_t destination_size) const noexcept;

  // fstat of the kept descriptor: nullopt when size, st_dev, st_ino and
  // st_mtim are those seen at validation; otherwise truncated_data or
  // trailing_data when the data range itself is cut or no longer the end of
  // the file (as validation would say), io_error for any other change (and
  // when nothing is open). The descriptor follows the file even if the path
  // is renamed or replaced, so st_dev/st_ino cannot change; st_mtim has the
  // file system's timestamp granularity, so two writes that keep the size
  // within one tick may go unseen. A view over the caller's memory (over())
  // has no file: nullopt.
  [[nodiscard]] std::optional<error> verify_unchanged() const noexcept;

private:
  friend struct detail::data_view_access;

  [[nodiscard]] const void* typed_data(dtype_kind kind, std::size_t size, std::size_t alignment) const noexcept;

  header model_{};
  data_range range_;
};

// Opens `path` once, validates it like array_data::open (regular files only,
// object dtypes refused) and reads exactly nbytes of data into `buffer`,
// then converts it to the machine's byte order in place when `order` is
// data_order::native (as copy_native). buffer_size must be at least nbytes, else buffer_too_small
// before any data byte is read. A file that shrinks after validation is
// truncated_data at the offset where the data ended; a size change found by
// the fstat after the read is an error as for array_data::open. Returns the
// validation result; on any error the buffer's contents are unspecified.
[[nodiscard]] NPYGUARD_API result read_array(const char* path, void* buffer, std::size_t buffer_size,
                                             const options& opts = {},
                                             data_order order = data_order::as_stored) noexcept;

} // namespace npyguard

#endif
