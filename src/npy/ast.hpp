// The header's abstract syntax tree: a flat vector of nodes in document
// order, linked by first-child / next-sibling indices, with byte offsets into
// the header text. One allocation grows amortised. A string whose bytes are
// its text (no escape, nothing to transcode: nearly every one) is a view of
// the header text; the others are decoded (escapes resolved, latin-1
// transcoded) into one shared UTF-8 arena.
#ifndef NPYGUARD_SRC_AST_HPP
#define NPYGUARD_SRC_AST_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>

namespace npyguard::detail {

enum class node_kind : std::uint8_t { dict, list, tuple, string, integer, boolean };

inline constexpr std::uint32_t no_node = 0xFFFF'FFFFu;

struct child_list {
  std::uint32_t first; // first child (no_node when empty)
  std::uint32_t count; // number of children
};

struct text_span {
  std::uint32_t begin; // in the header text (node::verbatim), else in the arena
  std::uint32_t size;
};

struct node {
  std::uint32_t offset = 0;     // byte offset of the node's first byte in the header text
  std::uint32_t next = no_node; // next sibling
  node_kind kind = node_kind::dict;
  bool negative = false; // integers written with a leading '-'
  bool verbatim = false; // strings: the text is the header's bytes between the quotes
  union {
    child_list children;  // containers
    text_span text;       // strings
    std::uint64_t number; // integers: magnitude; booleans: 0 or 1
  };

  node() noexcept : children{no_node, 0} {}
};

// A buffer of trivially copyable T that grows like a vector, the storage
// of the two below: new T[] leaves chars uninitialised (a string arena
// never pays for bytes it has not written), and growing copies bytes.
template <typename T>
class growing_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "grown by copying bytes");

public:
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  void clear() noexcept { size_ = 0; }
  void release() noexcept {
    data_.reset();
    size_ = 0;
    capacity_ = 0;
  }
  void reserve(std::size_t wanted) {
    if (wanted <= capacity_) return;
    std::unique_ptr<T[]> grown(new T[wanted]); // NOLINT(cppcoreguidelines-avoid-c-arrays)
    if (size_ != 0) std::memcpy(static_cast<void*>(grown.get()), data_.get(), size_ * sizeof(T));
    data_ = std::move(grown);
    capacity_ = wanted;
  }

protected:
  std::unique_ptr<T[]> data_; // NOLINT(cppcoreguidelines-avoid-c-arrays)
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// The decoded strings, end to end, appended inline.
class string_arena : public growing_buffer<char> {
public:
  [[nodiscard]] const char* data() const noexcept { return data_.get(); }
  void append(const char* bytes, std::size_t count) {
    if (capacity_ - size_ < count) reserve(std::max(2 * capacity_, size_ + count));
    if (count != 0) std::memcpy(data_.get() + size_, bytes, count);
    size_ += count;
  }
  void push_back(char c) {
    if (size_ == capacity_) reserve(std::max<std::size_t>(2 * capacity_, 64));
    data_[size_++] = c;
  }
};

// The nodes, in document order, with the one append the builder needs (its
// caller checks the capacity once, not a vector's emplace again).
class node_buffer : public growing_buffer<node> {
public:
  [[nodiscard]] const node* data() const noexcept { return data_.get(); }
  [[nodiscard]] node& operator[](std::size_t i) noexcept { return data_[i]; }
  [[nodiscard]] const node& operator[](std::size_t i) const noexcept { return data_[i]; }
  // A default node at the end; size() < capacity() is the caller's to ensure.
  node& append() noexcept {
    node& added = data_[size_++];
    added = node();
    return added;
  }
  // `count` nodes at the end, likewise, for the caller to write whole: the
  // first of them.
  node* extend_unset(std::size_t count) noexcept {
    node* const added = data_.get() + size_;
    size_ += count;
    return added;
  }
};

struct ast {
  node_buffer nodes;    // nodes[0] is the header dict
  string_arena strings; // decoded string values, UTF-8
  // The header text the tree was read from: verbatim strings point into it,
  // so the tree is read only while that text lives (parse, then model).
  const char* source = nullptr;

  [[nodiscard]] std::string_view text(const node& string_node) const noexcept {
    const char* const base = string_node.verbatim ? source : strings.data();
    return {base + string_node.text.begin, string_node.text.size};
  }
  void clear() noexcept {
    nodes.clear();
    strings.clear();
    source = nullptr;
  }
};

} // namespace npyguard::detail

#endif
