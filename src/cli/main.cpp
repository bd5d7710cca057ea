// npyguard: the command-line tool.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "inputs.hpp"
#include "npyguard/npyguard.hpp"
#include "report.hpp"
#include "text.hpp"

namespace {

constexpr int exit_valid = 0;
constexpr int exit_invalid = 1;
constexpr int exit_usage_or_io = 2;

// Bytes of the file shown either side of an error's offset.
constexpr std::size_t excerpt_context = 40;

const char* const exit_status_text =
    "Exit status: 0 every file valid; 1 some file invalid; 2 a usage error, or a file or\n"
    "directory that cannot be opened or read (2 wins over 1).";

void write_out(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

bool is_io(const npyguard::result& verdict) {
  return !verdict.ok() && (verdict.failure().code == npyguard::error_code::io_error ||
                           verdict.failure().code == npyguard::error_code::out_of_memory);
}

// Numbers are plain decimals: CLI11 would read "050" as octal, "0x10" as
// hex, and wrap "-1" into an unsigned limit of 2^64-1. With `suffixes`, a
// K, M or G after the digits multiplies by 1024, 1024^2 or 1024^3. The
// validator checks the range itself, so no value wraps around when CLI11
// converts it, and leaves the plain decimal value for CLI11 to convert.
CLI::Validator decimal_number(std::uint64_t lowest, std::uint64_t highest, bool suffixes = false) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::string quoted = "'" + text + "'";
        std::string digits = text;
        unsigned shift = 0;
        if (suffixes && !digits.empty()) {
          const char last = digits.back();
          shift = last == 'K' ? 10 : last == 'M' ? 20 : last == 'G' ? 30 : 0;
          if (shift != 0) digits.pop_back();
        }
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
          return quoted + (suffixes ? " is not a decimal number (optionally followed by K, M or G)"
                                    : " is not a decimal number");
        }
        if (digits.size() > 1 && digits[0] == '0') return quoted + " has a leading zero";
        const std::string above = quoted + " is above " + std::to_string(highest);
        std::uint64_t value = 0;
        for (const char digit : digits) {
          const auto d = static_cast<std::uint64_t>(digit - '0');
          if (value > (UINT64_MAX - d) / 10) return above;
          value = value * 10 + d;
        }
        if (shift != 0 && value > (UINT64_MAX >> shift)) return above;
        value <<= shift;
        if (value > highest) return above;
        if (value < lowest) return quoted + " is below " + std::to_string(lowest);
        text = std::to_string(value);
        return {};
      },
      ""); // the options' type names say what the number is
}

// The acceptance policy, shared by the commands that validate.
void add_policy_options(CLI::App& command, npyguard::options& opts) {
  command.add_flag("--allow-object", opts.allow_object,
                   "Accept object ('O') dtypes; the pickle is never read, data-size checks are skipped");
  command.add_flag("--allow-trailing-data", opts.allow_trailing_data, "Accept bytes after the array data");
  command
      .add_option("--max-header-bytes", opts.limits.max_header_bytes,
                  "Largest accepted HEADER_LEN, up to 4294967295 (suffixes K, M, G: times 1024, 1024^2, 1024^3)")
      ->default_val(opts.limits.max_header_bytes)
      ->transform(decimal_number(0, UINT32_MAX, true))
      ->type_name("BYTES");
  command
      .add_option("--max-depth", opts.limits.max_depth,
                  "Deepest nesting of lists and tuples (at most 199, Python's own limit inside the dict)")
      ->default_val(opts.limits.max_depth)
      ->transform(decimal_number(0, npyguard::hard_max_depth))
      ->type_name("N");
  command.add_option("--max-ndim", opts.limits.max_ndim, "Most dimensions in the shape")
      ->default_val(opts.limits.max_ndim)
      ->transform(decimal_number(0, UINT32_MAX))
      ->type_name("N");
  command
      .add_option("--max-data-bytes", opts.limits.max_data_bytes,
                  "Largest accepted array size in bytes (default: no limit; suffixes K, M, G)")
      ->transform(decimal_number(0, UINT64_MAX, true))
      ->type_name("BYTES");
}

// options::timeout_ms holds milliseconds in 32 bits.
constexpr std::uint32_t max_timeout_seconds = UINT32_MAX / 1000;

// --timeout: for check and inspect, whose inputs may be FIFOs and devices.
void add_timeout_option(CLI::App& command, std::uint32_t& seconds) {
  command
      .add_option("--timeout", seconds,
                  "Longest wait in seconds for a FIFO, socket or device named as FILE, or for standard input, then "
                  "io_error (default and 0: no limit)")
      ->transform(decimal_number(0, max_timeout_seconds))
      ->type_name("SECONDS");
}

