#include "npz/names.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>

#include <utf8proc.h>

#include "core/hex.hpp"
#include "core/keyed_hash.hpp"
#include "core/utf8.hpp"

namespace npyguard::npz::detail {

namespace {

// UAX #15's stream-safe limit on non-starters in a row.
constexpr std::size_t max_non_starters = 30;
// Longest full decomposition in Unicode 15: 18 code points (U+FDFA, compatibility).
constexpr utf8proc_ssize_t decomposition_room = 32;

constexpr std::string_view npy_suffix = ".npy";

constexpr std::uint16_t cp437_high[128] = {
#include "npz/cp437.inc"
};

// The code point at text[i] of a name that decoded as UTF-8; advances i.
[[nodiscard]] std::uint32_t next_code_point(std::string_view text, std::size_t& i) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  if (bytes[i] < 0x80) return bytes[i++];
  const auto step = npyguard::detail::decode_utf8(bytes + i, text.size() - i);
  i += step.length == 0 ? 1 : step.length; // never 0: the name decoded
  return step.code_point;
}

[[nodiscard]] bool is_ascii(std::string_view text) noexcept {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// A code point that reads differently to a person than to the parser, or
// that zipfile's NUL cut would hide behind (SPEC-npz.md section 6).
[[nodiscard]] bool forbidden_character(std::uint32_t c) noexcept {
  if (c <= 0x1F || (c >= 0x7F && c <= 0x9F) || c == '\\') return true;
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// Format and separator characters (Cf, Zl, Zp): invisible in a listing, so
// two names that look the same could differ. None is ASCII.
[[nodiscard]] bool invisible_character(std::uint32_t c) noexcept {
  if (c < 0x80) return false;
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category == UTF8PROC_CATEGORY_CF || category == UTF8PROC_CATEGORY_ZL || category == UTF8PROC_CATEGORY_ZP;
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

std::string forbidden_text(std::uint32_t c) {
  return c == 0 ? "holds a NUL (zipfile cuts the name there)"
         : c == '\\'
             ? "holds a backslash"
             : "holds the character " + code_point_text(c) + " (a control or bidirectional formatting character)";
}

// The character rules in the table's order: forbidden characters, then
// invisible ones (none is ASCII).
std::optional<std::string> character_problem(std::string_view name, bool ascii) {
  if (ascii) {
    for (const char c : name) {
      if (forbidden_character(static_cast<unsigned char>(c))) return forbidden_text(static_cast<unsigned char>(c));
    }
    return std::nullopt;
  }
  for (std::size_t i = 0; i < name.size();) {
    const std::uint32_t c = next_code_point(name, i);
    if (forbidden_character(c)) return forbidden_text(c);
  }
  for (std::size_t i = 0; i < name.size();) {
    const std::uint32_t c = next_code_point(name, i);
    if (invisible_character(c)) {
      return "holds the character " + code_point_text(c) + " (a format or separator character, invisible in a listing)";
    }
  }
  return std::nullopt;
}

// True when the name's canonical decomposition (with `compatibility`, its
// compatibility decomposition) holds more than 30 non-starters in a row.
// Counted after decomposition because one character can decompose into
// several (U+0F73 into two); a longer run makes normalisation's reordering
// quadratic. One decomposed character at a time, on the stack.
[[nodiscard]] bool exceeds_stream_safe(std::string_view name, bool compatibility) noexcept {
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (compatibility ? UTF8PROC_COMPAT : 0));
  utf8proc_int32_t parts[decomposition_room];
  std::size_t run = 0;
  for (std::size_t i = 0; i < name.size();) {
    const std::uint32_t c = next_code_point(name, i);
    if (c < 0x80) { // ASCII: starters that decompose to themselves
      run = 0;
      continue;
    }
    int boundary_class = 0; // unused without UTF8PROC_CHARBOUND
    const utf8proc_ssize_t count =
        utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), parts, decomposition_room, options, &boundary_class);
    if (count < 0 || count > decomposition_room) return true; // no such character in Unicode 15: refuse
    for (utf8proc_ssize_t k = 0; k < count; ++k) {
      run = utf8proc_get_property(parts[k])->combining_class != 0 ? run + 1 : 0;
      if (run > max_non_starters) return true;
    }
  }
  return false;
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

// '\\' separates too: the name itself holds none, and in its NFKC form one
// (from U+FF3C) is a separator to a Windows consumer.
[[nodiscard]] bool separator(char c) noexcept { return c == '/' || c == '\\'; }

[[nodiscard]] std::size_t component_count(std::string_view path) noexcept {
  std::size_t count = 1;
  for (const char c : path) count += separator(c) ? 1u : 0u;
  return count;
}

// The first component of `path` that is empty, "." or "..", and the first
// that ends in a space or a dot (Windows drops those: "dir./x.npy" is
// "dir/x.npy" there). One pass.
struct component_scan {
  std::optional<std::string_view> bad;
  std::optional<std::string_view> trailing;
};

[[nodiscard]] component_scan scan_components(std::string_view path) noexcept {
  component_scan scan;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i < path.size() && !separator(path[i])) continue;
    const std::string_view component = path.substr(begin, i - begin);
    const bool dots = component.size() <= 2 && component.find_first_not_of('.') == std::string_view::npos;
    if (dots && !scan.bad) scan.bad = component; // "", "." or ".."
    const char last = component.empty() ? '/' : component.back();
    if ((last == ' ' || last == '.') && !scan.trailing) scan.trailing = component;
    begin = i + 1;
  }
  return scan;
}

