// Building the AST (npy/ast.hpp) from header text, shared by the two
// parsers of npy/parse.hpp: the grammar's actions and the fast path call the
// same functions in the same order, so an accepted header has one tree
// whichever parser read it (fuzz_header_text holds them to that).
//
// Nothing here throws but std::bad_alloc: a value the tree cannot hold (an
// integer above 2^63-1, an escape naming no character, nesting past
// max_depth) is returned as a build_failure for the caller to raise or give
// up on.
#ifndef NPYGUARD_SRC_NPY_AST_BUILDER_HPP
#define NPYGUARD_SRC_NPY_AST_BUILDER_HPP

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "npyguard/error.hpp"
#include "npyguard/options.hpp"

#include "core/checked_math.hpp"
#include "core/utf8.hpp"
#include "npy/ast.hpp"

namespace npyguard::detail {

struct parse_settings {
  bool utf8 = false;              // version 3.0: strings are UTF-8, else latin-1
  bool ascii_only = false;        // no byte >= 0x80: strings need no transcoding
  bool allow_long_suffix = true;  // versions 1.0 and 2.0: Python 2 '10L'
  std::uint32_t max_depth = 32;   // nesting of lists and tuples
  std::uint64_t base_offset = 10; // file offset of the first header byte
};

// Why a value cannot enter the tree, and where (a position in the text).
struct build_failure {
  error_code code = error_code::syntax_error;
  std::size_t position = 0;
  const char* message = "";
};

class ast_builder {
public:
  static constexpr std::size_t initial_nodes = std::size_t{1} << 14;

  // Clears `tree` (keeping its capacity) for a text of `size` bytes.
  ast_builder(const char* text, std::size_t size, const parse_settings& settings, ast& tree)
      : text_(text), settings_(settings), tree_(tree), max_nodes_(size / 2 + 2) {
    tree.clear();
    // In accepted text every node takes at least 2 bytes (a leaf and the
    // separator or bracket after it; a container its two brackets), so n
    // bytes hold at most (n + 1) / 2 nodes: 12 bytes of AST per header
    // byte. Real headers are far sparser (a field "('name', '<f8'), " is 3
    // nodes in 17 bytes), so start at 1 node per 6 bytes and double up to
    // that worst case (grow). A reused tree keeps the capacity of the
    // largest header it held.
    // (At most initial_nodes at first: a header padded with a megabyte of
    // spaces holds a handful of nodes, and constructing 175,000 of them up
    // front cost more than parsing it.)
    const std::size_t initial = std::min({max_nodes_, size / 6 + 16, initial_nodes});
    if (tree.nodes.capacity() < initial) tree.nodes.reserve(initial);
    // The arena holds only strings with escapes or latin-1 to transcode
    // (rare): it grows as they come.
    tree.source = text;
  }

  [[nodiscard]] const parse_settings& settings() const noexcept { return settings_; }
  [[nodiscard]] std::size_t position_of(const char* p) const noexcept { return static_cast<std::size_t>(p - text_); }

  // A dict, list or tuple opens at `at`. The dict is the root and does not
  // count towards max_depth; lists and tuples do.
  [[nodiscard]] bool open(node_kind kind, const char* at, build_failure& why) {
    if (kind != node_kind::dict && open_count_ > settings_.max_depth) {
      why = {error_code::depth_exceeded, position_of(at), "lists and tuples nested deeper than the limit"};
      return false;
    }
    open_[open_count_] = {add(kind, at), no_node, 0};
    ++open_count_;
    return true;
  }

  // The innermost open container closes: its children are counted.
  void close() noexcept {
    const open_container& closing = open_[--open_count_];
    tree_.nodes[closing.index].children.count = closing.count;
  }

