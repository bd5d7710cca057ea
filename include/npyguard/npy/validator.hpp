// npyguard: a reusable .npy validator. Keep one per thread and validate any
// number of inputs with it: it owns the buffers validation works in (the
// syntax tree, the string arena, the field-name index, header text read
// from a source) and the model it returns, and keeps them from one call to
// the next. Once it has seen a header at least as large, a validation that
// accepts allocates nothing and touches no new memory; a rejection may
// allocate its message.
//
// The free functions of npyguard/npy/validate.hpp give the same verdicts
// (they borrow a per-thread workspace, and return a model of their own).
//
// Thread safety: one validator serves one thread at a time. Distinct
// validators may be used from distinct threads freely.
#ifndef NPYGUARD_NPY_VALIDATOR_HPP
#define NPYGUARD_NPY_VALIDATOR_HPP

#include <cstddef>
#include <memory>

#include "npyguard/export.hpp"
#include "npyguard/io.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard {

namespace detail {
struct validator_state;
}

class NPYGUARD_API validator {
public:
  // Allocates nothing: the buffers come with the first validation.
  validator() noexcept;
  ~validator();
  validator(validator&&) noexcept;
  validator& operator=(validator&&) noexcept;
  validator(const validator&) = delete;
  validator& operator=(const validator&) = delete;

  // As the free functions of the same names (npyguard/npy/validate.hpp).
  // The result stays valid, and unchanged, until the next call of a
  // validate_* function or release() on this validator, or its destruction;
  // copy it to keep it longer. If the validator cannot get memory for its
  // buffers the result is out_of_memory.
  const result& validate_buffer(const void* data, std::size_t size, const options& opts = {}) noexcept;
  const result& validate_file(const char* path, const options& opts = {}) noexcept;
  const result& validate_source(random_access_source& source, const options& opts = {}) noexcept;
  const result& validate_stream(byte_source& source, const options& opts = {}) noexcept;
  const result& validate_fd(int fd, const options& opts = {}) noexcept;
  const result& validate_header_text(const void* text, std::size_t size, unsigned major_version,
                                     const options& opts = {}) noexcept;

  // Heap bytes held between calls (buffers and the last model): bounded by
  // a constant times the largest header validated since construction or
  // release(), plus at most 256 bytes per field name kept for reuse.
  [[nodiscard]] std::size_t memory_held() const noexcept;
  // Frees every buffer and the last result.
  void release() noexcept;

private:
  template <typename Stage>
  const result& run(Stage&& stage) noexcept;

  std::unique_ptr<detail::validator_state> state_;
};

} // namespace npyguard

#endif