// The path rules of section 6 on a name that ends in ".npy" and on its key
// (the name without it): "...npy" is the key "..", "a..npy" the key "a.".
// The key's components are the name's but for the last, so the name is
// scanned once and the key's last component on its own. A phrase for
// "the name ...", or nullopt.
std::optional<std::string> path_problem(std::string_view name) {
  const std::string_view key = name.substr(0, name.size() - npy_suffix.size());
  if (key.empty()) return "is \".npy\" alone: its key would be empty";
  if (separator(name.front())) return "is an absolute path";
  if (name.size() >= 2 && name[1] == ':' &&
      ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'))) {
    return "starts with a drive letter";
  }
  std::size_t last_separator = key.size();
  while (last_separator > 0 && !separator(key[last_separator - 1])) --last_separator;
  const component_scan in_name = scan_components(name);
  const component_scan in_key = scan_components(key.substr(last_separator));
  const auto bad = [](std::string_view component, const char* whose) {
    return component.empty() ? "has an empty path component" + std::string(whose)
                             : "has a \"" + std::string(component) + "\" path component" + whose;
  };
  const auto trailing = [](std::string_view component, const char* whose) {
    return "has a path component ending in " + std::string(component.back() == ' ' ? "a space" : "a dot") + whose +
           " (Windows drops it)";
  };
  if (in_name.bad) return bad(*in_name.bad, "");
  if (in_key.bad) return bad(*in_key.bad, " in its key");
  if (in_name.trailing) return trailing(*in_name.trailing, "");
  if (in_key.trailing) return trailing(*in_key.trailing, " in its key");
  return std::nullopt;
}