// Usage errors: one line on standard error, "npyguard: WHAT; run 'npyguard
// [COMMAND] --help'", escaped like every other text the command prints (an
// argument may be any bytes).
int usage_error(const std::string& what, const std::string& command) {
  const std::string help = command.empty() ? "npyguard --help" : "npyguard " + command + " --help";
  std::fprintf(stderr, "npyguard: %s; run '%s'\n", npyguard_cli::escaped(what, npyguard_cli::shown_as::name).c_str(),
               help.c_str());
  return exit_usage_or_io;
}

struct check_settings {
  npyguard::options opts;
  bool json = false;
  bool quiet = false;
  unsigned jobs = 0; // 0: the number of cores
  npyguard_cli::walk_options walk;
  std::vector<std::string> arguments;
  std::uint32_t timeout_seconds = 0;
};

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

// Checks every input on `jobs` threads and prints the results in input
// order as soon as each one's turn comes. Inputs go to the workers in
// chunks, so the lock is taken once per chunk, and the workers stay at most
// `window` inputs ahead of the output: memory does not grow with the number
// of files when standard output is slow.
constexpr std::size_t chunk_size = 32;
constexpr std::size_t window = 1024;

int run_check(const check_settings& settings) {
  const std::vector<npyguard_cli::input> inputs = npyguard_cli::expand(settings.arguments, settings.walk);
  const std::size_t total = inputs.size();
  const std::size_t chunks = (total + chunk_size - 1) / chunk_size;
  unsigned jobs = settings.jobs != 0 ? settings.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(chunks, 1)));
  // The excerpt needs a second read of an invalid file; -q and --json never show it.
  const std::size_t context = settings.quiet || settings.json ? 0 : excerpt_context;
  const auto check_chunk = [&](std::size_t c) {
    std::vector<npyguard_cli::checked> out;
    const std::size_t end = std::min(total, (c + 1) * chunk_size);
    out.reserve(end - c * chunk_size);
    for (std::size_t i = c * chunk_size; i < end; ++i) {
      out.push_back(npyguard_cli::check_input(inputs[i], settings.opts, context));
    }
    return out;
  };

  std::vector<std::vector<npyguard_cli::checked>> results(chunks);
  std::vector<char> done(chunks, 0);
  std::mutex lock;
  std::condition_variable ready; // a chunk the output waits for arrived
  std::condition_variable room;  // the output moved on
  bool output_waiting = false;
  std::size_t printed = 0; // chunks
  std::atomic<std::size_t> next_chunk{0};
  const auto work = [&] {
    for (std::size_t c; (c = next_chunk.fetch_add(1)) < chunks;) {
      {
        std::unique_lock<std::mutex> guard(lock);
        room.wait(guard, [&] { return c < printed + window / chunk_size; });
      }
      std::vector<npyguard_cli::checked> checked = check_chunk(c);
      bool wake = false;
      {
        const std::lock_guard<std::mutex> guard(lock);
        results[c] = std::move(checked);
        done[c] = 1;
        wake = output_waiting;
      }
      if (wake) ready.notify_one();
    }
  };
  // -j 1 uses no thread: each chunk is checked just before it is printed.
  std::vector<std::thread> workers;
  if (jobs > 1) {
    for (unsigned t = 0; t < jobs; ++t) workers.emplace_back(work);
  }

  progress_line progress(!settings.quiet && total > 1);
  std::size_t valid = 0;
  std::size_t invalid = 0;
  std::size_t unreadable = 0;
  const auto report = [&](std::size_t i, const npyguard_cli::checked& result) {
    const npyguard::result& verdict = result.verdict;
    if (verdict.ok()) {
      ++valid;
    } else if (is_io(verdict)) {
      ++unreadable;
    } else {
      ++invalid;
    }
    if (verdict.ok() && settings.quiet) return;
    progress.erase();
    const std::string& name = inputs[i].name;
    if (settings.json) {
      write_out(npyguard_cli::verdict_json(name, verdict));
    } else {
      write_out(npyguard_cli::verdict_line(name, verdict) + "\n");
      if (!settings.quiet) write_out(npyguard_cli::excerpt_lines(result));
    }
  };
  for (std::size_t c = 0; c < chunks; ++c) {
    std::vector<npyguard_cli::checked> checked;
    if (workers.empty()) {
      progress.update(c * chunk_size, total);
      checked = check_chunk(c);
    } else {
      std::unique_lock<std::mutex> guard(lock);
      while (!done[c]) {
        output_waiting = true;
        ready.wait_for(guard, std::chrono::milliseconds(100));
        output_waiting = false;
        if (!done[c]) {
          guard.unlock();
          progress.update(c * chunk_size, total);
          guard.lock();
        }
      }
      checked = std::move(results[c]);
      printed = c + 1;
      guard.unlock();
      room.notify_all();
    }
    for (std::size_t k = 0; k < checked.size(); ++k) report(c * chunk_size + k, checked[k]);
  }
  for (std::thread& worker : workers) worker.join();
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

