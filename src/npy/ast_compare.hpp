// Whether two syntax trees are the same tree: the fast path and the grammar
// (npy/parse.hpp) must build equal ones (fuzz_header_text, the tests).
#ifndef NPYGUARD_SRC_NPY_AST_COMPARE_HPP
#define NPYGUARD_SRC_NPY_AST_COMPARE_HPP

#include <cstddef>

#include "npy/ast.hpp"

namespace npyguard::detail {

// Same nodes (kind, offset, links, values) and same decoded strings.
[[nodiscard]] inline bool same_tree(const ast& a, const ast& b) noexcept {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const node& x = a.nodes[i];
    const node& y = b.nodes[i];
    if (x.kind != y.kind || x.offset != y.offset || x.next != y.next || x.negative != y.negative) return false;
    switch (x.kind) {
      case node_kind::dict:
      case node_kind::list:
      case node_kind::tuple:
        if (x.children.first != y.children.first || x.children.count != y.children.count) return false;
        break;
      case node_kind::string:
        if (x.verbatim != y.verbatim || x.text.begin != y.text.begin || a.text(x) != b.text(y)) return false;
        break;
      case node_kind::integer:
      case node_kind::boolean:
        if (x.number != y.number) return false;
        break;
    }
  }
  return a.strings.size() == b.strings.size();
}

} // namespace npyguard::detail

#endif