// The NFKC form of a name, the fold a consumer (or Windows' best-fit code
// pages) may apply, must not make a separator, a "..", a drive letter or a
// component end that the name does not have. Checked after the name's own
// path rules, on a non-ASCII name only (ASCII is its own NFKC form).
std::optional<std::string> folded_path_problem(std::string_view name) {
  // The canonical run bounds NFC, not NFKC: U+FF9E is a starter whose
  // compatibility decomposition is the non-starter U+3099, so U+FF9E U+0301
  // repeated is one run to NFKC's reordering.
  if (exceeds_stream_safe(name, true)) {
    return "has more than " + std::to_string(max_non_starters) +
           " non-starters in a row in its compatibility decomposition (Unicode's stream-safe limit, for NFKC)";
  }
  utf8proc_uint8_t* normal = utf8proc_NFKC(reinterpret_cast<const utf8proc_uint8_t*>(std::string(name).c_str()));
  if (normal == nullptr) throw std::bad_alloc();
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(normal, &std::free);
  const std::string_view folded(reinterpret_cast<const char*>(normal));
  // NFKC leaves the final ".npy" alone: nothing composes with a '.'.
  if (folded.size() < npy_suffix.size() || folded.substr(folded.size() - npy_suffix.size()) != npy_suffix) {
    return "does not end in \".npy\" in its NFKC form";
  }
  if (auto why = path_problem(folded)) return "in its NFKC form (a look-alike fold) " + *why;
  if (component_count(folded) != component_count(name)) {
    return "gains a path separator in its NFKC form (a look-alike of '/' or '\\')";
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
  const std::string_view name = decoded;
  const bool ascii = is_ascii(name);
  if (auto why = character_problem(name, ascii)) return name_error(at, std::move(*why));
  if (!ascii && exceeds_stream_safe(name, false)) {
    return name_error(at, "has more than " + std::to_string(max_non_starters) +
                              " non-starters in a row in its canonical decomposition (Unicode's stream-safe limit)");
  }
  if (!utf8_flag) {
    if (auto index = overlong_lead(raw, length)) {
      return name_error(at, "holds the bytes of an overlong UTF-8 form at byte " + std::to_string(*index) +
                                " (without flag bit 11 numpy reads CP437, a lenient UTF-8 reader another name)");
    }
  }
  if (name.size() < npy_suffix.size() || name.substr(name.size() - npy_suffix.size()) != npy_suffix) {
    return error{error_code::not_npy_member, at, "the name does not end in \".npy\" (every member must be an array)"};
  }
  if (auto why = path_problem(name)) return name_error(at, std::move(*why));
  if (!ascii) {
    if (auto why = folded_path_problem(name)) return name_error(at, std::move(*why));
  }
  key.assign(name.substr(0, name.size() - npy_suffix.size()));
  return std::nullopt;
}

std::string nfc(const std::string& decoded) {
  if (is_ascii(decoded)) return decoded;
  utf8proc_uint8_t* normal = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(decoded.c_str()));
  if (normal == nullptr) throw std::bad_alloc();
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(normal, &std::free);
  return std::string(reinterpret_cast<const char*>(normal));
}

// --- path_tree -------------------------------------------------------------

std::string_view path_tree::path(const node& n) const noexcept {
  return std::string_view(bytes_).substr(static_cast<std::size_t>(n.begin), n.length);
}

std::size_t path_tree::edge_start(const node& n) const noexcept {
  return n.parent == 0 ? 0 : std::size_t{nodes_[n.parent].length} + 1;
}

// SipHash of the component, then of (parent, that hash): a child's key
// cannot be predicted without the process's key, whatever its parent.
std::uint64_t path_tree::child_key(std::uint32_t parent, std::string_view component) noexcept {
  const std::uint64_t words[2] = {parent, npyguard::detail::keyed_hash(component)};
  char bytes[sizeof words];
  std::memcpy(bytes, words, sizeof words);
  return npyguard::detail::keyed_hash(std::string_view(bytes, sizeof bytes));
}

// The child of `parent` whose edge starts with the whole `component`.
std::uint32_t path_tree::find_child(std::uint32_t parent, std::string_view component, std::uint64_t key) const {
  if (slots_.empty()) return no_node;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = key & mask;; slot = (slot + 1) & mask) {
    const std::uint32_t held = slots_[slot];
    if (held == 0) return no_node;
    const node& n = nodes_[held - 1];
    if (n.key != key || n.parent != parent) continue;
    const std::string_view edge = path(n).substr(edge_start(n));
    if (edge.substr(0, component.size()) == component &&
        (edge.size() == component.size() || edge[component.size()] == '/')) {
      return held - 1;
    }
  }
}

