// What a .npy validation needs besides its input and its model: the syntax
// tree, the duplicate-name index, a buffer for header text read from a
// source, and the fields of earlier models kept for reuse. A workspace is
// reused from one validation to the next (npyguard::validator keeps one, the
// free functions borrow their thread's), so in steady state a validation
// allocates nothing: every buffer keeps the capacity of the largest header
// it has held, until release().
#ifndef NPYGUARD_SRC_NPY_WORKSPACE_HPP
#define NPYGUARD_SRC_NPY_WORKSPACE_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "npy/ast.hpp"
#include "npyguard/npy/model.hpp"

namespace npyguard::detail {

// One name or title of a struct in the duplicate-name index: 16 bytes.
struct name_entry {
  std::uint64_t hash;
  std::uint32_t node;            // the name's string node
  std::uint32_t order_and_title; // document order << 1 | is a title
  [[nodiscard]] std::uint32_t order() const noexcept { return order_and_title >> 1; }
  [[nodiscard]] bool is_title() const noexcept { return (order_and_title & 1u) != 0; }
};

struct workspace {
  ast tree;
  std::vector<name_entry> names;         // the structs being read, innermost last
  std::vector<std::uint32_t> name_slots; // their hash tables, likewise
  std::vector<unsigned char> text;       // header text read from a source
  std::vector<field> spare_fields;       // fields an earlier model left over
  // Set by npyguard::validator, whose models stay with it: count the fields
  // made, and keep spare_fields able to hold them all.
  bool track_fields = false;
  std::size_t fields_made = 0;
  // The duplicate-name check skips its hash table and sorts from the start
  // (model_builder.cpp): fuzz_header_text holds the two methods to the
  // same verdict, and covers the fallback no real input reaches.
  bool sort_names = false;

  // Bytes held by the buffers above (capacities, with the strings the
  // spare fields own).
  [[nodiscard]] std::size_t memory_held() const noexcept;
  // Frees every buffer.
  void release() noexcept;
};

// A reused model's fields are overwritten in place; those it has no use for
// go to workspace::spare_fields for the next model that needs more. A
// field name longer than this is freed rather than kept, so reuse holds at
// most this much per field.
inline constexpr std::size_t spare_name_capacity = 256;

// Heap bytes a model owns (its vectors' and strings' capacity).
[[nodiscard]] std::size_t model_heap(const header& model) noexcept;

// The calling thread's workspace while it is free, else (a validation
// running inside a callback of another on the same thread) a new one of
// its own. Given back at destruction, freed if it then holds more than
// thread_workspace_cap bytes. May throw std::bad_alloc.
inline constexpr std::size_t thread_workspace_cap = std::size_t{1} << 20;

class workspace_lease {
public:
  workspace_lease();
  ~workspace_lease();
  workspace_lease(const workspace_lease&) = delete;
  workspace_lease& operator=(const workspace_lease&) = delete;
  workspace_lease(workspace_lease&&) = delete;
  workspace_lease& operator=(workspace_lease&&) = delete;

  [[nodiscard]] workspace& get() noexcept { return *held_; }

private:
  std::unique_ptr<workspace> own_;
  workspace* held_ = nullptr;
};

} // namespace npyguard::detail

#endif
