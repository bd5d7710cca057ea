#include "npy/workspace.hpp"

#include <string>

namespace npyguard::detail {
namespace {

std::size_t string_heap(const std::string& s) noexcept {
  // The small-string buffer lives inside the object.
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

std::size_t field_heap(const field& f) noexcept {
  std::size_t bytes = string_heap(f.name) + (f.title ? string_heap(*f.title) : 0) +
                      f.subarray_shape.capacity() * sizeof(std::uint64_t) + f.type.fields.capacity() * sizeof(field);
  for (const field& nested : f.type.fields) bytes += field_heap(nested);
  return bytes;
}

thread_local workspace thread_workspace;
thread_local bool thread_workspace_busy = false;

} // namespace

std::size_t workspace::memory_held() const noexcept {
  std::size_t bytes = tree.nodes.capacity() * sizeof(node) + tree.strings.capacity() +
                      names.capacity() * sizeof(name_entry) + name_slots.capacity() * sizeof(std::uint32_t) +
                      text.capacity() + spare_fields.capacity() * sizeof(field);
  for (const field& f : spare_fields) bytes += field_heap(f);
  return bytes;
}

void workspace::release() noexcept {
  tree.nodes.release();
  tree.strings.release();
  std::vector<name_entry>().swap(names);
  std::vector<std::uint32_t>().swap(name_slots);
  std::vector<unsigned char>().swap(text);
  std::vector<field>().swap(spare_fields);
  fields_made = 0;
}

std::size_t model_heap(const header& model) noexcept {
  std::size_t bytes = model.shape.capacity() * sizeof(std::uint64_t) + model.descr.fields.capacity() * sizeof(field);
  for (const field& f : model.descr.fields) bytes += field_heap(f);
  return bytes;
}

workspace_lease::workspace_lease() {
  if (!thread_workspace_busy) {
    thread_workspace_busy = true;
    held_ = &thread_workspace;
  } else {
    own_ = std::make_unique<workspace>();
    held_ = own_.get();
  }
}

workspace_lease::~workspace_lease() {
  if (held_ != &thread_workspace) return;
  if (thread_workspace.memory_held() > thread_workspace_cap) thread_workspace.release();
  thread_workspace_busy = false;
}

} // namespace npyguard::detail
