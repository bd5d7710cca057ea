#include "npz/names.hpp"

#include <cstdlib>
#include <memory>
#include <new>
#include <string_view>

#include <utf8proc.h>

#include "core/hex.hpp"
#include "core/utf8.hpp"

namespace npyguard::npz::detail {

namespace {

constexpr std::size_t max_combining_marks = 30;

constexpr std::uint16_t cp437_high[128] = {
#include "npz/cp437.inc"
};

// A code point that reads differently to a person than to the parser, or
// that zipfile's NUL cut would hide behind (SPEC-npz.md section 6).
[[nodiscard]] bool forbidden_character(std::uint32_t c) noexcept {
  if (c <= 0x1F || (c >= 0x7F && c <= 0x9F) || c == '\\') return true;
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// The character as Python's repr escapes it: \x7f, \u202e, \U0001f600.
[[nodiscard]] std::string code_point_text(std::uint32_t c) {
  std::string text = c < 0x100 ? "\\x" : c < 0x10000 ? "\\u" : "\\U";
  npyguard::detail::append_hex(text, c, c < 0x100 ? 2 : c < 0x10000 ? 4 : 8);
  return text;
}

error name_error(std::uint64_t at, std::string why) {
  return error{error_code::bad_member_name, at, "the name " + std::move(why)};
}

// Without flag bit 11 the bytes are CP437 to numpy, but a lenient UTF-8
// reader would take an overlong form for '.' or '/'.
[[nodiscard]] std::optional<std::size_t> overlong_lead(const unsigned char* raw, std::size_t length) noexcept {
  for (std::size_t i = 0; i < length; ++i) {
    const unsigned char b = raw[i];
    if (b == 0xC0 || b == 0xC1) return i;
    if (i + 1 < length && ((b == 0xE0 && raw[i + 1] >= 0x80 && raw[i + 1] <= 0x9F) ||
                           (b == 0xF0 && raw[i + 1] >= 0x80 && raw[i + 1] <= 0x8F))) {
      return i;
    }
  }
  return std::nullopt;
}

} // namespace

bool decode_name(const unsigned char* raw, std::size_t length, bool utf8_flag, std::string& decoded) {
  decoded.clear();
  decoded.reserve(length);
  for (std::size_t i = 0; i < length;) {
    const unsigned char b = raw[i];
    if (b < 0x80) {
      decoded.push_back(static_cast<char>(b));
      ++i;
    } else if (!utf8_flag) {
      npyguard::detail::append_utf8(decoded, cp437_high[b - 0x80]);
      ++i;
    } else {
      const auto step = npyguard::detail::decode_utf8(raw + i, length - i);
      if (step.length == 0) return false;
      decoded.append(reinterpret_cast<const char*>(raw + i), step.length);
      i += step.length;
    }
  }
  return true;
}

std::optional<error> check_name(const unsigned char* raw, std::size_t length, bool utf8_flag,
                                const std::string& decoded, std::uint64_t at, std::string& key) {
  const auto* text = reinterpret_cast<const unsigned char*>(decoded.data());
  std::size_t marks = 0; // combining marks in a row
  for (std::size_t i = 0; i < decoded.size();) {
    std::uint32_t c = text[i];
    std::size_t step = 1;
    if (c >= 0x80) {
      const auto decoded_step = npyguard::detail::decode_utf8(text + i, decoded.size() - i);
      c = decoded_step.code_point;
      step = decoded_step.length;
    }
    if (forbidden_character(c)) {
      return name_error(at, c == 0      ? "holds a NUL (zipfile cuts the name there)"
                            : c == '\\' ? "holds a backslash"
                                        : "holds the character " + code_point_text(c) +
                                              " (a control or bidirectional formatting character)");
    }
    // Unicode's stream-safe limit (UAX #15): more marks in a row have no
    // use in a name, and NFC orders a run of them in quadratic time.
    // (No character below U+0300 combines: ASCII names never ask utf8proc.)
    const bool combining = c >= 0x300 && utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class != 0;
    marks = combining ? marks + 1 : 0;
    if (marks > max_combining_marks) {
      return name_error(at, "has more than " + std::to_string(max_combining_marks) +
                                " combining marks in a row (Unicode's stream-safe limit)");
    }
    i += step;
  }
  if (!utf8_flag) {
    if (auto index = overlong_lead(raw, length)) {
      return name_error(at, "holds the bytes of an overlong UTF-8 form at byte " + std::to_string(*index) +
                                " (without flag bit 11 numpy reads CP437, a lenient UTF-8 reader another name)");
    }
  }
  constexpr std::string_view suffix = ".npy";
  const std::string_view name = decoded;
  if (name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
    return error{error_code::not_npy_member, at, "the name does not end in \".npy\" (every member must be an array)"};
  }
  const std::string_view stem = name.substr(0, name.size() - suffix.size());
  if (stem.empty()) return name_error(at, "is \".npy\" alone: its key would be empty");
  if (name.front() == '/') return name_error(at, "is an absolute path");
  if (name.size() >= 2 && name[1] == ':' &&
      ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'))) {
    return name_error(at, "starts with a drive letter");
  }
  // The path rules hold for the key too: numpy's consumers turn keys into
  // paths, and "...npy" is the key "..", "a/.npy" the key "a/".
  for (const std::string_view path : {name, stem}) {
    for (std::size_t begin = 0; begin <= path.size();) {
      std::size_t end = path.find('/', begin);
      if (end == std::string_view::npos) end = path.size();
      const std::string_view component = path.substr(begin, end - begin);
      const char* whose = path.size() == name.size() ? "" : " in its key";
      if (component.empty()) return name_error(at, std::string("has an empty path component") + whose);
      if (component == "." || component == "..") {
        return name_error(at, "has a \"" + std::string(component) + "\" path component" + whose);
      }
      begin = end + 1;
    }
  }
  key.assign(stem);
  return std::nullopt;
}

std::string nfc(const std::string& decoded) {
  bool ascii = true;
  for (const char c : decoded) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return decoded;
  utf8proc_uint8_t* normal = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(decoded.c_str()));
  if (normal == nullptr) throw std::bad_alloc();
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(normal, &std::free);
  return std::string(reinterpret_cast<const char*>(normal));
}

} // namespace npyguard::npz::detail
