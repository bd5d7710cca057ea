#include "ra/header.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/checked_math.hpp"
#include "core/hex.hpp"
#include "core/refused.hpp"

namespace npyguard::ra::detail {
namespace {

using npyguard::detail::max_signed_size;

constexpr std::uint64_t flags_offset = 8;
constexpr std::uint64_t eltype_offset = 16;
constexpr std::uint64_t elbyte_offset = 24;
constexpr std::uint64_t size_offset = 32;
constexpr std::uint64_t ndims_offset = 40;

constexpr std::uint64_t big_endian_flag = 1;

std::string hex_word(std::uint64_t value) {
  std::string out = "0x";
  int digits = 1;
  while (digits < 16 && (value >> (digits * 4)) != 0) ++digits;
  npyguard::detail::append_hex(out, value, digits);
  return out;
}

std::string byte_text(unsigned char byte) {
  std::string out = "0x";
  npyguard::detail::append_hex(out, byte, 2);
  if (byte >= 0x20 && byte < 0x7F) out += std::string(" '") + static_cast<char>(byte) + "'";
  return out;
}

// What the set bits mean to the reference implementations, for the message.
std::string flags_meaning(std::uint64_t flags) {
  std::string out;
  const auto add = [&out](const char* what) { out += out.empty() ? what : std::string("; ") + what; };
  if ((flags & 2) != 0) add("bit 1 is LZ4 compression in the C library and LEB128 encoding in Julia and Rust");
  if ((flags & 4) != 0) add("bit 2 is packed bits in Julia and Rust");
  if ((flags & ~std::uint64_t{7}) != 0) add("bits 3 and above are undefined");
  return out;
}

bool element_size_allowed(std::uint64_t eltype, std::uint64_t elbyte) noexcept {
  switch (eltype) {
    case 0: return elbyte != 0;
    case 1:
    case 2: return elbyte == 1 || elbyte == 2 || elbyte == 4 || elbyte == 8 || elbyte == 16;
    case 3: return elbyte == 2 || elbyte == 4 || elbyte == 8 || elbyte == 16;
    case 4: return elbyte == 4 || elbyte == 8 || elbyte == 16 || elbyte == 32;
    case 5: return elbyte == 1 || elbyte == 2;
    default: return false;
  }
}

const char* allowed_sizes(std::uint64_t eltype) noexcept {
  switch (eltype) {
    case 0: return "any size but 0";
    case 1: return "1, 2, 4, 8 or 16 bytes (signed integers)";
    case 2: return "1, 2, 4, 8 or 16 bytes (unsigned integers)";
    case 3: return "2, 4, 8 or 16 bytes (floats)";
    case 4: return "4, 8, 16 or 32 bytes (complex, a pair of floats)";
    default: return "1 byte (bool) or 2 bytes (bfloat16)";
  }
}

} // namespace

std::uint64_t load_u64(const unsigned char* bytes) noexcept {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

std::uint32_t ndim_limit(const options& opts) noexcept { return std::min(opts.limits.max_ndim, hard_max_ndim); }

std::optional<error> check_fixed_fields(const unsigned char* bytes, std::size_t have, const options& opts) {
  const std::size_t compared = std::min<std::size_t>(have, sizeof magic);
  for (std::size_t i = 0; i < compared; ++i) {
    if (bytes[i] != magic[i]) {
      return error{error_code::bad_magic, i,
                   "not a RawArray file: byte " + std::to_string(i) + " is " + byte_text(bytes[i]) +
                       ", where the magic \"rawarray\" has '" + static_cast<char>(magic[i]) + "'"};
    }
  }
  if (have >= flags_offset + 8) {
    const std::uint64_t flags = load_u64(bytes + flags_offset);
    if ((flags & ~big_endian_flag) != 0) {
      return error{error_code::unsupported_flags, flags_offset,
                   "flags " + hex_word(flags) + ": only bit 0, big-endian data, is accepted: " + flags_meaning(flags) +
                       ", which changes how the data must be read"};
    }
  }
  if (have >= eltype_offset + 8) {
    const std::uint64_t eltype = load_u64(bytes + eltype_offset);
    if (eltype > 5) {
      return error{error_code::unknown_element_type, eltype_offset,
                   "element type " + std::to_string(eltype) +
                       ": RawArray defines 0 (user), 1 (signed integer), 2 (unsigned integer), 3 (float), 4 "
                       "(complex) and 5 (bool or bfloat16)"};
    }
    if (eltype == 5 && !opts.ra_allow_type5) {
      return npyguard::detail::refused(
          error{error_code::unknown_element_type, eltype_offset,
                "element type 5 (RawArray.jl's bool, rawarray-rust's bfloat16) is refused"},
          "ra_allow_type5");
    }
    if (have >= elbyte_offset + 8) {
      const std::uint64_t elbyte = load_u64(bytes + elbyte_offset);
      if (!element_size_allowed(eltype, elbyte)) {
        return error{error_code::bad_element_size, elbyte_offset,
                     "element size " + std::to_string(elbyte) + " for element type " + std::to_string(eltype) +
                         ": allowed are " + allowed_sizes(eltype)};
      }
    }
  }
  if (have >= ndims_offset + 8) {
    const std::uint64_t ndims = load_u64(bytes + ndims_offset);
    const std::uint32_t limit = ndim_limit(opts);
    if (ndims > limit) {
      return npyguard::detail::refused(
          error{error_code::too_many_dimensions, ndims_offset,
                "the header declares " + std::to_string(ndims) + " dimensions, more than " + std::to_string(limit)},
          "max_ndim", limit, ndims);
    }
  }
  return std::nullopt;
}

error truncated_header(std::uint64_t input_size, std::uint64_t header_size) {
  return error{error_code::truncated_header, input_size,
               "the input ends after " + std::to_string(input_size) + " bytes, inside the " +
                   (header_size == fixed_header_size ? std::string("48-byte header")
                                                     : std::to_string(header_size) + "-byte header (48 + 8 * ndims)")};
}

result build_model(const unsigned char* fixed, std::vector<std::uint64_t> dims, const options& opts) {
  header model;
  model.flags = load_u64(fixed + flags_offset);
  model.big_endian = (model.flags & big_endian_flag) != 0;
  model.eltype = static_cast<element_type>(load_u64(fixed + eltype_offset));
  model.elbyte = load_u64(fixed + elbyte_offset);
  model.data_offset = fixed_header_size + 8 * static_cast<std::uint64_t>(dims.size()); // ndims <= 2^20
  const std::uint64_t size_field = load_u64(fixed + size_offset);

  // SPEC-ra.md section 4: the product of the non-zero dims times elbyte fits
  // in 2^63-1 even when a zero dim empties the array.
  if (model.elbyte > max_signed_size) {
    return error{error_code::size_overflow, elbyte_offset,
                 "element size " + std::to_string(model.elbyte) + " is above 2^63-1"};
  }
  std::uint64_t product = model.elbyte;
  std::uint64_t count = 1;
  bool empty = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) {
      empty = true;
      continue;
    }
    const auto next = npyguard::detail::checked_mul(product, dims[i]);
    if (!next) {
      return error{error_code::size_overflow, fixed_header_size + 8 * static_cast<std::uint64_t>(i),
                   "dimension " + std::to_string(i) + " (" + std::to_string(dims[i]) +
                       ") takes the array size in bytes above 2^63-1"};
    }
    product = *next;
    count *= dims[i]; // at most product / elbyte
  }
  const std::uint64_t nbytes = empty ? 0 : product;
  model.count = empty ? 0 : count;
  if (!npyguard::detail::checked_add(model.data_offset, nbytes)) {
    return error{error_code::size_overflow, size_offset,
                 "the data ends above 2^63-1: " + std::to_string(nbytes) + " bytes from offset " +
                     std::to_string(model.data_offset)};
  }
  if (size_field != nbytes) {
    return error{error_code::data_length_mismatch, size_offset,
                 "the data-length field says " + std::to_string(size_field) + " bytes, the dims and element size " +
                     std::to_string(nbytes) + " (" + std::to_string(model.count) + " elements of " +
                     std::to_string(model.elbyte) + " bytes): two readings of one file"};
  }
  if (nbytes > opts.limits.max_data_bytes) {
    return npyguard::detail::refused(
        error{error_code::data_too_large, size_offset,
              "the array data is " + std::to_string(nbytes) + " bytes, above the limit of " +
                  std::to_string(opts.limits.max_data_bytes)},
        "max_data_bytes", opts.limits.max_data_bytes, nbytes);
  }
  model.data_length = nbytes;
  model.dims = std::move(dims);
  return model;
}

