// npyguard check: many files, in argument order, in parallel, checked while
// -r walks the tree.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "ordered_pool.hpp"
#include "report.hpp"

namespace npyguard_cli {
namespace {

// "checked 1234 files" (while the walk goes on), then "checked 1234 of 5000
// files", on standard error, when it is a terminal and the run has taken
// more than a second; erased before any output line.
class progress_line {
public:
  explicit progress_line(bool enabled) : enabled_(enabled && ::isatty(2) == 1) {}

  // `total`: the number of inputs, 0 while the walk has not finished.
  void update(std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || (shown_ && now - last_ < std::chrono::milliseconds(200))) return;
    if (total == 0) {
      std::fprintf(stderr, "\rchecked %zu files\033[K", done);
    } else {
      std::fprintf(stderr, "\rchecked %zu of %zu files\033[K", done, total);
    }
    std::fflush(stderr);
    shown_ = true;
    last_ = now;
  }

  void erase() {
    if (!shown_) return;
    std::fflush(stdout);
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// Inputs go from the walk to the workers in chunks, so the locks are taken
// once per chunk, and the workers stay at most `window` inputs ahead of the
// output: memory does not grow with the number of files, and the first
// verdict is printed while the walk goes on.
constexpr std::size_t chunk_size = 32;
constexpr std::size_t window = 1024;

// A chunk's inputs and verdicts. A slot is reused for chunk after chunk, so
// its names keep their capacity: no allocation per file here once warm.
struct chunk {
  std::vector<input> inputs = std::vector<input>(chunk_size);
  std::vector<checked> results = std::vector<checked>(chunk_size);
  std::size_t size = 0;
};

} // namespace

int run_check(const check_settings& settings) {
  unsigned jobs = settings.jobs != 0 ? settings.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (!settings.walk.recursive) {
    // Without -r every argument is one input: no more workers than chunks.
    const std::size_t chunks = (settings.arguments.size() + chunk_size - 1) / chunk_size;
    jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(chunks, 1)));
  }
  // The excerpt needs a second read of an invalid file; -q and --json never show it.
  const std::size_t context = settings.quiet || settings.json ? 0 : excerpt_context;
  input_walk walk(settings.arguments, settings.walk);
  // The workers list the directory the walk will enter next
  // (input_walk::help) while the calling thread walks and fills.
  if (settings.walk.recursive && jobs > 1) walk.read_ahead(2);
  // Written by whichever worker fills (one at a time), read by the progress line.
  std::atomic<std::size_t> found{0};
  std::atomic<bool> walked{false};
  const auto fill = [&](chunk& slot) {
    slot.size = 0;
    while (slot.size < chunk_size && walk.next(slot.inputs[slot.size])) ++slot.size;
    found.fetch_add(slot.size, std::memory_order_relaxed);
    if (slot.size < chunk_size) walked.store(true, std::memory_order_release);
    return slot.size != 0;
  };
  const auto check_chunk = [&](chunk& slot) {
    for (std::size_t k = 0; k < slot.size; ++k) {
      slot.results[k] = check_input(slot.inputs[k], settings.opts, context, settings.format);
    }
  };

  progress_line progress(!settings.quiet && (settings.walk.recursive || settings.arguments.size() > 1));
  std::size_t total = 0;
  std::size_t valid = 0;
  std::size_t invalid = 0;
  std::size_t unreadable = 0;
  const auto report = [&](const std::string& name, const checked& result) {
    ++total;
    const bool ok = result.ok();
    if (ok) {
      ++valid;
    } else if (is_io(result.failure())) {
      ++unreadable;
    } else {
      ++invalid;
    }
    if (ok && settings.quiet) return;
    progress.erase();
    if (settings.json) {
      write_out(result.format == file_format::npz  ? verdict_json(name, result.archive)
                : result.format == file_format::ra ? verdict_json(name, result.rawarray)
                                                   : verdict_json(name, result.verdict));
    } else {
      write_out((result.format == file_format::npz  ? verdict_line(name, result.archive)
                 : result.format == file_format::ra ? verdict_line(name, result.rawarray)
                                                    : verdict_line(name, result.verdict)) +
                "\n");
      if (!settings.quiet) write_out(excerpt_lines(result));
    }
  };
  run_ordered<chunk>(
      jobs, window / chunk_size, fill, check_chunk,
      [&](std::size_t, const chunk& slot) {
        for (std::size_t k = 0; k < slot.size; ++k) report(slot.inputs[k].name, slot.results[k]);
      },
      [&](std::size_t) {
        progress.update(total, walked.load(std::memory_order_acquire) ? found.load(std::memory_order_relaxed) : 0);
      },
      [&] { walk.help(); });
  progress.erase();
  std::fflush(stdout);
  if (total > 1 && !settings.quiet) {
    std::string summary =
        std::to_string(total) + " files: " + std::to_string(valid) + " valid, " + std::to_string(invalid) + " invalid";
    if (unreadable != 0) summary += ", " + std::to_string(unreadable) + " unreadable";
    std::fprintf(stderr, "%s\n", summary.c_str());
  }
  if (unreadable != 0) return exit_usage_or_io;
  return invalid != 0 ? exit_invalid : exit_valid;
}

} // namespace npyguard_cli
