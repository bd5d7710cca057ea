// The header's abstract syntax tree: a flat vector of nodes in document
// order, linked by first-child / next-sibling indices, with byte offsets into
// the header text. One allocation grows amortised; strings are decoded
// (escapes resolved, latin-1 transcoded) into one shared UTF-8 arena.
#ifndef NPYGUARD_SRC_AST_HPP
#define NPYGUARD_SRC_AST_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npyguard::detail {

enum class node_kind : std::uint8_t { dict, list, tuple, string, integer, boolean };

inline constexpr std::uint32_t no_node = 0xFFFF'FFFFu;

struct child_list {
  std::uint32_t first; // first child (no_node when empty)
  std::uint32_t count; // number of children
};

struct text_span {
  std::uint32_t begin; // decoded text in the arena
  std::uint32_t size;
};

struct node {
  std::uint32_t offset = 0;     // byte offset of the node's first byte in the header text
  std::uint32_t next = no_node; // next sibling
  node_kind kind = node_kind::dict;
  bool negative = false; // integers written with a leading '-'
  union {
    child_list children;  // containers
    text_span text;       // strings
    std::uint64_t number; // integers: magnitude; booleans: 0 or 1
  };

  node() noexcept : children{no_node, 0} {}
};

struct ast {
  std::vector<node> nodes; // nodes[0] is the header dict
  std::string strings;     // decoded string values, UTF-8

  [[nodiscard]] std::string_view text(const node& string_node) const noexcept {
    return std::string_view(strings).substr(string_node.text.begin, string_node.text.size);
  }
  void clear() noexcept {
    nodes.clear();
    strings.clear();
  }
};

} // namespace npyguard::detail

#endif
