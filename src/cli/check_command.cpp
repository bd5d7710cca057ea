// npyguard check: many files, in argument order, in parallel.
#include <unistd.h>

#include <algorithm>
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

// "checked 1234 of 5000 files" on standard error, when it is a terminal and
// the run has taken more than a second; erased before any output line.
class progress_line {
public:
  explicit progress_line(bool enabled) : enabled_(enabled && ::isatty(2) == 1) {}

  void update(std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || (shown_ && now - last_ < std::chrono::milliseconds(200))) return;
    std::fprintf(stderr, "\rchecked %zu of %zu files\033[K", done, total);
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

// Every input is checked on `jobs` threads and printed in input order as
// soon as its turn comes (run_ordered). Inputs go to the workers in chunks,
// so the lock is taken once per chunk, and the workers stay at most
// `window` inputs ahead of the output: memory does not grow with the number
// of files when standard output is slow.
constexpr std::size_t chunk_size = 32;
constexpr std::size_t window = 1024;

} // namespace

int run_check(const check_settings& settings) {
  const std::vector<input> inputs = expand(settings.arguments, settings.walk);
  const std::size_t total = inputs.size();
  const std::size_t chunks = (total + chunk_size - 1) / chunk_size;
  unsigned jobs = settings.jobs != 0 ? settings.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(chunks, 1)));
  // The excerpt needs a second read of an invalid file; -q and --json never show it.
  const std::size_t context = settings.quiet || settings.json ? 0 : excerpt_context;
  const auto check_chunk = [&](std::size_t c) {
    std::vector<checked> out;
    const std::size_t end = std::min(total, (c + 1) * chunk_size);
    out.reserve(end - c * chunk_size);
    for (std::size_t i = c * chunk_size; i < end; ++i) {
      out.push_back(check_input(inputs[i], settings.opts, context, settings.format));
    }
    return out;
  };

  progress_line progress(!settings.quiet && total > 1);
  std::size_t valid = 0;
  std::size_t invalid = 0;
  std::size_t unreadable = 0;
  const auto report = [&](std::size_t i, const checked& result) {
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
    const std::string& name = inputs[i].name;
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
  run_ordered<std::vector<checked>>(
      chunks, jobs, window / chunk_size, check_chunk,
      [&](std::size_t c, const std::vector<checked>& results) {
        for (std::size_t k = 0; k < results.size(); ++k) report(c * chunk_size + k, results[k]);
      },
      [&](std::size_t c) { progress.update(c * chunk_size, total); });
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
