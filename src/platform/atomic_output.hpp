// A new file written beside its destination and renamed over it only when
// complete, so the destination holds either its old content or the whole
// new file, never a part.
#ifndef NPYGUARD_SRC_PLATFORM_ATOMIC_OUTPUT_HPP
#define NPYGUARD_SRC_PLATFORM_ATOMIC_OUTPUT_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace npyguard::platform {

// Which step of an atomic_output failed, so the caller can say what it was
// doing; errno_value is the (positive) errno of the failed call.
enum class output_step : std::uint8_t { create, write, flush, close, rename };
struct output_failure {
  output_step step;
  int errno_value;
};

// create() makes "<directory>/.npyguard-<16 hex digits>.tmp" (O_EXCL,
// O_NOFOLLOW, 0666 and the umask); write_all() appends to it; commit()
// gives it the mode (and owner and group where allowed) of a regular file it
// replaces, flushes it, closes it, renames it over the destination and flushes the
// directory. The destructor closes and removes a temporary file that was
// not committed. Not copyable or movable: the name is this object's.
// On SIGINT, SIGTERM and SIGHUP, unlinks every temporary file an
// atomic_output of this process has created and not yet committed or
// removed, then lets the signal end the process as it would have. Only
// signals whose disposition is the default are taken (a program's own
// handlers, and signals it ignores, are left alone).
void remove_temporaries_on_signals() noexcept;

class atomic_output {
public:
  // Names only; nothing is created yet. May throw std::bad_alloc.
  explicit atomic_output(std::string destination);
  atomic_output(const atomic_output&) = delete;
  atomic_output& operator=(const atomic_output&) = delete;
  atomic_output(atomic_output&&) = delete;
  atomic_output& operator=(atomic_output&&) = delete;
  ~atomic_output();

  [[nodiscard]] const std::string& destination() const noexcept { return destination_; }
  // The destination's directory ("." for a bare name), where the temporary
  // file is made.
  [[nodiscard]] const std::string& directory() const noexcept { return directory_; }
  // The temporary file's descriptor (read-write), -1 before create() and
  // after commit().
  [[nodiscard]] int fd() const noexcept { return fd_; }

  [[nodiscard]] std::optional<output_failure> create() noexcept;
  // write(2) until all `size` bytes are written, retrying on EINTR.
  [[nodiscard]] std::optional<output_failure> write_all(const void* data, std::size_t size) noexcept;
  // fsync of the temporary file (commit() does it too unless nothing was
  // written since).
  [[nodiscard]] std::optional<output_failure> flush() noexcept;
  // The rename is durable only once the directory is flushed; failing that
  // is not reported (it is not worth undoing a complete file for).
  [[nodiscard]] std::optional<output_failure> commit() noexcept;

private:
  std::string destination_;
  std::string directory_;
  std::string temporary_; // its hex digits are filled in by create()
  void* slot_ = nullptr;  // where the signal handler finds temporary_ (remove_temporaries_on_signals)
  int fd_ = -1;
  bool created_ = false; // temporary_ exists and is ours to remove
  bool flushed_ = false; // nothing written since the last fsync
};

} // namespace npyguard::platform

#endif