  // A string token [begin, end), quotes included, whose escapes have the
  // grammar's form: its bytes (add_plain_string) when they are its text,
  // else decoded into the arena.
  [[nodiscard]] bool add_string(const char* begin, const char* end, build_failure& why) {
    if (is_verbatim(begin + 1, end - 1)) {
      add_plain_string(begin, end);
      return true;
    }
    const std::uint32_t index = add(node_kind::string, begin);
    const auto arena_begin = tree_.strings.size();
    const char* const last = end - 1; // the closing quote
    for (const char* p = begin + 1; p < last;) {
      // Copy the run up to the next escape (or, in latin-1, the next byte
      // that needs transcoding) in one append.
      const char* run_end = p;
      if (settings_.utf8 || settings_.ascii_only) {
        run_end = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(last - p)));
        if (run_end == nullptr) run_end = last;
      } else {
        while (run_end < last && *run_end != '\\' && static_cast<unsigned char>(*run_end) < 0x80) ++run_end;
      }
      tree_.strings.append(p, static_cast<std::size_t>(run_end - p));
      p = run_end;
      if (p == last) break;
      if (*p != '\\') {
        append_utf8(tree_.strings, static_cast<unsigned char>(*p)); // latin-1: the byte is the code point
        ++p;
        continue;
      }
      const char* escape_begin = p;
      const char code = p[1];
      p += 2;
      switch (code) {
        case 'n': tree_.strings.push_back('\n'); continue;
        case 'r': tree_.strings.push_back('\r'); continue;
        case 't': tree_.strings.push_back('\t'); continue;
        case '\\':
        case '\'':
        case '"': tree_.strings.push_back(code); continue;
        default: break;
      }
      const int digits = code == 'x' ? 2 : code == 'u' ? 4 : 8;
      std::uint32_t code_point = 0;
      for (int i = 0; i < digits; ++i, ++p) {
        code_point = code_point * 16u + hex_value(*p);
      }
      if (code_point > 0x10FFFF) {
        why = {error_code::syntax_error, position_of(escape_begin), "escape names a code point above U+10FFFF"};
        return false;
      }
      if (code_point >= 0xD800 && code_point <= 0xDFFF) {
        why = {error_code::syntax_error, position_of(escape_begin),
               "escape names a surrogate (U+D800-U+DFFF), which is not a character"};
        return false;
      }
      append_utf8(tree_.strings, code_point);
    }
    // Offsets are 32-bit; only a header near 4 GiB of latin-1 text (which
    // doubles in UTF-8) could exceed them.
    if (tree_.strings.size() > 0xFFFF'FFFFu) {
      why = {error_code::header_too_large, position_of(begin), "decoded header strings exceed 4 GiB"};
      return false;
    }
    node& added = tree_.nodes[index];
    added.text.begin = static_cast<std::uint32_t>(arena_begin);
    added.text.size = static_cast<std::uint32_t>(tree_.strings.size() - arena_begin);
    return true;
  }

  // A string token [begin, end), quotes included, with no escape and, unless
  // the text is UTF-8, no byte above 0x7F: its bytes are its text, a view
  // of the header text.
  void add_plain_string(const char* begin, const char* end) {
    node& added = tree_.nodes[add(node_kind::string, begin)];
    added.verbatim = true;
    added.text = {static_cast<std::uint32_t>(position_of(begin + 1)), static_cast<std::uint32_t>(end - begin - 2)};
  }

  // open(tuple, at), add_plain_string of the tokens [first, first_end) and
  // [second, second_end), close(): the same nodes in one step, for the form
  // of nearly every field, ('name', 'type'). False, nothing added, where
  // the tuple would nest past max_depth.
  [[nodiscard]] bool add_string_pair(const char* at, const char* first, const char* first_end, const char* second,
                                     const char* second_end) {
    if (open_count_ > settings_.max_depth) return false;
    node_buffer& nodes = tree_.nodes;
    while (nodes.capacity() - nodes.size() < 3) grow();
    const auto tuple = static_cast<std::uint32_t>(nodes.size());
    link(tuple);
    node* const added = nodes.extend_unset(3);
    set_node(added[0], node_kind::tuple, position_of(at), no_node);
    added[0].children = {tuple + 1, 2};
    set_verbatim(added[1], position_of(first), tuple + 2, first_end - first - 2);
    set_verbatim(added[2], position_of(second), no_node, second_end - second - 2);
    return true;
  }

  // An integer token [begin, end): '-'? digits 'L'?, in the grammar's form.
  [[nodiscard]] bool add_integer(const char* begin, const char* end, build_failure& why) {
    const char* p = begin;
    const bool negative = *p == '-';
    if (negative) ++p;
    std::uint64_t magnitude = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) {
      const auto digit = static_cast<std::uint64_t>(*p - '0');
      if (magnitude > (max_signed_size - digit) / 10) {
        why = {error_code::integer_too_large, position_of(begin), "integer above 2^63-1 (9223372036854775807)"};
        return false;
      }
      magnitude = magnitude * 10 + digit;
    }
    if (p < end && !settings_.allow_long_suffix) {
      why = {error_code::syntax_error, position_of(p),
             "the L suffix (Python 2 long) is allowed in versions 1.0 and 2.0 only"};
      return false;
    }
    node& added = tree_.nodes[add(node_kind::integer, begin)];
    added.negative = negative;
    added.number = magnitude;
    return true;
  }

  void add_boolean(const char* at, bool truth) { tree_.nodes[add(node_kind::boolean, at)].number = truth ? 1 : 0; }