int run_inspect(const std::string& file, const npyguard::options& opts, bool json) {
  const npyguard_cli::input item{file, file == "-", {}};
  const npyguard_cli::checked result = npyguard_cli::check_input(item, opts, json ? 0 : excerpt_context);
  if (json) {
    // Streamed: the dtype tree of a large header is never held as a whole.
    npyguard_cli::write_inspect_json(stdout, file, result.verdict);
  } else if (const npyguard::header* model = result.verdict.value_if()) {
    write_out(npyguard_cli::inspect_text(file, *model));
  } else {
    write_out(npyguard_cli::verdict_line(file, result.verdict) + "\n" + npyguard_cli::excerpt_lines(result));
  }
  if (result.verdict.ok()) return exit_valid;
  return is_io(result.verdict) ? exit_usage_or_io : exit_invalid;
}

int run_canon(const std::string& input, const std::string& output, const npyguard::options& opts) {
  const npyguard::result written = npyguard::canonicalize_file(input.c_str(), output.c_str(), opts);
  if (written.ok()) return exit_valid;
  std::fprintf(stderr, "npyguard canon: %s\n", npyguard_cli::verdict_line(input, written).c_str());
  return is_io(written) ? exit_usage_or_io : exit_invalid;
}

} // namespace

namespace {

int run(int argc, char** argv) {
  // Output goes through one large buffer: thousands of result lines cost a
  // few write(2) calls.
  static char output_buffer[1 << 16];
  std::setvbuf(stdout, output_buffer, _IOFBF, sizeof output_buffer);

  CLI::App app{
      "npyguard: decide whether NumPy .npy files are well formed, from the header and the file size\n"
      "alone, before anything reads the data.",
      "npyguard"};
  app.set_version_flag("--version", std::string("npyguard ") + npyguard::version());
  app.require_subcommand(1);
  app.footer(std::string("Run 'npyguard COMMAND --help' for a command's options; the manual is npyguard(1).\n") +
             exit_status_text);

  check_settings settings;
  CLI::App* check = app.add_subcommand("check", "Validate .npy files against the npyguard acceptance policy");
  check->add_flag("--json", settings.json,
                  "One JSON object per line per file: file (file_bytes too when the name is not UTF-8), valid, and "
                  "version, shape, fortran_order, descr (numpy's repr of dtype_to_descr), dtype (numpy's dtype.str, "
                  "null for a struct), kind (numpy's dtype.kind), itemsize, header_length, data_offset, "
                  "data_alignment, count, nbytes, data_is_pickle; or error {code, offset, message}");
  check->add_flag("-q,--quiet", settings.quiet,
                  "Print only invalid and unreadable files, without the excerpt; no summary, no progress");
  check->add_flag("-r,--recursive", settings.walk.recursive,
                  "Check the files in directories, recursively: regular *.npy files, in sorted order; symbolic "
                  "links inside directories are not followed");
  CLI::Option* recursive = check->get_option("--recursive");
  check->add_flag("--all-files", settings.walk.all_files, "With -r: every regular file, not only *.npy")
      ->needs(recursive);
  check->add_option("-j,--jobs", settings.jobs, "Files checked in parallel, 1 to 1024 (default: the number of cores)")
      ->transform(decimal_number(1, 1024))
      ->type_name("N");
  add_policy_options(*check, settings.opts);
  add_timeout_option(*check, settings.timeout_seconds);
  check->add_flag("--canonical", settings.opts.canonical,
                  "Also require the exact header bytes numpy's np.save writes (error not_canonical at the first "
                  "byte that differs)");
  check->add_option("FILE", settings.arguments, "Files or (with -r) directories to check; '-' reads standard input")
      ->required();
  check->footer(
      "Output, in the order of the arguments: 'FILE: ok, version ..., descr ..., shape ..., nbytes N' or\n"
      "'FILE:OFFSET: CODE: message' (OFFSET is a 0-based byte offset into the file), followed by the\n"
      "header line around OFFSET with a caret under the byte (bytes that are not printable ASCII are\n"
      "shown as \\xNN). In names, \\xNN is a control byte or a byte that is not UTF-8, and \\uNNNN a C1 or\n"
      "bidirectional control character. A summary 'N files: V valid, I invalid' goes to standard error\n"
      "when more than one file was checked, and a progress line too when it is a terminal and the run\n"
      "is long (neither with -q).\n" +
      std::string(exit_status_text));

  CLI::App* inspect = app.add_subcommand("inspect", "Show everything the header says about one .npy file");
  std::string inspect_file;
  bool inspect_json = false;
  inspect->add_flag("--json", inspect_json,
                    "One JSON object: the keys of check --json, except that dtype is the dtype tree: {kind, "
                    "itemsize, and type (numpy's dtype.str), byte_order, unit, multiplier; or fields: [{name, title, "
                    "offset, itemsize, subarray_shape, dtype}]}");
  npyguard::options inspect_opts;
  std::uint32_t inspect_timeout_seconds = 0;
  add_policy_options(*inspect, inspect_opts);
  add_timeout_option(*inspect, inspect_timeout_seconds);
  inspect->add_flag("--canonical", inspect_opts.canonical, "Apply the canonical profile too");
  inspect->add_option("FILE", inspect_file, "The file; '-' reads standard input")->required();
  inspect->footer(
      "Prints the format version, header length, data offset and its alignment, fortran order, shape,\n"
      "element count, itemsize, nbytes, numpy's descr, and the dtype as an indented tree: fields with\n"
      "names, titles, offsets, sizes, subarray shapes, byte order and datetime units, and padding.\n"
      "An invalid file is reported as by check.\n"
      "Exit status: 0 valid; 1 invalid; 2 usage error or unreadable file.");

  npyguard::options canon_opts;
  CLI::App* canon =
      app.add_subcommand("canon", "Write a copy of a valid .npy file with the header numpy's np.save would write");
  std::string canon_input;
  std::string canon_output;
  add_policy_options(*canon, canon_opts);
  canon->add_option("IN", canon_input, "The file to copy (a regular file)")->required();
  canon->add_option("OUT", canon_output, "Where to write the copy (never IN itself)")->required();
  canon->footer(
      "IN is validated first (with the options above); the copy has the canonical header and the same data\n"
      "bytes, copied in 1 MiB chunks. Bytes after the data are dropped (they are only accepted with\n"
      "--allow-trailing-data); a pickle is copied as it is. OUT appears only when complete: the copy is\n"
      "written to a new file in OUT's directory, flushed and renamed over OUT, so on any error OUT is\n"
      "untouched and nothing partial is left.\n"
      "OUT, if it exists, must be a regular file: a link, directory, device or FIFO is never replaced.\n"
      "Errors go to standard error as 'npyguard canon: IN:OFFSET: CODE: message'.\n"
      "Exit status: 0 written, 1 IN is invalid, 2 usage error or I/O error (IN unreadable or not a\n"
      "regular file, OUT is IN or not a regular file, OUT cannot be written).");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) { // --help, --version
      app.exit(e);
      return exit_valid;
    }
    // The command is the first argument: npyguard itself has no option
    // that takes a value.
    const std::string first = argc > 1 ? argv[1] : "";
    for (const CLI::App* command : {check, inspect, canon}) {
      if (command->parsed() || first == command->get_name()) return usage_error(e.what(), command->get_name());
    }
    if (first.empty() || first == "--") return usage_error("a command is required (check, inspect or canon)", {});
    if (first[0] == '-') {
      return usage_error("'" + first + "' is not an option of npyguard itself (a command comes first)", {});
    }
    return usage_error("'" + first + "' is not a command (check, inspect or canon)", {});
  }

  if (canon->parsed()) {
    if (canon_input == "-" || canon_output == "-") {
      return usage_error("IN and OUT must be files: '-' (standard input or output) is not accepted", "canon");
    }
    return run_canon(canon_input, canon_output, canon_opts);
  }
  if (inspect->parsed()) {
    inspect_opts.timeout_ms = inspect_timeout_seconds * 1000u;
    return run_inspect(inspect_file, inspect_opts, inspect_json);
  }
  settings.opts.timeout_ms = settings.timeout_seconds * 1000u;
  return run_check(settings);
}

} // namespace

int main(int argc, char** argv) {
  // Nothing the command calls should throw past here (the library never
  // throws; CLI11's parse errors are handled in run()); if something does,
  // it is a bug, reported as such with the usage-or-I/O status.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "npyguard: internal error: %s\n", e.what());
    return exit_usage_or_io;
  }
}
