#include "platform/atomic_output.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "core/hex.hpp"

namespace npyguard::platform {
namespace {

// write(2) moves at most about 2 GiB per call on Linux.
constexpr std::size_t max_write = 1u << 30;

constexpr char temporary_prefix[] = "/.npyguard-";
constexpr std::size_t nonce_digits = 16;

// The temporary files being written, for the signal handler: fixed slots
// (no allocation, nothing but atomics and unlink(2) in the handler). A file
// whose name does not fit, or that finds no free slot, is simply not
// removed on a signal; its name still says what it is.
constexpr std::size_t temporary_slots = 16;
enum slot_state : int { slot_free, slot_claimed, slot_live };
struct temporary_slot {
  std::atomic<int> state{slot_free};
  char path[PATH_MAX] = {};
};
temporary_slot slots[temporary_slots];

temporary_slot* register_temporary(const std::string& path) noexcept {
  if (path.size() >= PATH_MAX) return nullptr;
  for (temporary_slot& slot : slots) {
    int expected = slot_free;
    if (!slot.state.compare_exchange_strong(expected, slot_claimed)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1); // the handler reads live slots only
    slot.state.store(slot_live);
    return &slot;
  }
  return nullptr;
}

void unregister_temporary(temporary_slot* slot) noexcept {
  if (slot != nullptr) slot->state.store(slot_free);
}

void remove_temporaries_and_die(int signal_number) {
  for (temporary_slot& slot : slots) {
    if (slot.state.load() == slot_live) ::unlink(slot.path);
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  ::sigemptyset(&fallback.sa_mask);
  ::sigaction(signal_number, &fallback, nullptr);
  ::raise(signal_number); // delivered once the handler returns: the process ends as it would have
}

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

} // namespace

atomic_output::atomic_output(std::string destination)
    : destination_(std::move(destination)), directory_(directory_of(destination_)) {
  temporary_ = directory_ + temporary_prefix + std::string(nonce_digits, '0') + ".tmp";
}

atomic_output::~atomic_output() {
  if (fd_ >= 0) ::close(fd_);
  if (created_) ::unlink(temporary_.c_str());
  unregister_temporary(static_cast<temporary_slot*>(slot_));
}

void remove_temporaries_on_signals() noexcept {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction handler {};
    handler.sa_handler = remove_temporaries_and_die;
    ::sigemptyset(&handler.sa_mask);
    ::sigaction(signal_number, &handler, nullptr);
  }
}

namespace {
// Holds SIGINT, SIGTERM and SIGHUP back while it lives: a signal that comes
// between creating the temporary file and registering it would otherwise
// find no slot and leave the file behind. It is delivered when this ends.
class held_signals {
public:
  held_signals() noexcept {
    sigset_t held;
    ::sigemptyset(&held);
    for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&held, signal_number);
    ::pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~held_signals() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  held_signals(const held_signals&) = delete;
  held_signals& operator=(const held_signals&) = delete;

private:
  sigset_t previous_{};
};
} // namespace

std::optional<output_failure> atomic_output::create() noexcept {
  const held_signals held;
  const std::size_t digits_at = directory_.size() + sizeof temporary_prefix - 1;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::uint64_t nonce = 0;
    if (::getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof nonce)) {
      nonce = (static_cast<std::uint64_t>(::getpid()) << 32) ^ static_cast<std::uint64_t>(attempt) ^
              reinterpret_cast<std::uintptr_t>(this);
    }
    for (std::size_t digit = 0; digit < nonce_digits; ++digit) {
      temporary_[digits_at + digit] = detail::hex_digits[(nonce >> ((nonce_digits - 1 - digit) * 4)) & 0xF];
    }
    // 0666 and the umask, as any new file: the output is an ordinary file.
    fd_ = ::open(temporary_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd_ >= 0) {
      created_ = true;
      flushed_ = false;
      slot_ = register_temporary(temporary_);
      return std::nullopt;
    }
    if (errno != EEXIST) return output_failure{output_step::create, errno};
  }
  return output_failure{output_step::create, EEXIST};
}

std::optional<output_failure> atomic_output::write_all(const void* data, std::size_t size) noexcept {
  const auto* bytes = static_cast<const unsigned char*>(data);
  while (size > 0) {
    flushed_ = false;
    const ssize_t n = ::write(fd_, bytes, std::min(size, max_write));
    if (n < 0) {
      if (errno == EINTR) continue;
      return output_failure{output_step::write, errno};
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

std::optional<output_failure> atomic_output::flush() noexcept {
  if (::fsync(fd_) != 0) return output_failure{output_step::flush, errno};
  flushed_ = true;
  return std::nullopt;
}

// A replaced destination keeps its permission bits, and its owner and group
// where this process may set them, as writing into it would (np.save keeps a
// private file private). Set-user-ID and set-group-ID bits are not carried
// over: writing clears them too. A new destination keeps 0666 and the umask.
namespace {
void keep_destination_mode(int fd, const std::string& destination) noexcept {
  struct stat existing {};
  if (::stat(destination.c_str(), &existing) != 0 || !S_ISREG(existing.st_mode)) return;
  // Best effort, like cp -p: another owner is only for root, another group
  // only for its members; the mode is always ours to set.
  if (::fchown(fd, existing.st_uid, existing.st_gid) != 0 &&
      ::fchown(fd, static_cast<uid_t>(-1), existing.st_gid) != 0) {
    // the file stays the writer's, as a new file would be
  }
  if (::fchmod(fd, existing.st_mode & 0777) != 0) {
    // only fails for a descriptor that is not ours: the rename then fails too
  }
}
} // namespace

std::optional<output_failure> atomic_output::commit() noexcept {
  keep_destination_mode(fd_, destination_);
  if (!flushed_) {
    if (auto failure = flush()) return failure;
  }
  if (::close(std::exchange(fd_, -1)) != 0) return output_failure{output_step::close, errno};
  if (::rename(temporary_.c_str(), destination_.c_str()) != 0) return output_failure{output_step::rename, errno};
  created_ = false;
  // After the rename: a signal in between finds the name gone, not the file.
  unregister_temporary(static_cast<temporary_slot*>(std::exchange(slot_, nullptr)));
  const int directory = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory >= 0) {
    (void)::fsync(directory);
    ::close(directory);
  }
  return std::nullopt;
}

} // namespace npyguard::platform