void path_tree::index(std::uint32_t id) {
  if (nodes_.size() * 2 > slots_.size()) { // the root is never indexed: load stays below 1/2
    std::vector<std::uint32_t> slots(slots_.empty() ? 16 : slots_.size() * 2, 0);
    const std::size_t mask = slots.size() - 1;
    for (std::uint32_t held : slots_) {
      if (held == 0) continue;
      std::size_t slot = nodes_[held - 1].key & mask;
      while (slots[slot] != 0) slot = (slot + 1) & mask;
      slots[slot] = held;
    }
    slots_ = std::move(slots);
  }
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = nodes_[id].key & mask;
  while (slots_[slot] != 0) slot = (slot + 1) & mask;
  slots_[slot] = id + 1;
}

// Points the slot of `id` at `replacement`, which has the same key.
void path_tree::reindex(std::uint32_t id, std::uint32_t replacement) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = nodes_[id].key & mask;
  while (slots_[slot] != id + 1) slot = (slot + 1) & mask;
  slots_[slot] = replacement + 1;
}

std::uint32_t path_tree::add_node(const node& n) {
  if (nodes_.size() >= no_node) throw std::length_error("path_tree");
  nodes_.push_back(n);
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

std::optional<path_tree::clash> path_tree::add(std::string_view name, std::size_t member) {
  if (nodes_.empty()) nodes_.push_back(node{});
  std::uint32_t at = 0;  // the deepest node whose path is a directory of `name`
  std::size_t start = 0; // where the rest of `name` below it starts
  for (;;) {
    const std::string_view rest = name.substr(start);
    const std::string_view component = rest.substr(0, rest.find('/'));
    const std::uint64_t key = child_key(at, component);
    const std::uint32_t child = find_child(at, component, key);
    if (child == no_node) {
      const std::uint32_t leaf =
          add_node(node{bytes_.size(), static_cast<std::uint32_t>(name.size()), at, key, member, true});
      bytes_.append(name);
      index(leaf);
      return std::nullopt;
    }
    const node found = nodes_[child];
    const std::string_view edge = path(found).substr(edge_start(found));
    std::size_t same = component.size(); // bytes of the edge that `rest` repeats
    while (same < edge.size() && same < rest.size() && edge[same] == rest[same]) ++same;
    if (same == edge.size()) {
      if (same == rest.size())
        return clash{found.is_file ? clash_kind::same_name : clash_kind::above_earlier, found.member};
      if (rest[same] == '/') {
        if (found.is_file) return clash{clash_kind::under_earlier, found.member};
        at = child;
        start += same + 1;
        continue;
      }
    } else if (same == rest.size() && edge[same] == '/') {
      return clash{clash_kind::above_earlier, found.member};
    }
    // The paths part inside a component of the edge, which holds a '/'
    // after its first component (the first matched whole): split the edge
    // at the last '/' both share, under a new directory node.
    const std::size_t split = edge.rfind('/', same - 1);
    const std::uint32_t middle = add_node(
        node{found.begin, static_cast<std::uint32_t>(edge_start(found) + split), at, found.key, found.member, false});
    reindex(child, middle);
    const std::string_view moved = edge.substr(split + 1);
    nodes_[child].parent = middle;
    nodes_[child].key = child_key(middle, moved.substr(0, moved.find('/')));
    index(child);
    const std::string_view own = rest.substr(split + 1);
    const std::uint64_t own_key = child_key(middle, own.substr(0, own.find('/')));
    const std::uint32_t leaf =
        add_node(node{bytes_.size(), static_cast<std::uint32_t>(name.size()), middle, own_key, member, true});
    bytes_.append(name);
    index(leaf);
    return std::nullopt;
  }
}

} // namespace npyguard::npz::detail
