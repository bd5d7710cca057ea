// Member names (SPEC-npz.md section 6): decoding as Python's zipfile does
// (UTF-8 with flag bit 11, CP437 without), the rules every name must pass,
// NFC for the duplicate check, and the tree that finds a name used as
// another's directory. No I/O.
#ifndef NPYGUARD_SRC_NPZ_NAMES_HPP
#define NPYGUARD_SRC_NPZ_NAMES_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npyguard/error.hpp"

namespace npyguard::npz::detail {

// Decodes `raw` (UTF-8 when `utf8_flag`, else CP437) into `decoded` (UTF-8).
// False when a UTF-8 name is not strict UTF-8. May throw std::bad_alloc.
[[nodiscard]] bool decode_name(const unsigned char* raw, std::size_t length, bool utf8_flag, std::string& decoded);

// The rules of section 6 after decoding, in its order, for the name at
// archive offset `at`: characters (forbidden, then Cf/Zl/Zp, then the
// stream-safe run), overlong bytes (CP437 names), ".npy", the path rules,
// component ends, then the NFKC form's path. On success `key` is the name
// without ".npy". Linear in the name. May throw std::bad_alloc.
[[nodiscard]] std::optional<error> check_name(const unsigned char* raw, std::size_t length, bool utf8_flag,
                                              const std::string& decoded, std::uint64_t at, std::string& key);

// The Unicode NFC (NFKC) form of a decoded name, the code points
// utf8proc_NFC (utf8proc_NFKC) gives: ASCII names, and names a quick check
// shows to be their own form, are `decoded` itself; other forms are held in
// a buffer of the thread's, valid until its next call of nfc or nfkc. The
// NFC form of the name check_name last accepted is the one it computed.
// Linear for a name that check_name accepted. May throw std::bad_alloc.
[[nodiscard]] std::string_view nfc(const std::string& decoded);
[[nodiscard]] std::string_view nfkc(const std::string& decoded);

// The names seen so far as a tree of '/'-separated paths, compressed so
// that a chain of single children is one edge (a radix tree over path
// components): adding a name costs time linear in its bytes, however long
// the prefixes it shares or however many components it has, and memory is
// the names' bytes plus a few nodes a name. Children are found by the keyed
// hash of (parent, first component) and then compared byte for byte, so
// equality is exact and collisions cannot be chosen offline.
class path_tree {
public:
  enum class clash_kind {
    same_name,     // the name was seen before
    under_earlier, // an earlier name is one of this name's directories
    above_earlier, // this name is a directory of an earlier name
  };
  struct clash {
    clash_kind kind;
    std::size_t member; // the earlier member
  };

  // Adds `name` (a name check_name accepted, in NFC) for `member`, unless it
  // clashes with an earlier name: then the clash, and the tree unchanged
  // in what it answers. Without a clash, `stored` (when not null) is the
  // tree's copy of the name, which never moves while the tree lives. May
  // throw std::bad_alloc.
  [[nodiscard]] std::optional<clash> add(std::string_view name, std::size_t member, std::string_view* stored = nullptr);

private:
  static constexpr std::uint32_t no_node = 0xFFFFFFFFu;

  // A node is a path: the first `length` bytes of the name stored at
  // `begin` (a block of blocks_ in the high 32 bits, the offset in it in the
  // low 32), ending at a component boundary. Its edge from
  // `parent` is the part after the parent's path and its '/'.
  struct node {
    std::uint64_t begin = 0;
    std::uint32_t length = 0;
    std::uint32_t parent = no_node;
    std::uint64_t key = 0;  // keyed hash of (parent, the edge's first component)
    std::size_t member = 0; // the first member whose name reached this path
    bool is_file = false;   // a name ends here
  };

  [[nodiscard]] std::string_view path(const node& n) const noexcept;
  [[nodiscard]] std::size_t edge_start(const node& n) const noexcept;
  [[nodiscard]] static std::uint64_t child_key(std::uint32_t parent, std::string_view component) noexcept;
  [[nodiscard]] std::uint32_t find_child(std::uint32_t parent, std::string_view component, std::uint64_t key) const;
  void index(std::uint32_t id);
  void reindex(std::uint32_t id, std::uint32_t replacement);
  std::uint32_t add_node(const node& n);
  [[nodiscard]] std::uint64_t store(std::string_view name); // where its bytes now are, as node::begin

  std::vector<std::unique_ptr<char[]>> blocks_; // every name added, one after another
  std::size_t block_used_ = 0;                  // in the last block
  std::size_t block_left_ = 0;
  std::size_t block_size_ = 0;       // of the last block, unless a name was longer
  std::vector<node> nodes_;          // [0]: the root, the empty path
  std::vector<std::uint32_t> slots_; // open addressing by node key; 0: empty, else id + 1
};

} // namespace npyguard::npz::detail

#endif
