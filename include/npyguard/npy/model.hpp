// npyguard: the validated header model.
#ifndef NPYGUARD_NPY_MODEL_HPP
#define NPYGUARD_NPY_MODEL_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace npyguard {

enum class dtype_kind : std::uint8_t {
  boolean,          // b
  signed_integer,   // i
  unsigned_integer, // u
  floating,         // f
  complex_floating, // c
  bytes,            // S
  unicode,          // U (UCS-4)
  raw_void,         // V
  datetime,         // M
  timedelta,        // m
  object,           // O (pickled Python objects)
  structured,       // a list of fields
};

enum class byte_order : std::uint8_t {
  little,         // '<'
  big,            // '>'
  not_applicable, // '|'
};

// Datetime and timedelta units (numpy's spelling in time_unit_name).
enum class time_unit : std::uint8_t {
  generic, // "<M8" without a unit
  years,
  months,
  weeks,
  days,
  hours,
  minutes,
  seconds,
  milliseconds,
  microseconds,
  nanoseconds,
  picoseconds,
  femtoseconds,
  attoseconds,
};

struct field;

struct dtype {
  dtype_kind kind = dtype_kind::raw_void;
  byte_order order = byte_order::not_applicable;
  std::uint64_t itemsize = 0;
  // Datetime and timedelta only: the unit and its multiplier (1 unless
  // written, as in "[10ms]").
  time_unit datetime_unit = time_unit::generic;
  std::uint32_t datetime_multiplier = 1;
  // Structured only: the named fields in order. Padding is not a field; it
  // shows as gaps between offsets and between the last field and itemsize.
  std::vector<field> fields;
};

struct field {
  std::string name;                          // UTF-8 in every format version
  std::optional<std::string> title;          // UTF-8
  std::uint64_t offset = 0;                  // from the start of the enclosing struct
  std::vector<std::uint64_t> subarray_shape; // empty: not a subarray
  dtype type;                                // the element type
  std::uint64_t itemsize = 0;                // type.itemsize times the subarray count
};

struct header {
  std::uint8_t major_version = 1;
  std::uint8_t minor_version = 0;
  std::uint32_t header_length = 0;  // the HEADER_LEN field
  std::uint64_t data_offset = 0;    // preamble + HEADER_LEN
  std::uint64_t data_alignment = 0; // largest power of two dividing data_offset
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
  std::uint64_t count = 0;  // product of shape (1 for a scalar)
  std::uint64_t nbytes = 0; // count * descr.itemsize
  dtype descr;
  // True when the descr holds an 'O' (only with allow_object): the data is a
  // pickle of unknown length, nbytes does not describe it and the data-size
  // checks were skipped.
  bool data_is_pickle = false;
};

// Member-wise equality (the fuzz targets compare the models different entry
// points build from the same bytes).
inline bool operator==(const dtype& a, const dtype& b) noexcept;

inline bool operator==(const field& a, const field& b) noexcept {
  return a.name == b.name && a.title == b.title && a.offset == b.offset && a.subarray_shape == b.subarray_shape &&
         a.itemsize == b.itemsize && a.type == b.type;
}

inline bool operator==(const dtype& a, const dtype& b) noexcept {
  return a.kind == b.kind && a.order == b.order && a.itemsize == b.itemsize && a.datetime_unit == b.datetime_unit &&
         a.datetime_multiplier == b.datetime_multiplier && a.fields == b.fields;
}

inline bool operator==(const header& a, const header& b) noexcept {
  return a.major_version == b.major_version && a.minor_version == b.minor_version &&
         a.header_length == b.header_length && a.data_offset == b.data_offset && a.data_alignment == b.data_alignment &&
         a.fortran_order == b.fortran_order && a.shape == b.shape && a.count == b.count && a.nbytes == b.nbytes &&
         a.descr == b.descr && a.data_is_pickle == b.data_is_pickle;
}

inline bool operator!=(const field& a, const field& b) noexcept { return !(a == b); }
inline bool operator!=(const dtype& a, const dtype& b) noexcept { return !(a == b); }
inline bool operator!=(const header& a, const header& b) noexcept { return !(a == b); }

} // namespace npyguard

#endif