namespace {

error truncated_data(std::uint64_t input_size, const header& model) {
  const std::uint64_t got = input_size - std::min(input_size, model.data_offset);
  return error{error_code::truncated_data, input_size,
               "the header implies " + std::to_string(model.data_length) + " data bytes from offset " +
                   std::to_string(model.data_offset) + ", but the input holds only " + std::to_string(got)};
}

error metadata_refused(const header& model, std::optional<std::uint64_t> metadata_length) {
  return npyguard::detail::refused(
      error{error_code::trailing_data, model.data_offset + model.data_length,
            (metadata_length ? std::to_string(*metadata_length) + " bytes" : std::string("bytes")) +
                " of metadata follow the data"},
      "ra_reject_metadata");
}

} // namespace

result check_input_size(result built, std::uint64_t input_size, const options& opts) {
  header* model = built.value_if(); // completed in place: no copy of its dims
  if (model == nullptr) return built;
  const std::uint64_t data_end = model->data_offset + model->data_length; // checked by build_model
  if (input_size < data_end) return truncated_data(input_size, *model);
  if (input_size > data_end && opts.ra_reject_metadata) return metadata_refused(*model, input_size - data_end);
  model->metadata_offset = data_end;
  model->metadata_length = input_size - data_end;
  return built;
}

result check_stream_size(result built, std::uint64_t total, const options& opts) {
  if (!built.ok()) return built;
  const header& model = built.value();
  const std::uint64_t data_end = model.data_offset + model.data_length;
  if (total < data_end) return truncated_data(total, model);
  // Reading stopped one byte past the data: how much metadata follows is unknown.
  if (total > data_end && opts.ra_reject_metadata) return metadata_refused(model, std::nullopt);
  return built;
}

} // namespace npyguard::ra::detail

namespace npyguard::ra {

namespace {
std::string spell_type(element_type eltype, std::uint64_t elbyte) {
  switch (eltype) {
    case element_type::user: return "user" + std::to_string(elbyte);
    case element_type::signed_integer: return "int" + std::to_string(elbyte * 8);
    case element_type::unsigned_integer: return "uint" + std::to_string(elbyte * 8);
    case element_type::floating: return "float" + std::to_string(elbyte * 8);
    case element_type::complex_floating: return "complex" + std::to_string(elbyte * 8);
    case element_type::extension:
      return elbyte == 1 ? "bool" : elbyte == 2 ? "bfloat16" : "extension" + std::to_string(elbyte);
  }
  return "unknown";
}
} // namespace

std::string type_name(element_type eltype, std::uint64_t elbyte) noexcept {
  try {
    return spell_type(eltype, elbyte);
  } catch (...) { // std::bad_alloc: nothing throws across the API
    return std::string();
  }
}

} // namespace npyguard::ra