private:
  // Whether the string content [begin, end) is its own text: no escape, and
  // no byte to transcode from latin-1.
  [[nodiscard]] bool is_verbatim(const char* begin, const char* end) const noexcept {
    const bool transcodes = !settings_.utf8 && !settings_.ascii_only;
    for (const char* p = begin; p < end; ++p) {
      if (*p == '\\' || (transcodes && static_cast<unsigned char>(*p) >= 0x80)) return false;
    }
    return true;
  }

  // Every member of `to` but the payload, written in place (a node built
  // aside and copied in cost twice the stores).
  static void set_node(node& to, node_kind kind, std::size_t offset, std::uint32_t next) noexcept {
    to.offset = static_cast<std::uint32_t>(offset);
    to.next = next;
    to.kind = kind;
    to.negative = false;
    to.verbatim = false;
  }

  // A verbatim string whose opening quote is at `offset`, `size` bytes long.
  static void set_verbatim(node& to, std::size_t offset, std::uint32_t next, std::ptrdiff_t size) noexcept {
    set_node(to, node_kind::string, offset, next);
    to.verbatim = true;
    to.text = {static_cast<std::uint32_t>(offset + 1), static_cast<std::uint32_t>(size)};
  }

  struct open_container {
    std::uint32_t index;      // the container's node
    std::uint32_t last_child; // no_node before the first
    std::uint32_t count;      // children so far, written to the node on close
  };

  // Appends a node linked under the innermost open container; its index.
  std::uint32_t add(node_kind kind, const char* at) {
    node_buffer& nodes = tree_.nodes;
    const auto index = static_cast<std::uint32_t>(nodes.size());
    if (index == nodes.capacity()) grow();
    link(index);
    node& added = nodes.append();
    added.kind = kind;
    added.offset = static_cast<std::uint32_t>(position_of(at));
    return index;
  }

  // The node to be added at `index` as the last child of the innermost
  // open container, if any.
  void link(std::uint32_t index) noexcept {
    if (open_count_ == 0) return;
    open_container& parent = open_[open_count_ - 1];
    (parent.last_child == no_node ? tree_.nodes[parent.index].children.first : tree_.nodes[parent.last_child].next) =
        index;
    parent.last_child = index;
    ++parent.count;
  }

  // Doubles the node capacity, up to the most an accepted text can hold.
  // Past that only text the grammar rejects goes (the fast path reads
  // "((((" a node a byte before it gives up): doubling on.
  void grow() {
    const std::size_t capacity = tree_.nodes.capacity();
    const std::size_t doubled = std::max<std::size_t>(2 * capacity, 16);
    tree_.nodes.reserve(capacity < max_nodes_ ? std::min(doubled, max_nodes_) : doubled);
  }

  const char* text_;
  const parse_settings& settings_;
  ast& tree_;
  std::size_t max_nodes_; // the worst case for this header's size
  // The dict and at most hard_max_depth lists and tuples: no allocation.
  // Left uninitialised (1.6 KB, written before read): zeroing it would cost
  // more than parsing a typical header.
  std::array<open_container, hard_max_depth + 2> open_; // NOLINT(cppcoreguidelines-pro-type-member-init)
  std::size_t open_count_ = 0;
};

} // namespace npyguard::detail

#endif
