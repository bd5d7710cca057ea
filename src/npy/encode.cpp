// numpy 1.24's np.save header, byte for byte (numpy/lib/format.py):
//   "{'descr': " + repr(descr) + ", 'fortran_order': " + repr(bool) +
//   ", 'shape': " + repr(shape) + ", }", then 21 - len(repr(growth axis))
//   spaces, encoded in latin-1 (1.0, or 2.0 past 65535 bytes) or UTF-8 (3.0),
//   then padlen = 64 - (preamble + len + 1) % 64 spaces (1 to 64) and '\n'.
#include "npy/encode.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/hex.hpp"
#include "core/python_repr.hpp"
#include "core/refused.hpp"
#include "core/utf8.hpp"
#include "npyguard/npy/descr.hpp"

namespace npyguard::detail {
namespace {

constexpr std::size_t growth_axis_max_digits = 21; // GROWTH_AXIS_MAX_DIGITS
constexpr std::size_t array_align = 64;            // ARRAY_ALIGN

std::size_t decimal_digits(std::uint64_t value) noexcept {
  std::size_t digits = 1;
  while (value >= 10) {
    value /= 10;
    ++digits;
  }
  return digits;
}

// UTF-8 text -> latin-1 bytes in place, or false (text unchanged) when a
// character is above U+00FF. The text is valid UTF-8: descr_repr escapes
// anything else.
bool to_latin1(std::string& text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  while (i < text.size() && bytes[i] < 0x80) ++i;
  if (i == text.size()) return true;
  for (std::size_t j = i; j < text.size();) {
    if (bytes[j] < 0x80) {
      ++j;
      continue;
    }
    const utf8_step step = decode_utf8(bytes + j, text.size() - j);
    if (step.length == 0 || step.code_point > 0xFF) return false;
    j += step.length;
  }
  std::size_t out = i;
  for (std::size_t j = i; j < text.size();) {
    if (bytes[j] < 0x80) {
      text[out++] = text[j++];
      continue;
    }
    const utf8_step step = decode_utf8(bytes + j, text.size() - j);
    text[out++] = static_cast<char>(step.code_point);
    j += step.length;
  }
  text.resize(out);
  return true;
}

void append_preamble(std::string& out, unsigned major, std::uint32_t header_length) {
  out.append("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) out.push_back(static_cast<char>((header_length >> (8 * i)) & 0xFF));
}

// A byte for a message: printable ASCII as is, anything else as \xNN.
std::string shown(const unsigned char* bytes, std::size_t size, std::size_t at) {
  if (at >= size) return "the end of the header";
  const unsigned char byte = bytes[at];
  if (byte >= 0x20 && byte < 0x7F && byte != '\'') return std::string("'") + static_cast<char>(byte) + "'";
  std::string out = "'\\x";
  append_hex(out, byte, 2);
  return out + "'";
}

} // namespace

bool written_fortran_order(const std::vector<std::uint64_t>& shape, std::uint64_t itemsize,
                           bool fortran_order) noexcept {
  if (!fortran_order || itemsize == 0) return false;
  std::size_t longer_than_one = 0;
  for (const std::uint64_t extent : shape) {
    if (extent == 0) return false; // an empty array is contiguous both ways
    if (extent > 1) ++longer_than_one;
  }
  return longer_than_one >= 2;
}

bool encode_header_bytes(const dtype& type, const std::vector<std::uint64_t>& shape, bool fortran_order,
                         std::string& out) {
  const bool fortran = written_fortran_order(shape, type.itemsize, fortran_order);
  std::string text = "{'descr': ";
  const std::string descr = descr_repr(type);
  if (descr.empty()) throw std::bad_alloc(); // descr_repr's only empty answer
  text += descr;
  text += fortran ? ", 'fortran_order': True, 'shape': " : ", 'fortran_order': False, 'shape': ";
  const std::string shape_text = shape_repr(shape);
  if (shape_text.empty()) throw std::bad_alloc(); // shape_repr's only empty answer
  text += shape_text;
  text += ", }";
  if (!shape.empty()) {
    const std::size_t digits = decimal_digits(fortran ? shape.back() : shape.front());
    if (digits < growth_axis_max_digits) text.append(growth_axis_max_digits - digits, ' ');
  }

  unsigned major = 3;
  if (to_latin1(text)) major = 1;
  // The text, '\n', and 1 to 64 spaces before it so that the data starts at
  // a multiple of 64.
  const auto padded_length = [&text](unsigned version) {
    const std::uint64_t unpadded = text.size() + 1;
    return unpadded + array_align - (preamble_size(version) + unpadded) % array_align;
  };
  std::uint64_t header_length = padded_length(major);
  if (major == 1 && header_length > 0xFFFF) {
    major = 2;
    header_length = padded_length(major);
  }
  if (header_length > 0xFFFF'FFFFull) return false;

  out.clear();
  out.reserve(preamble_size(major) + static_cast<std::size_t>(header_length));
  append_preamble(out, major, static_cast<std::uint32_t>(header_length));
  out += text;
  out.append(static_cast<std::size_t>(header_length) - text.size() - 1, ' ');
  out.push_back('\n');
  return true;
}

std::optional<error> check_canonical(const header& model, const preamble& framing, const unsigned char* text) {
  std::string expected;
  std::string actual;
  append_preamble(actual, framing.major_version, framing.header_length);
  if (!encode_header_bytes(model.descr, model.shape, model.fortran_order, expected)) {
    expected.clear(); // cannot happen for a header that was read: it fits its own HEADER_LEN
  }
  const auto* want = reinterpret_cast<const unsigned char*>(expected.data());
  const std::size_t total = actual.size() + framing.header_length;
  std::size_t at = 0;
  for (; at < actual.size() && at < expected.size(); ++at) {
    if (static_cast<unsigned char>(actual[at]) != want[at]) break;
  }
  if (at == actual.size()) {
    const std::size_t limit = std::min<std::size_t>(framing.header_length, expected.size() - at);
    const auto* mismatch = std::mismatch(text, text + limit, want + at).first;
    at += static_cast<std::size_t>(mismatch - text);
    if (at == total && total == expected.size()) return std::nullopt;
  }
  std::string got;
  if (at < actual.size()) {
    got = shown(reinterpret_cast<const unsigned char*>(actual.data()), actual.size(), at);
  } else {
    got = shown(text, framing.header_length, at - actual.size());
  }
  std::string message = "not the header np.save writes for this array: byte " + std::to_string(at) + " is " + got +
                        " where np.save writes " + shown(want, expected.size(), at);
  if (at < actual.size() && expected.size() >= actual.size())
    message += " (np.save writes format " + std::to_string(static_cast<int>(want[6])) + ".0, HEADER_LEN " +
               std::to_string(expected.size() - preamble_size(static_cast<unsigned char>(want[6]))) + ")";
  return refused(error{error_code::not_canonical, at, std::move(message)}, "canonical");
}

} // namespace npyguard::detail
