// The npyguard command itself: exit codes, the human format, and --json
// reporting exactly what numpy 1.24 read from the golden files.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

// The command's JSON writer (header-only), compared with nlohmann::json.
#include "../src/cli/json_writer.hpp"
#include "cli_support.hpp"
#include "zip_builder.hpp"

namespace {

struct run_result {
  int status = -1;
  std::string output;
};

std::string shell_quoted(const std::string& argument) {
  std::string out = "'";
  for (char c : argument) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

run_result run(const std::vector<std::string>& arguments) {
  std::string command = shell_quoted(NPYGUARD_TOOL_PATH);
  for (const auto& argument : arguments) command += " " + shell_quoted(argument);
  command += " 2>/dev/null";
  run_result result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

const std::string golden = NPYGUARD_SOURCE_DIR "/tests/golden/files/";

// A key of a JSON object, or null when it is absent (operator[] of a const
// object asserts that the key is there).
nlohmann::json key_of(const nlohmann::json& object, const char* key) {
  return object.contains(key) ? object.at(key) : nlohmann::json(nullptr);
}

std::vector<nlohmann::json> expectations() {
  std::ifstream in(NPYGUARD_SOURCE_DIR "/tests/golden/expected.jsonl");
  REQUIRE(in);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  }
  return rows;
}

} // namespace

TEST_CASE("check --json reports exactly what numpy read", "[cli]") {
  for (const bool objects : {false, true}) {
    std::vector<std::string> arguments = {"check", "--json"};
    if (objects) arguments.push_back("--allow-object");
    std::vector<nlohmann::json> expected;
    for (const auto& row : expectations()) {
      if (row["options"].value("allow_object", false) != objects) continue;
      arguments.push_back(golden + row["file"].get<std::string>());
      expected.push_back(row);
    }
    REQUIRE(expected.size() >= (objects ? 2u : 150u));
    const run_result result = run(arguments);
    CHECK(result.status == 0);
    const auto lines = lines_of(result.output);
    REQUIRE(lines.size() == expected.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto got = nlohmann::json::parse(lines[i]);
      const auto& want = expected[i];
      INFO(want["file"].get<std::string>());
      CHECK(got["file"] == golden + want["file"].get<std::string>());
      CHECK(got["valid"] == true);
      for (const char* key :
           {"version", "shape", "fortran_order", "descr", "itemsize", "data_offset", "header_length"}) {
        INFO(key);
        CHECK(got[key] == want[key]);
      }
      // numpy writes dtype.str as the descr of a dtype without fields, and
      // a list for a struct, whose dtype.kind is 'V'.
      const std::string descr = want["descr"].get<std::string>();
      if (descr.front() == '[') {
        CHECK(key_of(got, "dtype").is_null());
        CHECK(key_of(got, "kind") == "V");
      } else {
        CHECK(key_of(got, "dtype") == descr.substr(1, descr.size() - 2));
        CHECK(key_of(got, "kind") == descr.substr(2, 1));
      }
      if (want.contains("nbytes") && !want["nbytes"].is_null()) {
        CHECK(got["nbytes"] == want["nbytes"]);
      } else {
        CHECK(got["nbytes"].is_null());
        CHECK(got["data_is_pickle"] == true);
      }
    }
  }
}

TEST_CASE("check --json shape of an error", "[cli]") {
  const run_result result = run({"check", "--json", golden + "object_mixed.npy"});
  CHECK(result.status == 1);
  const auto got = nlohmann::json::parse(lines_of(result.output).at(0));
  CHECK(got["valid"] == false);
  CHECK(got["error"]["code"] == "object_dtype");
  CHECK(got["error"]["offset"].is_number_unsigned());
  CHECK(got["error"]["message"].is_string());
  const run_result missing = run({"check", "--json", "/nonexistent/x.npy"});
  CHECK(missing.status == 2);
  const auto io = nlohmann::json::parse(lines_of(missing.output).at(0));
  CHECK(io["error"]["code"] == "io_error");
  CHECK(io["error"]["offset"].is_null());
}

TEST_CASE("exit status and human output", "[cli]") {
  const std::string ok = golden + "scalar_lt_f8.npy";
  const std::string invalid = golden + "object_mixed.npy";
  run_result result = run({"check", ok});
  CHECK(result.status == 0);
  CHECK(result.output.rfind(ok + ": ok, version 1.0, descr '<f8'", 0) == 0);

  result = run({"check", ok, invalid});
  CHECK(result.status == 1);
  const auto lines = lines_of(result.output);
  REQUIRE(lines.size() == 4); // the error, then the header line and its caret
  CHECK(lines[1].rfind(invalid + ":", 0) == 0);
  CHECK(lines[3].find_first_not_of(' ') == lines[3].find('^'));
  CHECK(lines[1].find(": object_dtype: ") != std::string::npos);

  CHECK(run({"check", "--allow-object", ok, invalid}).status == 0);
  CHECK(run({"check", ok, invalid, "/nonexistent/x.npy"}).status == 2); // unreadable wins
  CHECK(run({"check"}).status == 2);                                    // no FILE
  CHECK(run({"check", "--no-such-option", ok}).status == 2);
  CHECK(run({"check", "--max-depth", "abc", ok}).status == 2);
  CHECK(run({}).status == 2); // no command
  CHECK(run({"--help"}).status == 0);
  CHECK(run({"check", "--help"}).status == 0);
  CHECK(run({"--version"}).status == 0);
  // Limits reach the library.
  CHECK(run({"check", "--max-header-bytes", "64", ok}).status == 1);
  CHECK(run({"check", "--max-data-bytes", "7", ok}).status == 1);
}

namespace {

using npyguard_cli_test::measured_run;
using npyguard_cli_test::run_measured;

// A version 1.0 header for `count` uint8, padded with spaces to a multiple
// of `alignment` (16: legacy writers, no growth spaces; 64: np.save's).
std::string uint8_header(std::uint64_t count, std::size_t alignment) {
  std::string text = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  text.append(alignment - (10 + text.size() + 1) % alignment, ' ');
  text += '\n';
  std::string header = "\x93NUMPY\x01";
  header.push_back('\0');
  header.push_back(static_cast<char>(text.size() & 0xFF));
  header.push_back(static_cast<char>(text.size() >> 8));
  return header + text;
}

// `header` then `count` bytes of zeros, sparse: a descriptor open for writing.
int sparse_file(const std::string& path, const std::string& header, std::uint64_t count) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size()));
  REQUIRE(::ftruncate(fd, static_cast<off_t>(header.size() + count)) == 0);
  return fd;
}

std::string read_range(int fd, std::uint64_t offset, std::size_t size) {
  std::string out(size, '\0');
  REQUIRE(::pread(fd, out.data(), size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size));
  return out;
}

} // namespace

TEST_CASE("canon copies a large file in constant memory", "[cli][canon]") {
  // 300 MiB of uint8 under a legacy header (16-byte alignment, no growth
  // spaces), sparse except for markers at the start, middle and end.
  constexpr std::uint64_t count = 300ull << 20;
  const std::string header = uint8_header(count, 16);

  const std::string input = std::string(P_tmpdir) + "/npyguard_cli_" + std::to_string(::getpid()) + "_big_in.npy";
  const std::string output = std::string(P_tmpdir) + "/npyguard_cli_" + std::to_string(::getpid()) + "_big_out.npy";
  const int fd = sparse_file(input, header, count);
  const std::uint64_t marks[] = {0, count / 2 + 12345, count - 8};
  for (const std::uint64_t mark : marks) {
    REQUIRE(::pwrite(fd, "MARK1234", 8, static_cast<off_t>(header.size() + mark)) == 8);
  }
  ::close(fd);

  const measured_run result = run_measured({"canon", input, output});
  CHECK(result.status == 0);
  INFO("peak RSS " << result.max_rss_kib << " KiB");
  CHECK(result.max_rss_kib < 32 * 1024); // the data is 300 MiB

  const int copy = ::open(output.c_str(), O_RDONLY);
  REQUIRE(copy >= 0);
  struct stat info {};
  REQUIRE(::fstat(copy, &info) == 0);
  const std::uint64_t data_offset = 128; // np.save's: the next multiple of 64 after the header
  CHECK(static_cast<std::uint64_t>(info.st_size) == data_offset + count);
  CHECK(read_range(copy, 0, 10) == std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  for (const std::uint64_t mark : marks) CHECK(read_range(copy, data_offset + mark, 8) == "MARK1234");
  CHECK(read_range(copy, data_offset + 8, 8) == std::string(8, '\0'));
  ::close(copy);
  ::unlink(input.c_str());
  ::unlink(output.c_str());
}

TEST_CASE("canon: exit status and messages", "[cli][canon]") {
  const std::string output = std::string(P_tmpdir) + "/npyguard_cli_" + std::to_string(::getpid()) + "_canon_out.npy";
  ::unlink(output.c_str());
  CHECK(run({"canon", golden + "legacy_py2_long_suffix.npy", output}).status == 0);
  CHECK(run({"check", "--canonical", output}).status == 0);
  CHECK(run({"check", "--canonical", golden + "legacy_py2_long_suffix.npy"}).status == 1);
  const run_result rejected = run({"check", "--canonical", "--json", golden + "legacy_v2_small_header.npy"});
  CHECK(rejected.status == 1);
  const auto report = nlohmann::json::parse(lines_of(rejected.output).at(0));
  CHECK(report["error"]["code"] == "not_canonical");
  CHECK(report["error"]["offset"] == 6);
  ::unlink(output.c_str());
  CHECK(run({"canon", NPYGUARD_SOURCE_DIR "/examples/polyglot.npy", output}).status == 1);
  CHECK(::access(output.c_str(), F_OK) != 0);
  CHECK(run({"canon", golden + "legacy_py2_long_suffix.npy", golden + "legacy_py2_long_suffix.npy"}).status == 2);
  CHECK(run({"canon", golden + "legacy_py2_long_suffix.npy", "/nonexistent-dir/out.npy"}).status == 2);
  CHECK(run({"canon", golden + "legacy_py2_long_suffix.npy"}).status == 2);
}

namespace {

struct full_run {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The tool with standard input a pipe fed from `input_path` (default
// /dev/null), or with `redirected` the file itself (a regular file, which
// the command reads by offset), both outputs captured.
full_run run_full(const std::vector<std::string>& arguments, const std::string& input_path = "/dev/null",
                  bool redirected = false) {
  const std::string base = std::string(P_tmpdir) + "/npyguard_cli_" + std::to_string(::getpid());
  // `timeout` turns a hang into status 124 rather than a stalled suite.
  const std::string tool = "timeout 120 " + shell_quoted(NPYGUARD_TOOL_PATH);
  std::string command = redirected ? tool : "cat " + shell_quoted(input_path) + " | " + tool;
  for (const auto& argument : arguments) command += " " + shell_quoted(argument);
  if (redirected) command += " <" + shell_quoted(input_path);
  command += " >" + shell_quoted(base + ".out") + " 2>" + shell_quoted(base + ".err");
  const int status = std::system(command.c_str());
  full_run result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = slurp(base + ".out");
  result.err = slurp(base + ".err");
  ::unlink((base + ".out").c_str());
  ::unlink((base + ".err").c_str());
  return result;
}

// A directory tree for the walking tests, removed at the end.
class tree {
public:
  tree() {
    std::string pattern = std::string(P_tmpdir) + "/npyguard_tree_XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    root_ = pattern;
  }
  ~tree() { std::system(("rm -rf " + shell_quoted(root_)).c_str()); }
  [[nodiscard]] std::string path(const std::string& relative) const { return root_ + "/" + relative; }
  void copy(const std::string& from, const std::string& relative) const {
    std::ofstream(path(relative), std::ios::binary) << slurp(from);
  }
  void directory(const std::string& relative) const { REQUIRE(::mkdir(path(relative).c_str(), 0755) == 0); }
  [[nodiscard]] const std::string& root() const { return root_; }

private:
  std::string root_;
};

// A version 1.0 file: `dict`, padded to 64 with spaces and '\n', then 24
// zero data bytes.
std::string padded_file(std::string dict) {
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes.push_back('\0');
  bytes.push_back(static_cast<char>(dict.size()));
  bytes.push_back('\0');
  return bytes + dict + std::string(24, '\0');
}

} // namespace

TEST_CASE("check -r walks directories: *.npy regular files, sorted, no symlink loops", "[cli][walk]") {
  tree files;
  const std::string ok = golden + "scalar_lt_f8.npy";
  const std::string bad = golden + "object_mixed.npy";
  files.directory("b");
  files.directory("a");
  files.directory("a/deep");
  files.copy(ok, "b/2.npy");
  files.copy(ok, "a/1.npy");
  files.copy(bad, "a/deep/3.npy");
  files.copy(ok, "a/notes.txt");
  REQUIRE(::symlink("..", files.path("a/deep/loop").c_str()) == 0);        // a directory loop
  REQUIRE(::symlink("../b/2.npy", files.path("a/link.npy").c_str()) == 0); // not followed either

  full_run result = run_full({"check", "-r", "-q", "--json", files.root()});
  CHECK(result.status == 1);
  auto lines = lines_of(result.out);
  REQUIRE(lines.size() == 1);
  CHECK(nlohmann::json::parse(lines[0])["file"] == files.path("a/deep/3.npy"));

  result = run_full({"check", "-r", files.root()});
  lines = lines_of(result.out);
  std::vector<std::string> named;
  for (const auto& line : lines) {
    if (line.rfind("  ", 0) != 0) named.push_back(line.substr(0, line.find(':')));
  }
  CHECK(named == std::vector<std::string>{files.path("a/1.npy"), files.path("a/deep/3.npy"), files.path("b/2.npy")});
  CHECK(result.err == "3 files: 2 valid, 1 invalid\n");

  result = run_full({"check", "-r", "--all-files", "--json", files.root()});
  CHECK(lines_of(result.out).size() == 4); // notes.txt too
  CHECK(result.out.find("notes.txt") != std::string::npos);
  CHECK(result.out.find("link.npy") == std::string::npos);

  // Without -r a directory is a usage problem, reported in order.
  result = run_full({"check", ok, files.root()});
  CHECK(result.status == 2);
  lines = lines_of(result.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1] == files.root() + ": io_error: is a directory (use -r to check the files in it)");
}

TEST_CASE("check -j keeps the order of the arguments", "[cli]") {
  std::vector<std::string> arguments = {"check", "--json", "-j", "4"};
  std::vector<std::string> expected;
  for (const auto& row : expectations()) {
    arguments.push_back(golden + row["file"].get<std::string>());
    expected.push_back(arguments.back());
  }
  std::reverse(arguments.begin() + 4, arguments.end());
  std::reverse(expected.begin(), expected.end());
  for (const char* jobs : {"1", "2", "4", "16"}) {
    arguments[3] = jobs;
    const full_run result = run_full(arguments);
    const auto lines = lines_of(result.out);
    REQUIRE(lines.size() == expected.size());
    for (std::size_t i = 0; i < lines.size(); ++i) CHECK(nlohmann::json::parse(lines[i])["file"] == expected[i]);
    CHECK(result.err.find(std::to_string(expected.size()) + " files: ") == 0);
  }
  CHECK(run_full({"check", "-j", "0", golden + "scalar_lt_f8.npy"}).status == 2);

  // More files than the workers may run ahead of the output (1024).
  std::vector<std::string> many = {"check", "--json", "-j", "3"};
  for (int round = 0; round < 20; ++round) {
    for (const auto& row : expectations()) many.push_back(row["file"].get<std::string>());
    many.push_back("/nonexistent/" + std::to_string(round));
  }
  // Relative names keep the shell's command line short.
  REQUIRE(::chdir(golden.c_str()) == 0);
  const full_run result = run_full(many);
  REQUIRE(::chdir("/") == 0);
  CHECK(result.status == 2);
  const auto lines = lines_of(result.out);
  REQUIRE(lines.size() == many.size() - 4);
  for (std::size_t i = 0; i < lines.size(); ++i) CHECK(nlohmann::json::parse(lines[i])["file"] == many[i + 4]);
}

TEST_CASE("check reads standard input through '-'", "[cli]") {
  const std::string ok = golden + "scalar_lt_f8.npy";
  full_run result = run_full({"check", "-"}, ok);
  CHECK(result.status == 0);
  CHECK(result.out.rfind("-: ok, version 1.0", 0) == 0);
  result = run_full({"check", "--json", "-"}, golden + "object_mixed.npy");
  CHECK(result.status == 1);
  const auto report = nlohmann::json::parse(lines_of(result.out).at(0));
  CHECK(report["error"]["code"] == "object_dtype");
  CHECK(report["error"]["offset"] == 20);
  // '--' ends the options: a file named like an option.
  tree files;
  files.copy(ok, "-q");
  result = run_full({"check", "--", files.path("-q")});
  CHECK(result.status == 0);
  const std::string cwd_relative = "-q";
  CHECK(::chdir(files.root().c_str()) == 0);
  result = run_full({"check", "--", cwd_relative});
  CHECK(result.status == 0);
  CHECK(result.out.rfind("-q: ok", 0) == 0);
  CHECK(::chdir("/") == 0);
}

TEST_CASE("errors are shown like a compiler's, with a caret under the byte", "[cli]") {
  tree files;
  // A raw ESC in the header: escaped in the excerpt, caret under its escape.
  std::string bytes = padded_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  bytes[10 + 16] = '\x1b'; // between two items (inside a string it would be part of a name)
  std::ofstream(files.path("esc.npy"), std::ios::binary) << bytes;

  full_run result = run_full({"check", files.path("esc.npy")});
  CHECK(result.status == 1);
  const auto lines = lines_of(result.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind(files.path("esc.npy") + ":26: control_character: ", 0) == 0);
  CHECK(lines[1].rfind("  \\x93NUMPY\\x01\\x00", 0) == 0);
  CHECK(lines[1].find('\x1b') == std::string::npos);
  const std::size_t caret = lines[2].find('^');
  REQUIRE(caret != std::string::npos);
  CHECK(lines[2].find_first_not_of(' ') == caret);
  CHECK(lines[1].compare(caret, 4, "\\x1b") == 0);

  // -q and --json: no excerpt.
  CHECK(lines_of(run_full({"check", "-q", files.path("esc.npy")}).out).size() == 1);
  CHECK(lines_of(run_full({"check", "--json", files.path("esc.npy")}).out).size() == 1);
  // A data-size error points past the header: no excerpt.
  CHECK(lines_of(run_full({"check", NPYGUARD_SOURCE_DIR "/examples/polyglot.npy"}).out).size() == 1);
}

TEST_CASE("inspect shows the model and the dtype tree", "[cli][inspect]") {
  const std::string structured = NPYGUARD_SOURCE_DIR "/examples/structured.npy";
  full_run result = run_full({"inspect", structured});
  CHECK(result.status == 0);
  CHECK(result.out.find("  shape           (2,)\n") != std::string::npos);
  CHECK(result.out.find("  dtype           struct of 3 fields, 36 bytes\n") != std::string::npos);
  CHECK(result.out.find("    'pos' at offset 4, 24 bytes: subarray (3,) of <f8, floating point, little-endian\n") !=
        std::string::npos);

  result = run_full({"inspect", "--json", structured});
  CHECK(result.status == 0);
  const auto model = nlohmann::json::parse(result.out);
  CHECK(model["valid"] == true);
  CHECK(model["nbytes"] == 72);
  CHECK(model["dtype"]["kind"] == "struct");
  CHECK(model["dtype"]["itemsize"] == 36);
  REQUIRE(model["dtype"]["fields"].size() == 3);
  const auto& pos = model["dtype"]["fields"][1];
  CHECK(pos["name"] == "pos");
  CHECK(pos["offset"] == 4);
  CHECK(pos["itemsize"] == 24);
  CHECK(pos["subarray_shape"] == nlohmann::json::array({3}));
  CHECK(pos["dtype"]["type"] == "<f8");
  CHECK(pos["dtype"]["byte_order"] == "little");

  const auto datetime = nlohmann::json::parse(run_full({"inspect", "--json", golden + "datetime_be_M8_10ms.npy"}).out);
  CHECK(datetime["dtype"]["unit"] == "ms");
  CHECK(datetime["dtype"]["multiplier"] == 10);
  CHECK(datetime["dtype"]["byte_order"] == "big");

  result = run_full({"inspect", golden + "object_mixed.npy"});
  CHECK(result.status == 1);
  CHECK(lines_of(result.out).size() == 3); // the error line and the excerpt
  CHECK(run_full({"inspect", "/nonexistent.npy"}).status == 2);
  CHECK(run_full({"inspect", structured, structured}).status == 2);
}

TEST_CASE("--help and --version answer", "[cli]") {
  full_run result = run_full({"--version"});
  CHECK(result.status == 0);
  CHECK(result.out == "npyguard 0.1.0\n");
  for (const char* command : {"check", "inspect", "canon"}) {
    INFO(command);
    result = run_full({command, "--help"});
    CHECK(result.status == 0);
    CHECK(result.out.find("Exit status") != std::string::npos);
  }
  result = run_full({"--help"});
  CHECK(result.status == 0);
  for (const char* command : {"check", "inspect", "canon"}) CHECK(result.out.find(command) != std::string::npos);
  CHECK(run_full({"frobnicate"}).status == 2);
}

TEST_CASE("numbers are plain decimals, and options that need another say so", "[cli]") {
  const std::string ok = golden + "scalar_lt_f8.npy";
  for (const char* bad : {"-1", "050", "0x10", "1e3", "18446744073709551616", ""}) {
    INFO(bad);
    CHECK(run_full({"check", "--max-data-bytes", bad, ok}).status == 2);
    CHECK(run_full({"check", "--max-depth", bad, ok}).status == 2);
    CHECK(run_full({"check", "-j", bad, ok}).status == 2);
  }
  CHECK(run_full({"check", "--max-data-bytes", "18446744073709551615", ok}).status == 0);
  CHECK(run_full({"check", "--max-data-bytes", "23", ok}).status == 1); // 24 data bytes
  CHECK(run_full({"check", "--max-depth", "50", ok}).status == 0);
  CHECK(run_full({"check", "--all-files", ok}).status == 2); // needs -r
}

namespace {

// The names in `directory` that start with ".npyguard-" (temporary files).
std::vector<std::string> temporaries_in(const std::string& directory) {
  std::vector<std::string> found;
  if (DIR* listing = ::opendir(directory.c_str())) {
    while (const dirent* entry = ::readdir(listing)) {
      if (std::string(entry->d_name).rfind(".npyguard-", 0) == 0) found.emplace_back(entry->d_name);
    }
    ::closedir(listing);
  }
  return found;
}

} // namespace

TEST_CASE("canon interrupted by SIGINT, SIGTERM or SIGHUP leaves no temporary file", "[cli][canon]") {
  // 2 GiB of uint8, sparse: canon is still writing when the signal comes.
  tree files;
  constexpr std::uint64_t count = 2ull << 30;
  const std::string header = uint8_header(count, 64);
  const std::string input = files.path("big.npy");
  ::close(sparse_file(input, header, count));
  REQUIRE(::mkdir(files.path("out").c_str(), 0755) == 0);
  const std::string directory = files.path("out");

  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    INFO("signal " << signal_number);
    std::string tool = NPYGUARD_TOOL_PATH;
    std::string command = "canon";
    std::string output = directory + "/copy.npy";
    std::string input_copy = input;
    char* argv[] = {tool.data(), command.data(), input_copy.data(), output.data(), nullptr};
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // As a shell starts a foreground command: the default dispositions.
      for (const int reset : {SIGINT, SIGTERM, SIGHUP}) ::signal(reset, SIG_DFL);
      ::execv(argv[0], argv);
      _exit(127);
    }
    bool seen = false;
    for (int wait = 0; wait < 20000 && !seen; ++wait) { // at most 20 s
      seen = !temporaries_in(directory).empty();
      if (!seen) ::usleep(1000);
    }
    CHECK(seen);
    ::kill(child, signal_number);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    // REQUIRE: a file left behind would make the next signal's wait end at once.
    REQUIRE(temporaries_in(directory).empty());
    CHECK(::access(output.c_str(), F_OK) != 0);
  }
}

TEST_CASE("canon never replaces anything but a regular file, and reads no pipe", "[cli][canon]") {
  tree files;
  const std::string ok = golden + "legacy_v2_small_header.npy";
  REQUIRE(::mkfifo(files.path("fifo").c_str(), 0600) == 0);
  full_run result = run_full({"canon", ok, files.path("fifo")});
  CHECK(result.status == 2);
  CHECK(result.err.find("is not a regular file") != std::string::npos);
  struct stat info {};
  REQUIRE(::lstat(files.path("fifo").c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));
  CHECK(run_full({"canon", "-", files.path("out.npy")}, ok).status == 2);
  CHECK(run_full({"canon", ok, "-"}).status == 2);
  CHECK(::access(files.path("out.npy").c_str(), F_OK) != 0);
}

TEST_CASE("canon and convert keep a replaced file's mode; a new file gets 0666 and the umask", "[cli][canon]") {
  tree files;
  const std::string ok = golden + "legacy_v2_small_header.npy";
  const auto mode_of = [&](const std::string& name) {
    struct stat info {};
    REQUIRE(::stat(files.path(name).c_str(), &info) == 0);
    return info.st_mode & 07777;
  };
  std::ofstream(files.path("private.npy"), std::ios::binary) << "old";
  REQUIRE(::chmod(files.path("private.npy").c_str(), 0600) == 0);
  CHECK(run_full({"canon", ok, files.path("private.npy")}).status == 0);
  CHECK(mode_of("private.npy") == 0600);
  std::ofstream(files.path("shared.npy"), std::ios::binary) << "old";
  REQUIRE(::chmod(files.path("shared.npy").c_str(), 0640) == 0);
  CHECK(run_full({"convert", NPYGUARD_SOURCE_DIR "/examples/image.ra", files.path("shared.npy")}).status == 0);
  CHECK(mode_of("shared.npy") == 0640);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK(run_full({"canon", ok, files.path("new.npy")}).status == 0);
  CHECK(mode_of("new.npy") == (0666 & ~mask));
}

TEST_CASE("an error at the data offset shows the end of the header line", "[cli]") {
  tree files;
  const std::string bytes = padded_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)");
  std::ofstream(files.path("open.npy"), std::ios::binary) << bytes;
  const full_run result = run_full({"check", files.path("open.npy")});
  CHECK(result.status == 1);
  const auto lines = lines_of(result.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find(":128: syntax_error: ") != std::string::npos);
  CHECK(lines[1].size() >= 2);
  CHECK(lines[1].compare(lines[1].size() - 2, 2, "\\n") == 0); // the header's own '\n', no data bytes
  CHECK(lines[1].find("\\x00") == std::string::npos);
  CHECK(lines[2].find('^') == lines[1].size());
}

TEST_CASE("the manual page names every option --help lists", "[cli]") {
  const std::string manual = slurp(NPYGUARD_SOURCE_DIR "/man/npyguard.1");
  REQUIRE(manual.find(".TH NPYGUARD 1") != std::string::npos);
  std::size_t options_seen = 0;
  for (const char* command : {"check", "inspect", "canon", "convert"}) {
    const std::string help = run_full({command, "--help"}).out;
    for (std::size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
      std::size_t end = at + 2;
      while (end < help.size() && (std::isalnum(static_cast<unsigned char>(help[end])) || help[end] == '-')) ++end;
      if (end == at + 2) continue; // "--" itself
      std::string roff;            // the option as roff spells it: every '-' escaped
      for (std::size_t i = at; i < end; ++i) roff += help[i] == '-' ? std::string("\\-") : std::string(1, help[i]);
      INFO(command << " " << help.substr(at, end - at));
      CHECK(manual.find(roff) != std::string::npos);
      ++options_seen;
    }
  }
  CHECK(options_seen >= 20);
}

// ---------------------------------------------------------------------------
// Issue 11, items 7-12: streaming JSON, escaping, names that are not UTF-8,
// flags in messages, dtype.str and dtype.kind, usage errors, special files.

namespace {

// A file of any version: the preamble, `dict` padded with spaces to a
// multiple of 64 and '\n', then `data` zero bytes.
std::string npy_file(std::string dict, int major, std::size_t data = 0) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  dict.append(64 - (preamble + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string bytes = "\x93NUMPY";
  bytes.push_back(static_cast<char>(major));
  bytes.push_back('\0');
  for (std::size_t i = 0; i < preamble - 8; ++i) bytes.push_back(static_cast<char>((dict.size() >> (8 * i)) & 0xFF));
  return bytes + dict + std::string(data, '\0');
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// What a terminal may be given: valid UTF-8 without C0 controls (but the
// newline ending a line), DEL, C1 controls or bidi controls.
bool terminal_safe(const std::string& text) {
  for (std::size_t at = 0; at < text.size();) {
    const npyguard_cli::utf8_step step = npyguard_cli::next_utf8(text, at);
    if (!step.valid) return false;
    const char32_t c = step.code_point;
    if ((c < 0x20 && c != '\n') || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
        (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069)) {
      return false;
    }
    at += step.length;
  }
  return true;
}

// A JSON string of base64, decoded ("" when it is not a string).
std::string base64_decoded(const nlohmann::json& value) {
  if (!value.is_string()) return {};
  const std::string text = value.get<std::string>();
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    if (c == '=') break;
    const std::size_t digit = alphabet.find(c);
    REQUIRE(digit != std::string::npos);
    bits = (bits << 6) | static_cast<std::uint32_t>(digit);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

// The tool in a child whose address space is limited to `limit` bytes,
// standard output to `out_path`. RLIMIT_AS, unlike the peak RSS a parent
// sees (which includes the pages the child shared with it before exec),
// counts the tool alone.
int run_limited(const std::vector<std::string>& arguments, const std::string& out_path, rlim_t limit) {
  std::vector<std::string> copies = arguments;
  std::string tool = NPYGUARD_TOOL_PATH;
  std::vector<char*> argv{tool.data()};
  for (auto& argument : copies) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const rlimit bound{limit, limit};
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_WRONLY);
    if (out < 0 || null < 0 || ::setrlimit(RLIMIT_AS, &bound) != 0) _exit(126);
    ::dup2(out, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

TEST_CASE("json_writer writes what nlohmann::json dumps", "[cli][json]") {
  // nlohmann's dump, with what json_writer escapes on purpose (DEL, C1 and
  // bidi controls, U+2028 and U+2029: a terminal or a line-oriented reader
  // acts on them) as \uNNNN.
  const auto dumped = [](const nlohmann::json& value) {
    const std::string raw = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    for (std::size_t at = 0; at < raw.size();) {
      const npyguard_cli::utf8_step step = npyguard_cli::next_utf8(raw, at);
      const char32_t c = step.code_point;
      if (step.valid &&
          (c == 0x7F || (c >= 0x80 && (npyguard_cli::acts_on_terminal(c) || c == 0x2028 || c == 0x2029)))) {
        static constexpr char digits[] = "0123456789abcdef";
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += digits[(c >> shift) & 0xF];
      } else {
        out.append(raw, at, step.length);
      }
      at += step.length;
    }
    return out;
  };
  // Strings: every control, quote and backslash, DEL, valid UTF-8 of every
  // length, and bytes that are not UTF-8 (overlong, surrogates, cut off).
  const std::vector<std::string> pieces = {"a",
                                           "\"",
                                           "\\",
                                           "\b",
                                           "\f",
                                           "\n",
                                           "\r",
                                           "\t",
                                           std::string(1, '\0'),
                                           "\x01",
                                           "\x1f",
                                           "\x7f",
                                           "/",
                                           "\xc3\xa9",
                                           "\xe6\x97\xa5",
                                           "\xf0\x9f\x98\x80",
                                           "\xc2\x9b",
                                           "\xe2\x80\xae",
                                           "\xe2\x80\xa8",
                                           "\xe2\x81\xa6",
                                           "\xff",
                                           "\xfe",
                                           "\x80",
                                           "\xc0\xaf",
                                           "\xe0\x80\xaf",
                                           "\xed\xa0\x80",
                                           "\xf4\x90\x80\x80",
                                           "\xf5",
                                           "\xe2\x82",
                                           "\xf0\x9f\x98",
                                           "\xc2"};
  std::mt19937 random(12345);
  for (int round = 0; round < 5000; ++round) {
    std::string text;
    const std::size_t length = random() % 8;
    for (std::size_t i = 0; i < length; ++i) text += pieces[random() % pieces.size()];
    std::string written;
    {
      npyguard_cli::json_writer out(written);
      out.string(text);
    }
    INFO(nlohmann::json(std::vector<unsigned char>(text.begin(), text.end())).dump());
    REQUIRE(written == dumped(nlohmann::json(text)));
  }
  // A document: nesting, numbers, null, booleans, empty containers, keys in
  // the order nlohmann's std::map keeps them.
  nlohmann::json expected;
  expected["a"] = nlohmann::json::array({1, nlohmann::json::object(), nlohmann::json::array(), nullptr});
  expected["b"] = {{"c", 18446744073709551615ull}, {"d", false}, {"e", "x\ny"}};
  expected["c"] = true;
  std::string written;
  {
    npyguard_cli::json_writer out(written);
    out.begin_object();
    out.key("a");
    out.begin_array();
    out.number(1);
    out.begin_object();
    out.end_object();
    out.begin_array();
    out.end_array();
    out.null();
    out.end_array();
    out.key("b");
    out.begin_object();
    out.key("c");
    out.number(18446744073709551615ull);
    out.key("d");
    out.boolean(false);
    out.key("e");
    out.string("x\ny");
    out.end_object();
    out.key("c");
    out.boolean(true);
    out.end_object();
    out.end_line();
  }
  CHECK(written == dumped(expected) + "\n");
}

TEST_CASE("inspect --json of a 1 MiB header needs no more memory than check", "[cli][json]") {
  // 50,000 fields, a 950 KB header (the default max_header_bytes is 1 MiB).
  // nlohmann::json's tree of it took about 90 MB of memory (96 MiB of
  // address space); check --json, which has no tree to write, fits in 24
  // MiB, and the streamed inspect --json must too (48 MiB leaves room for
  // another C library or build type).
  constexpr int fields = 50000;
  std::string dict = "{'descr': [";
  for (int i = 1; i <= fields; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "f%05d", i);
    dict += std::string("('") + name + "', '<i4'), ";
  }
  dict += "], 'fortran_order': False, 'shape': (0,), }";
  REQUIRE(dict.size() > 900000);
  tree files;
  write_bytes(files.path("wide.npy"), npy_file(dict, 2));
  const std::string out = files.path("out.json");
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool sanitized = true; // AddressSanitizer reserves terabytes of address space
#elif defined(__has_feature)
  constexpr bool sanitized = __has_feature(address_sanitizer);
#else
  constexpr bool sanitized = false;
#endif
  const rlim_t limit = sanitized ? RLIM_INFINITY : rlim_t{48} << 20;
  CHECK(run_limited({"check", "--json", files.path("wide.npy")}, out, limit) == 0);
  REQUIRE(run_limited({"inspect", "--json", files.path("wide.npy")}, out, limit) == 0);
  const auto model = nlohmann::json::parse(slurp(out));
  REQUIRE(model["dtype"]["fields"].size() == static_cast<std::size_t>(fields));
  CHECK(model["dtype"]["fields"][fields - 1]["name"] == "f50000");
  CHECK(model["dtype"]["fields"][fields - 1]["offset"] == 4 * (fields - 1));
  CHECK(key_of(model, "kind") == "V");
}

TEST_CASE("no output path lets a control, C1 or bidi character reach the terminal", "[cli][escape]") {
  tree files;
  const std::string ok = golden + "scalar_lt_f8.npy";
  // A raw 0x9B byte (not UTF-8), U+009B (CSI) as UTF-8, U+202E (right-to-
  // left override), ESC and a backslash in a file name.
  const std::string hostile = "n_\x9b_\xc2\x9b_\xe2\x80\xae_\x1b_\\";
  const std::string shown = "n_\\x9b_\\u009b_\\u202e_\\x1b_\\\\";
  files.copy(ok, hostile + ".npy");
  files.copy(golden + "object_mixed.npy", hostile + "bad.npy");

  // check: the verdict lines and the summary.
  full_run result = run_full({"check", files.path(hostile + ".npy"), files.path(hostile + "bad.npy")});
  CHECK(result.status == 1);
  CHECK(terminal_safe(result.out));
  CHECK(terminal_safe(result.err));
  auto lines = lines_of(result.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rfind(files.path(shown + ".npy: ok, "), 0) == 0);
  CHECK(lines[1].rfind(files.path(shown + "bad.npy:20: object_dtype: "), 0) == 0);

  // inspect: the name line, and field names and titles in the tree: the
  // 1.0 header spells them with Python's escapes, which the library
  // decodes (to U+009B, U+202E, ESC).
  write_bytes(files.path(hostile + "fields.npy"),
              npy_file("{'descr': [('\\x9b31mRED', '<i4'), (('\\u202etitle', '\\x1b[2J'), '<i4')], "
                       "'fortran_order': False, 'shape': (1,), }",
                       1, 8));
  result = run_full({"inspect", files.path(hostile + "fields.npy")});
  CHECK(result.status == 0);
  CHECK(terminal_safe(result.out));
  CHECK(result.out.rfind(files.path(shown + "fields.npy\n"), 0) == 0);
  CHECK(result.out.find("    '\\u009b31mRED' at offset 0, 4 bytes: <i4") != std::string::npos);
  CHECK(result.out.find("    '\\x1b[2J' (title '\\u202etitle') at offset 4") != std::string::npos);
  // The descr row and check's descr: numpy's repr, with its own escapes
  // (not doubled).
  CHECK(result.out.find("  descr           [('\\x9b31mRED', '<i4'), (('\\u202etitle', '\\x1b[2J'), '<i4')]\n") !=
        std::string::npos);
  result = run_full({"check", files.path(hostile + "fields.npy")});
  CHECK(terminal_safe(result.out));
  CHECK(result.out.find(", descr [('\\x9b31mRED', '<i4'), (('\\u202etitle', '\\x1b[2J'), '<i4')], shape (1,)") !=
        std::string::npos);

  // The excerpt: every byte that is not printable ASCII as \xNN, also
  // valid UTF-8 (a 3.0 header with U+202E and U+009B raw in a name).
  write_bytes(
      files.path("raw.npy"),
      npy_file("{'descr': [('\xe2\x80\xae\xc2\x9b', '<i4')], 'nope': 1, 'fortran_order': False, 'shape': (1,), }", 3,
               4));
  result = run_full({"check", files.path("raw.npy")});
  CHECK(result.status == 1);
  CHECK(terminal_safe(result.out));
  lines = lines_of(result.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[1].find("('\\xe2\\x80\\xae\\xc2\\x9b', '<i4')") != std::string::npos);
  // ... and inspect's report of an invalid file.
  result = run_full({"inspect", files.path(hostile + "bad.npy")});
  CHECK(result.status == 1);
  CHECK(terminal_safe(result.out));
  CHECK(result.out.rfind(files.path(shown + "bad.npy:20: object_dtype: "), 0) == 0);

  // A message that quotes a name (numpy's repr escapes U+202E too).
  write_bytes(
      files.path("twice.npy"),
      npy_file("{'descr': [('\\u202e', '<i4'), ('\\u202e', '<i4')], 'fortran_order': False, 'shape': (1,), }", 1, 8));
  result = run_full({"check", files.path("twice.npy")});
  CHECK(result.status == 1);
  CHECK(terminal_safe(result.out));
  CHECK(result.out.find(": duplicate_field_name: ") != std::string::npos);

  // canon's error line on standard error.
  result = run_full({"canon", files.path(hostile + "bad.npy"), files.path("out.npy")});
  CHECK(result.status == 1);
  CHECK(terminal_safe(result.err));
  CHECK(result.err.rfind("npyguard canon: " + files.path(shown + "bad.npy:20: object_dtype: "), 0) == 0);

  // Usage errors that echo an argument.
  result = run_full({"check", "--x" + hostile, ok});
  CHECK(result.status == 2);
  CHECK(terminal_safe(result.err));
  CHECK(result.err.find("--x" + shown) != std::string::npos);
  result = run_full({"inspect", ok, hostile});
  CHECK(result.status == 2);
  CHECK(terminal_safe(result.err));
  CHECK(result.err.find(shown) != std::string::npos);
  result = run_full({"check", "--max-depth", hostile, ok});
  CHECK(result.status == 2);
  CHECK(terminal_safe(result.err));
  CHECK(result.err.find("'" + shown + "'") != std::string::npos);
  result = run_full({hostile});
  CHECK(result.status == 2);
  CHECK(terminal_safe(result.err));

  // --json escapes DEL (\u007f) as the text form does (\x7f).
  files.copy(ok, "del_\x7f.npy");
  result = run_full({"check", "--json", files.path("del_\x7f.npy")});
  CHECK(result.status == 0);
  CHECK(terminal_safe(result.out));
  CHECK(result.out.find("del_\\u007f.npy") != std::string::npos);
  CHECK(nlohmann::json::parse(result.out)["file"] == files.path("del_\x7f.npy"));
  result = run_full({"check", files.path("del_\x7f.npy")});
  CHECK(result.out.find("del_\\x7f.npy: ok") != std::string::npos);
}

TEST_CASE("--json keeps names that are not UTF-8 apart: \\xNN in file, the bytes in file_bytes", "[cli][json]") {
  tree files;
  const std::string ok = golden + "scalar_lt_f8.npy";
  files.copy(ok, "bad_\xff\xfe.npy");
  files.copy(ok, "bad_\xff\xfd.npy");
  files.copy(golden + "object_mixed.npy", "bad_\xe2\x82.npy"); // a cut-off UTF-8 sequence
  files.copy(ok, "literal_\\xff.npy");                         // valid UTF-8 that looks like an escape
  files.copy(ok, "\xc3\xa9t\xc3\xa9.npy");

  const std::vector<std::string> names = {"bad_\xff\xfe.npy", "bad_\xff\xfd.npy", "bad_\xe2\x82.npy",
                                          "literal_\\xff.npy", "\xc3\xa9t\xc3\xa9.npy"};
  const std::vector<std::string> shown = {"bad_\\xff\\xfe.npy", "bad_\\xff\\xfd.npy", "bad_\\xe2\\x82.npy",
                                          "literal_\\xff.npy", "\xc3\xa9t\xc3\xa9.npy"};
  std::vector<std::string> arguments = {"check", "--json"};
  for (const auto& name : names) arguments.push_back(files.path(name));
  const full_run result = run_full(arguments);
  CHECK(result.status == 1);
  const auto lines = lines_of(result.out);
  REQUIRE(lines.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(shown[i]);
    const auto report = nlohmann::json::parse(lines[i]);
    CHECK(report["file"] == files.path(shown[i]));
    const bool utf8 = i >= 3;
    CHECK(report.contains("file_bytes") == !utf8);
    if (!utf8) CHECK(base64_decoded(key_of(report, "file_bytes")) == files.path(names[i]));
  }
  CHECK(lines[0].find("\"file\":\"" + files.path("bad_\\\\xff\\\\xfe.npy") + "\"") != std::string::npos);
  CHECK(lines[0] != lines[1]);

  const auto inspected = nlohmann::json::parse(run_full({"inspect", "--json", files.path(names[0])}).out);
  CHECK(inspected["file"] == files.path(shown[0]));
  CHECK(base64_decoded(key_of(inspected, "file_bytes")) == files.path(names[0]));
  CHECK(inspected["valid"] == true);
  const auto failed = nlohmann::json::parse(run_full({"inspect", "--json", files.path(names[2])}).out);
  CHECK(failed["file"] == files.path(shown[2]));
  CHECK(base64_decoded(key_of(failed, "file_bytes")) == files.path(names[2]));
}

TEST_CASE("messages name the command's flags, built from the error's fields", "[cli]") {
  tree files;
  const std::string ok = golden + "scalar_lt_f8.npy";
  const std::string weights = NPYGUARD_SOURCE_DIR "/examples/weights.npz";
  const std::string image = NPYGUARD_SOURCE_DIR "/examples/image.ra";
  struct expectation {
    std::vector<std::string> arguments;
    const char* code;
    const char* flag;
    const char* option;                 // --json's "option": the library's name
    std::optional<std::uint64_t> limit; // and "limit"; "actual" is present with it
  };
  const std::vector<expectation> cases = {
      {{NPYGUARD_SOURCE_DIR "/examples/polyglot.npy"},
       "trailing_data",
       "(--allow-trailing-data)",
       "allow_trailing_data",
       std::nullopt},
      {{golden + "object_mixed.npy"}, "object_dtype", "(--allow-object)", "allow_object", std::nullopt},
      {{"--max-header-bytes", "64", ok},
       "header_too_large",
       "above the limit of 64 (--max-header-bytes)",
       "max_header_bytes",
       64},
      {{"--max-data-bytes", "7", ok}, "data_too_large", "above the limit of 7 (--max-data-bytes)", "max_data_bytes", 7},
      {{"--max-depth", "0", ok}, "depth_exceeded", "(--max-depth)", "max_depth", 0},
      {{"--max-members", "1", weights}, "too_many_members", "(--max-members)", "max_members", 1},
      {{"--max-total-bytes", "100", weights}, "total_size_exceeded", "(--max-total-bytes)", "max_total_bytes", 100},
      {{"--max-ratio", "1", weights}, "ratio_exceeded", "(--max-ratio)", "max_ratio", 1},
      {{"--no-ra-type5", "--ra-reject-metadata", image},
       "trailing_data",
       "(--ra-reject-metadata)",
       "ra_reject_metadata",
       std::nullopt},
      {{"--max-ndim", "1", image}, "too_many_dimensions", "(--max-ndim)", "max_ndim", 1},
      {{"--canonical", golden + "legacy_py2_long_suffix.npy"},
       "not_canonical",
       "(--canonical)",
       "canonical",
       std::nullopt},
  };
  for (const auto& item : cases) {
    INFO(item.code << " " << item.option);
    std::vector<std::string> text = {"check"};
    text.insert(text.end(), item.arguments.begin(), item.arguments.end());
    std::vector<std::string> json = {"check", "--json"};
    json.insert(json.end(), item.arguments.begin(), item.arguments.end());
    const std::string line = lines_of(run_full(text).out).at(0);
    CHECK(line.find(std::string(": ") + item.code + ": ") != std::string::npos);
    CHECK(line.find(item.flag) != std::string::npos);
    const auto report = nlohmann::json::parse(lines_of(run_full(json).out).at(0));
    const auto& error = report["error"];
    CHECK(error["code"] == item.code);
    const std::string message = error["message"].get<std::string>();
    CHECK(message.find(item.flag) != std::string::npos);
    for (const char* library : {"set ", "allow_", "limits.", "max_", "ra_"})
      CHECK(message.find(library) == std::string::npos);
    CHECK(error["option"] == item.option);
    if (item.limit) {
      CHECK(error["limit"] == *item.limit);
      CHECK(error["actual"].is_number_unsigned());
      CHECK(error["actual"].get<std::uint64_t>() > *item.limit);
    } else {
      CHECK(error["limit"].is_null());
      CHECK(error["actual"].is_null());
    }
  }
  // RawArray element type 5 (one bool) under --no-ra-type5.
  std::string type5("rawarray", 8);
  for (const std::uint64_t field : {0u, 5u, 1u, 1u, 1u, 1u}) {
    for (int i = 0; i < 8; ++i) type5.push_back(static_cast<char>((field >> (8 * i)) & 0xFF));
  }
  type5.push_back('\1');
  write_bytes(files.path("bool.ra"), type5);
  const std::string refused = run_full({"check", "--no-ra-type5", files.path("bool.ra")}).out;
  CHECK(refused.find(":16: unknown_element_type: ") != std::string::npos);
  CHECK(refused.find("(--no-ra-type5)") != std::string::npos);
  const auto type5_json =
      nlohmann::json::parse(lines_of(run_full({"check", "--json", "--no-ra-type5", files.path("bool.ra")}).out).at(0));
  CHECK(type5_json["error"]["option"] == "ra_allow_type5");
  CHECK(run_full({"check", files.path("bool.ra")}).status == 0);
  // The numbers of one case in full.
  const auto header = nlohmann::json::parse(run_full({"check", "--json", "--max-header-bytes", "64", ok}).out);
  CHECK(header["error"]["limit"] == 64);
  CHECK(header["error"]["actual"] == 118);
  CHECK(header["error"]["offset"] == 8);
  // An error no option lifts: the keys are there, null.
  write_bytes(files.path("key.npy"),
              padded_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'set allow_object': 1}"));
  const auto report = nlohmann::json::parse(run_full({"check", "--json", files.path("key.npy")}).out);
  CHECK(report["error"]["code"] == "unknown_key");
  CHECK(report["error"]["option"].is_null());
  CHECK(report["error"]["limit"].is_null());
  CHECK(report["error"]["actual"].is_null());
  // A name in the header that looks like an option stays as it is.
  CHECK(report["error"]["message"].get<std::string>().find("'set allow_object'") != std::string::npos);
  // The error object's keys, in order.
  std::vector<std::string> keys;
  for (const auto& entry : report["error"].items()) keys.push_back(entry.key());
  CHECK(keys == std::vector<std::string>{"actual", "code", "limit", "message", "offset", "option"});
}

TEST_CASE("--json gives numpy's dtype.str and dtype.kind; inspect keeps dtype as the tree", "[cli][json]") {
  tree files;
  // Type strings numpy reads but spells differently, and what numpy 1.24's
  // np.dtype(...).str and .kind say for them.
  struct expectation {
    const char* descr;
    const char* str; // nullptr: a struct
    const char* kind;
  };
  const std::vector<expectation> cases = {
      {"'<b1'", "|b1", "b"},         {"'>i1'", "|i1", "i"},
      {"'<u1'", "|u1", "u"},         {"'>i8'", ">i8", "i"},
      {"'<u2'", "<u2", "u"},         {"'<f2'", "<f2", "f"},
      {"'>c16'", ">c16", "c"},       {"'<S3'", "|S3", "S"},
      {"'>V2'", "|V2", "V"},         {"'<U5'", "<U5", "U"},
      {"'>U0'", ">U0", "U"},         {"'|O8'", "|O", "O"},
      {"'<M8'", "<M8", "M"},         {"'>M8[10ms]'", ">M8[10ms]", "M"},
      {"'<m8[3D]'", "<m8[3D]", "m"}, {"[('a', '<i4')]", nullptr, "V"},
      {"[]", nullptr, "V"},
  };
  for (const auto& item : cases) {
    INFO(item.descr);
    write_bytes(files.path("t.npy"),
                npy_file(std::string("{'descr': ") + item.descr + ", 'fortran_order': False, 'shape': (0,), }", 1));
    const auto checked =
        nlohmann::json::parse(run_full({"check", "--json", "--allow-object", files.path("t.npy")}).out);
    REQUIRE(checked["valid"] == true);
    CHECK(key_of(checked, "kind") == item.kind);
    const auto inspected =
        nlohmann::json::parse(run_full({"inspect", "--json", "--allow-object", files.path("t.npy")}).out);
    REQUIRE(inspected["valid"] == true);
    CHECK(key_of(inspected, "kind") == item.kind);
    CHECK(inspected["dtype"].is_object()); // the tree, as before
    if (item.str == nullptr) {
      CHECK(key_of(checked, "dtype").is_null());
      CHECK(checked.contains("dtype"));
      CHECK(inspected["dtype"]["kind"] == "struct");
      CHECK_FALSE(inspected["dtype"].contains("type"));
    } else {
      CHECK(key_of(checked, "dtype") == item.str);
      CHECK(inspected["dtype"]["type"] == item.str);
    }
  }
}

TEST_CASE("usage errors start with npyguard: and say what to run; byte sizes take K, M, G", "[cli]") {
  tree files;
  const std::string ok = golden + "scalar_lt_f8.npy"; // 24 data bytes, HEADER_LEN 118
  struct expectation {
    std::vector<std::string> arguments;
    const char* help; // the command named in the hint
  };
  const std::vector<expectation> cases = {
      {{}, "npyguard --help"},
      {{"frobnicate"}, "npyguard --help"},
      {{"--no-such-option"}, "npyguard --help"},
      {{"check"}, "npyguard check --help"},
      {{"check", "--no-such-option", ok}, "npyguard check --help"},
      {{"check", "--max-depth", "-1", ok}, "npyguard check --help"},
      {{"check", "--max-depth", "200", ok}, "npyguard check --help"},
      {{"check", "--all-files", ok}, "npyguard check --help"},
      {{"inspect", ok, ok}, "npyguard inspect --help"},
      {{"inspect", "--max-ndim", "x", ok}, "npyguard inspect --help"},
      {{"canon", ok}, "npyguard canon --help"},
      {{"canon", "-", ok}, "npyguard canon --help"},
  };
  for (const auto& item : cases) {
    std::string shown;
    for (const auto& argument : item.arguments) shown += argument + " ";
    INFO(shown);
    const full_run result = run_full(item.arguments);
    CHECK(result.status == 2);
    CHECK(result.out.empty());
    const auto lines = lines_of(result.err);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("npyguard: ", 0) == 0);
    const std::string hint = std::string("; run '") + item.help + "'";
    CHECK(lines[0].size() > hint.size());
    CHECK(lines[0].compare(lines[0].size() - hint.size(), hint.size(), hint) == 0);
  }
  CHECK(run_full({"check", "--max-depth", "-1", ok}).err ==
        "npyguard: --max-depth: '-1' is not a decimal number; run 'npyguard check --help'\n");

  // K, M, G are powers of 1024: arrays of exactly 1 KiB, 1 MiB and 1 GiB
  // (sparse files: the data is never read).
  const std::pair<const char*, std::uint64_t> sizes[] = {{"K", 1ull << 10}, {"M", 1ull << 20}, {"G", 1ull << 30}};
  for (const auto& [suffix, bytes] : sizes) {
    INFO(suffix);
    const std::string path = files.path(std::string("size") + suffix + ".npy");
    write_bytes(path,
                npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(bytes) + ",), }", 1));
    REQUIRE(::truncate(path.c_str(), static_cast<off_t>(128 + bytes)) == 0);
    CHECK(run_full({"check", "--max-data-bytes", std::string("1") + suffix, path}).status == 0);
    CHECK(run_full({"check", "--max-data-bytes", std::to_string(bytes - 1), path}).status == 1);
    CHECK(run_full({"check", "--max-data-bytes", std::to_string(bytes), path}).status == 0);
  }
  CHECK(run_full({"check", "--max-header-bytes", "1K", ok}).status == 0);
  CHECK(run_full({"check", "--max-header-bytes", "4095M", ok}).status == 0);
  CHECK(run_full({"check", "--max-header-bytes", "3", ok}).status == 1);
  CHECK(run_full({"check", "--max-data-bytes", "17179869183G", ok}).status == 0); // 2^64 - 2^30
  for (const char* bad :
       {"4G", "4096M", "4194304K", "4294967296", "1k", "01K", "0x1K", "-1K", "1KK", "K", "1 K", "1.5K", "+1K"}) {
    INFO(bad);
    const full_run result = run_full({"check", "--max-header-bytes", bad, ok});
    CHECK(result.status == 2);
    CHECK(result.err.rfind("npyguard: --max-header-bytes: '", 0) == 0);
  }
  for (const char* bad : {"17179869184G", "17592186044416M", "18014398509481984K", "18446744073709551616", "1g"}) {
    INFO(bad);
    CHECK(run_full({"check", "--max-data-bytes", bad, ok}).status == 2);
  }
  // Suffixes only where the number is a size.
  CHECK(run_full({"check", "--max-depth", "1K", ok}).status == 2);
  CHECK(run_full({"check", "-j", "1K", ok}).status == 2);

  // --timeout: seconds whose milliseconds fit in 32 bits.
  CHECK(run_full({"check", "--timeout", "4294967", ok}).status == 0);
  CHECK(run_full({"inspect", "--timeout", "0", ok}).status == 0);
  for (const char* bad : {"4294968", "-1", "1.5", "1K", "010", ""}) {
    INFO(bad);
    CHECK(run_full({"check", "--timeout", bad, ok}).status == 2);
    CHECK(run_full({"inspect", "--timeout", bad, ok}).status == 2);
  }
}

TEST_CASE("a FIFO named as FILE waits at most --timeout; -r reports special files unopened", "[cli][walk]") {
  tree files;
  REQUIRE(::mkfifo(files.path("pipe.npy").c_str(), 0600) == 0);
  // Nobody writes: without the timeout the check would wait forever (the
  // shell's timeout(1) turns that into a failure instead of a hang).
  const auto started = std::chrono::steady_clock::now();
  const std::string command = "timeout 60 " + shell_quoted(NPYGUARD_TOOL_PATH) + " check --json --timeout 1 " +
                              shell_quoted(files.path("pipe.npy")) + " > " + shell_quoted(files.path("out"));
  const int status = std::system(command.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
  const auto report = nlohmann::json::parse(slurp(files.path("out")));
  CHECK(report["error"]["code"] == "io_error");
  CHECK(report["error"]["message"].get<std::string>().find("(--timeout)") != std::string::npos);
  CHECK(report["error"]["option"] == "timeout_ms");
  CHECK(report["error"]["limit"].is_null());
  const std::string inspect_fifo = "timeout 60 " + shell_quoted(NPYGUARD_TOOL_PATH) + " inspect --timeout 1 " +
                                   shell_quoted(files.path("pipe.npy")) + " > /dev/null";
  const int inspected = std::system(inspect_fifo.c_str());
  CHECK(WIFEXITED(inspected));
  CHECK(WEXITSTATUS(inspected) == 2);

  // Standard input from a pipe whose writer stays open and silent.
  int channel[2];
  REQUIRE(::pipe(channel) == 0);
  const std::string out_path = files.path("stdin.json");
  std::string tool = NPYGUARD_TOOL_PATH;
  std::vector<std::string> words = {"check", "--json", "--timeout", "1", "-"};
  std::vector<char*> argv{tool.data()};
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) _exit(126);
    ::dup2(channel[0], 0);
    ::dup2(out, 1);
    ::close(channel[1]);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(channel[0]);
  int child_status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pid_t ended = 0;
  while ((ended = ::waitpid(child, &child_status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
    ::usleep(10000);
  }
  if (ended == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &child_status, 0);
  }
  ::close(channel[1]);
  REQUIRE(ended == child);
  CHECK(WIFEXITED(child_status));
  CHECK(WEXITSTATUS(child_status) == 2);
  const auto from_stdin = nlohmann::json::parse(slurp(out_path));
  CHECK(from_stdin["error"]["code"] == "io_error");
  CHECK(from_stdin["error"]["message"].get<std::string>().find("--timeout") != std::string::npos);

  // Under -r a FIFO or a socket is never opened (opening that FIFO would
  // block), but reported when its name is one the walk takes.
  files.directory("d");
  files.copy(golden + "scalar_lt_f8.npy", "d/a.npy");
  REQUIRE(::mkfifo(files.path("d/b.npy").c_str(), 0600) == 0);
  REQUIRE(::mkfifo(files.path("d/c").c_str(), 0600) == 0);
  const int server = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(server >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string socket_path = files.path("d/s.npy");
  REQUIRE(socket_path.size() < sizeof address.sun_path);
  std::copy(socket_path.begin(), socket_path.end(), address.sun_path);
  REQUIRE(::bind(server, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  ::close(server);

  for (const bool all : {false, true}) {
    INFO("--all-files " << all);
    const std::string run_walk = "timeout 60 " + shell_quoted(NPYGUARD_TOOL_PATH) + " check -r --json " +
                                 (all ? "--all-files " : "") + shell_quoted(files.path("d")) + " > " +
                                 shell_quoted(files.path("out")) + " 2>/dev/null";
    const int walked = std::system(run_walk.c_str());
    CHECK(WIFEXITED(walked));
    CHECK(WEXITSTATUS(walked) == 2);
    const auto lines = lines_of(slurp(files.path("out")));
    std::vector<std::string> named;
    for (const auto& line : lines) {
      const auto entry = nlohmann::json::parse(line);
      named.push_back(entry["file"].get<std::string>());
      if (entry["file"] == files.path("d/a.npy")) {
        CHECK(entry["valid"] == true);
      } else {
        CHECK(entry["error"]["code"] == "io_error");
        CHECK(entry["error"]["offset"].is_null());
        const std::string message = entry["error"]["message"].get<std::string>();
        CHECK(message.find(entry["file"] == socket_path ? "is a socket" : "is a FIFO") == 0);
      }
    }
    std::vector<std::string> expected = {files.path("d/a.npy"), files.path("d/b.npy")};
    if (all) expected.push_back(files.path("d/c"));
    expected.push_back(socket_path);
    CHECK(named == expected);
  }
}

// ---------------------------------------------------------------------------
// Issue 13: .npz archives in the command.

namespace {

npyguard_test::zip_entry stored_member(std::string name, std::string data) {
  npyguard_test::zip_entry e;
  e.name = std::move(name);
  e.data = std::move(data);
  return e;
}

} // namespace

TEST_CASE("check reads .npz archives: text, JSON, exit status", "[cli][npz]") {
  const std::string weights = NPYGUARD_SOURCE_DIR "/examples/weights.npz";
  const std::string traversal = NPYGUARD_SOURCE_DIR "/examples/traversal.npz";
  full_run ok = run_full({"check", "--json", weights});
  CHECK(ok.status == 0);
  const nlohmann::json valid = nlohmann::json::parse(ok.out);
  CHECK(valid["format"] == "npz");
  CHECK(valid["valid"] == true);
  CHECK(valid["verified"] == false);
  REQUIRE(valid["members"].size() == 2);
  CHECK(valid["members"][0]["name"] == "dense/kernel.npy");
  CHECK(valid["members"][0]["key"] == "dense/kernel");
  CHECK(valid["members"][0]["shape"] == nlohmann::json::array({3, 4}));
  CHECK(valid["members"][0]["descr"] == "'<f4'");
  CHECK(valid["members"][0]["itemsize"] == 4);
  CHECK(valid["members"][0]["nbytes"] == 48);
  CHECK(valid["members"][0]["data_offset"] == 128);
  CHECK(valid["members"][0]["fortran_order"] == false);
  // dtype (numpy's dtype.str) and kind, as for a .npy file (SPEC.md section 9).
  CHECK(valid["members"][0]["dtype"] == "<f4");
  CHECK(valid["members"][0]["kind"] == "f");
  CHECK(run_full({"check", "--json", "--verify", weights}).out.find("\"verified\":true") != std::string::npos);
  {
    // A struct member: dtype null (inspect gives the tree), kind "V".
    tree files;
    const npyguard_test::zip_archive zip = npyguard_test::build_zip(
        {stored_member("s.npy", padded_file("{'descr': [('a', '<i2'), ('b', '|u1')], 'fortran_order': False, "
                                            "'shape': (8,), }")),
         stored_member("b.npy", padded_file("{'descr': '|b1', 'fortran_order': False, 'shape': (24,), }"))});
    std::ofstream(files.path("s.npz"), std::ios::binary) << zip.bytes;
    const std::string checked = run_full({"check", "--json", files.path("s.npz")}).out;
    INFO(checked);
    const nlohmann::json members = nlohmann::json::parse(checked)["members"];
    REQUIRE(members.size() == 2);
    CHECK(members[0]["dtype"].is_null());
    CHECK(members[0]["kind"] == "V");
    CHECK(members[1]["dtype"] == "|b1");
    CHECK(members[1]["kind"] == "b");
    const nlohmann::json inspected =
        nlohmann::json::parse(run_full({"inspect", "--json", files.path("s.npz")}).out)["members"];
    CHECK(inspected[0]["dtype"].is_object());
    CHECK(inspected[0]["kind"] == "V");
  }

  full_run bad = run_full({"check", "--json", traversal});
  CHECK(bad.status == 1);
  const nlohmann::json rejected = nlohmann::json::parse(bad.out);
  CHECK(rejected["format"] == "npz");
  CHECK(rejected["error"]["code"] == "bad_member_name");
  CHECK(rejected["error"]["offset"] == 250);
  CHECK(rejected["member"] == "../../etc/cron.d/x.npy");
  CHECK_FALSE(rejected.contains("member_offset"));
  const full_run text = run_full({"check", traversal});
  CHECK(text.out.rfind(traversal + ":250: bad_member_name: member '../../etc/cron.d/x.npy': ", 0) == 0);

  // .npy objects say their format too.
  CHECK(nlohmann::json::parse(run_full({"check", "--json", NPYGUARD_SOURCE_DIR "/examples/valid.npy"}).out)["format"] ==
        "npy");
}

TEST_CASE("an error inside a member: FILE:MEMBER:OFFSET and member_offset", "[cli][npz]") {
  tree files;
  const std::string negative = padded_file("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }");
  const std::string fine = padded_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  const npyguard_test::zip_archive zip =
      npyguard_test::build_zip({stored_member("ok.npy", fine), stored_member("bad.npy", negative)});
  std::ofstream(files.path("a.npz"), std::ios::binary) << zip.bytes;
  const std::uint64_t inside = negative.find('-');
  const full_run text = run_full({"check", files.path("a.npz")});
  CHECK(text.status == 1);
  CHECK(text.out.rfind(files.path("a.npz") + ":bad.npy:" + std::to_string(inside) + ": negative_dimension: ", 0) == 0);
  const nlohmann::json json = nlohmann::json::parse(run_full({"check", "--json", files.path("a.npz")}).out);
  CHECK(json["member"] == "bad.npy");
  CHECK(json["member_offset"] == inside);
  CHECK(json["error"]["offset"] == zip.entries[1].data + inside);
}

TEST_CASE("--max-ndim bounds .npz members as it bounds .npy files (64 by default, 32 for numpy 1.x)", "[cli][npz]") {
  tree files;
  std::string dims = "3, "; // padded_file writes 24 bytes of data
  for (int i = 1; i < 40; ++i) dims += "1, ";
  const std::string forty = padded_file("{'descr': '<f8', 'fortran_order': False, 'shape': (" + dims + "), }");
  std::ofstream(files.path("forty.npy"), std::ios::binary) << forty;
  const npyguard_test::zip_archive zip = npyguard_test::build_zip({stored_member("a.npy", forty)});
  std::ofstream(files.path("forty.npz"), std::ios::binary) << zip.bytes;
  CHECK(run_full({"check", files.path("forty.npy")}).status == 0);
  CHECK(run_full({"check", files.path("forty.npz")}).status == 0);
  const std::uint64_t at = forty.find('(') + 1 + 32 * 3; // the 33rd dimension
  const full_run npy = run_full({"check", "--max-ndim", "32", files.path("forty.npy")});
  CHECK(npy.status == 1);
  CHECK(npy.out.rfind(files.path("forty.npy") + ":" + std::to_string(at) + ": too_many_dimensions: ", 0) == 0);
  const full_run npz = run_full({"check", "--max-ndim", "32", files.path("forty.npz")});
  CHECK(npz.status == 1);
  CHECK(npz.out.rfind(files.path("forty.npz") + ":a.npy:" + std::to_string(at) + ": too_many_dimensions: ", 0) == 0);
  CHECK(npz.out.find("--max-ndim") != std::string::npos);
}

TEST_CASE("formats: detected by magic, forced by --format, -r takes *.npz, standard input", "[cli][npz]") {
  tree files;
  files.copy(NPYGUARD_SOURCE_DIR "/examples/weights.npz", "w.npz");
  files.copy(NPYGUARD_SOURCE_DIR "/examples/weights.npz", "w.zip"); // by its bytes, whatever its name
  files.copy(NPYGUARD_SOURCE_DIR "/examples/valid.npy", "v.npy");
  std::ofstream(files.path("stub.npz"), std::ios::binary) << "MZ" + slurp(NPYGUARD_SOURCE_DIR "/examples/weights.npz");
  CHECK(run_full({"check", files.path("w.zip")}).out.find(": ok, npz, 2 members") != std::string::npos);
  CHECK(run_full({"check", "--format", "npy", files.path("w.npz")}).out.find(": bad_magic: ") != std::string::npos);
  CHECK(run_full({"check", "--format", "npz", files.path("v.npy")}).out.find(": not_zip: ") != std::string::npos);
  // Bytes before the archive (offsets not adjusted): read as one because of
  // the name, so the answer is the archive's, not bad_magic.
  CHECK(run_full({"check", files.path("stub.npz")}).out.find(": bad_eocd: ") != std::string::npos);
  CHECK(run_full({"check", "--format", "rar", files.path("w.npz")}).status == 2);

  const full_run walked = run_full({"check", "-r", files.root()});
  CHECK(walked.out.find("stub.npz") != std::string::npos);
  CHECK(walked.out.find("w.npz: ok, npz") != std::string::npos);
  CHECK(walked.out.find("v.npy: ok") != std::string::npos);
  CHECK(walked.out.find("w.zip") == std::string::npos);

  const full_run piped = run_full({"check", "-"}, NPYGUARD_SOURCE_DIR "/examples/weights.npz");
  CHECK(piped.status == 0);
  CHECK(piped.out == "-: ok, npz, 2 members, nbytes 64\n");
  const full_run limited =
      run_full({"check", "--max-stream-bytes", "100", "-"}, NPYGUARD_SOURCE_DIR "/examples/weights.npz");
  CHECK(limited.status == 2);
  CHECK(limited.out.find("io_error") != std::string::npos);
  CHECK(limited.out.find("(--max-stream-bytes)") != std::string::npos);
  // Through a pipe, so that standard input is a stream whatever the
  // command makes of a regular file there.
  const std::string piped_json = "cat " + shell_quoted(NPYGUARD_SOURCE_DIR "/examples/weights.npz") + " | " +
                                 shell_quoted(NPYGUARD_TOOL_PATH) + " check --json --max-stream-bytes 100 - > " +
                                 shell_quoted(files.path("stream.json"));
  CHECK(std::system(piped_json.c_str()) != 0);
  const auto stream = nlohmann::json::parse(slurp(files.path("stream.json")));
  CHECK(stream["error"]["code"] == "io_error");
  CHECK(stream["error"]["option"] == "max_stream_bytes");
  CHECK(stream["error"]["limit"] == 100);
  CHECK(stream["error"]["actual"] == 101);
  CHECK(stream["error"]["message"].get<std::string>().find("(--max-stream-bytes)") != std::string::npos);
}

TEST_CASE("a name is a claim: judged by the format it names alone, given or under -r (SPEC.md 9)", "[cli][npz]") {
  tree files;
  files.copy(NPYGUARD_SOURCE_DIR "/examples/weights.npz", "zip.npy");
  files.copy(NPYGUARD_SOURCE_DIR "/examples/image.ra", "ra.npy");
  files.copy(NPYGUARD_SOURCE_DIR "/examples/valid.npy", "npy.npz");
  files.copy(NPYGUARD_SOURCE_DIR "/examples/valid.npy", "npy.ra");
  files.copy(NPYGUARD_SOURCE_DIR "/examples/image.ra", "ra.npz");
  const std::vector<std::pair<std::string, std::string>> expected = {{"zip.npy", ":0: bad_magic: "},
                                                                     {"ra.npy", ":0: bad_magic: "},
                                                                     {"npy.npz", ": not_zip: "},
                                                                     {"npy.ra", ":0: bad_magic: "},
                                                                     {"ra.npz", ": not_zip: "}};
  const full_run walked = run_full({"check", "-r", files.root()});
  CHECK(walked.status == 1);
  for (const auto& [name, verdict] : expected) {
    INFO(name);
    const full_run given = run_full({"check", files.path(name)});
    CHECK(given.status == 1);
    CHECK(given.out.rfind(files.path(name) + verdict, 0) == 0);
    CHECK(walked.out.find(files.path(name) + verdict) != std::string::npos);
    const nlohmann::json json = nlohmann::json::parse(run_full({"check", "--json", files.path(name)}).out);
    CHECK(json["format"] == name.substr(name.rfind('.') + 1));
  }
  // --format comes first: the bytes are then read as the format given.
  CHECK(run_full({"check", "--format", "npz", files.path("zip.npy")}).status == 0);
}

TEST_CASE("--verify reads every member; the archive limits are options", "[cli][npz]") {
  tree files;
  npyguard_test::zip_archive zip = npyguard_test::build_zip(
      {stored_member("a.npy", padded_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"))});
  // The CRC, equal in the local and central headers, matches no data.
  npyguard_test::patch(zip.bytes, zip.entries[0].local + 14, 0x12345678, 4);
  npyguard_test::patch(zip.bytes, zip.entries[0].central + 16, 0x12345678, 4);
  std::ofstream(files.path("crc.npz"), std::ios::binary) << zip.bytes;
  CHECK(run_full({"check", files.path("crc.npz")}).status == 0);
  const full_run verified = run_full({"check", "--verify", files.path("crc.npz")});
  CHECK(verified.status == 1);
  CHECK(verified.out.find(": crc_mismatch: member 'a.npy': ") != std::string::npos);

  const std::string weights = NPYGUARD_SOURCE_DIR "/examples/weights.npz";
  CHECK(run_full({"check", "--max-members", "1", weights}).out.find("too_many_members") != std::string::npos);
  CHECK(run_full({"check", "--max-total-bytes", "100", weights}).out.find("total_size_exceeded") != std::string::npos);
  CHECK(run_full({"check", "--max-ratio", "1", weights}).out.find("ratio_exceeded") != std::string::npos);
  CHECK(run_full({"check", "--max-ratio", "0", weights}).status == 2);
}

TEST_CASE("inspect lists an archive's members with their models", "[cli][npz][inspect]") {
  const std::string weights = NPYGUARD_SOURCE_DIR "/examples/weights.npz";
  const full_run text = run_full({"inspect", weights});
  CHECK(text.status == 0);
  CHECK(text.out.find("member 'dense/kernel.npy' (key 'dense/kernel'), deflated") != std::string::npos);
  CHECK(text.out.find("    shape           (3, 4)") != std::string::npos);
  const nlohmann::json json = nlohmann::json::parse(run_full({"inspect", "--json", weights}).out);
  CHECK(json["members"][1]["dtype"]["type"] == "<f4");
  CHECK(json["members"][1]["dtype"]["kind"] == "floating point");
  CHECK(run_full({"inspect", NPYGUARD_SOURCE_DIR "/examples/traversal.npz"}).status == 1);
}

// Issue 17: RawArray files in the command.
TEST_CASE("check and inspect read RawArray files: text, JSON, exit status", "[cli][ra]") {
  const std::string image = NPYGUARD_SOURCE_DIR "/examples/image.ra";
  const std::string compressed = NPYGUARD_SOURCE_DIR "/examples/compressed.ra";
  const full_run text = run_full({"check", image, compressed});
  CHECK(text.status == 1);
  CHECK(text.out.find(image + ": ok, ra, float32, dims [3, 4], nbytes 48, metadata 38 bytes\n") == 0);
  CHECK(text.out.find(compressed + ":8: unsupported_flags: ") != std::string::npos);

  const std::vector<std::string> lines = lines_of(run_full({"check", "--json", image, compressed}).out);
  REQUIRE(lines.size() == 2);
  const nlohmann::json valid = nlohmann::json::parse(lines[0]);
  CHECK(valid["format"] == "ra");
  CHECK(valid["valid"] == true);
  CHECK(valid["eltype"] == 3);
  CHECK(valid["elbyte"] == 4);
  CHECK(valid["type_name"] == "float32");
  CHECK(valid["big_endian"] == false);
  CHECK(valid["flags"] == 0);
  CHECK(valid["ndims"] == 2);
  CHECK(valid["dims"] == nlohmann::json::array({3, 4}));
  CHECK(valid["count"] == 12);
  CHECK(valid["data_offset"] == 64);
  CHECK(valid["data_length"] == 48);
  CHECK(valid["metadata_offset"] == 112);
  CHECK(valid["metadata_length"] == 38);
  const nlohmann::json rejected = nlohmann::json::parse(lines[1]);
  CHECK(rejected["format"] == "ra");
  CHECK(rejected["valid"] == false);
  CHECK(rejected["error"]["code"] == "unsupported_flags");
  CHECK(rejected["error"]["offset"] == 8);

  const full_run inspected = run_full({"inspect", image});
  CHECK(inspected.status == 0);
  CHECK(inspected.out.find("element type    3, float32, 4 bytes per element\n") != std::string::npos);
  CHECK(inspected.out.find("numpy view      shape (3, 4) with order='F', or (4, 3) in C order\n") != std::string::npos);
  CHECK(inspected.out.find("metadata        38 bytes at offset 112 (not read)\n") != std::string::npos);
  CHECK(nlohmann::json::parse(run_full({"inspect", "--json", image}).out) == valid);
  const full_run bad = run_full({"inspect", compressed});
  CHECK(bad.status == 1);
  CHECK(bad.out.find(":8: unsupported_flags: ") != std::string::npos);
}

TEST_CASE("RawArray: chosen by name, found by magic, forced by --format; -r takes *.ra; stdin", "[cli][ra]") {
  tree files;
  const std::string image = NPYGUARD_SOURCE_DIR "/examples/image.ra";
  files.copy(image, "a.ra");
  files.copy(image, "a.bin");                                      // by its bytes
  files.copy(NPYGUARD_SOURCE_DIR "/examples/valid.npy", "npy.ra"); // called RA: never a .npy verdict
  CHECK(run_full({"check", files.path("a.bin")}).out.find(": ok, ra, float32") != std::string::npos);
  CHECK(run_full({"check", files.path("npy.ra")}).out.find("npy.ra:0: bad_magic: ") != std::string::npos);
  CHECK(run_full({"check", "--format", "npy", files.path("npy.ra")}).out.find("npy.ra: ok, version 1.0") !=
        std::string::npos);
  CHECK(run_full({"check", "--format", "ra", files.path("a.bin")}).status == 0);
  CHECK(run_full({"check", "--format", "npy", files.path("a.ra")}).out.find(": bad_magic: ") != std::string::npos);

  const full_run walked = run_full({"check", "-r", files.root()});
  CHECK(walked.out.find("a.ra: ok, ra") != std::string::npos);
  CHECK(walked.out.find("npy.ra:0: bad_magic") != std::string::npos);
  CHECK(walked.out.find("a.bin") == std::string::npos);

  // A stream stops at the end of the data: the metadata is not counted.
  const full_run piped = run_full({"check", "-"}, image);
  CHECK(piped.status == 0);
  CHECK(piped.out == "-: ok, ra, float32, dims [3, 4], nbytes 48\n");
  const nlohmann::json streamed = nlohmann::json::parse(run_full({"check", "--json", "-"}, image).out);
  CHECK(streamed["metadata_length"].is_null());
  CHECK(streamed["metadata_offset"].is_null());
  // Standard input redirected from the file is a regular file (fstat says
  // so): read by offset, as the file itself, metadata included.
  const full_run redirected = run_full({"check", "-"}, image, true);
  CHECK(redirected.status == 0);
  CHECK(redirected.out == "-: ok, ra, float32, dims [3, 4], nbytes 48, metadata 38 bytes\n");
}

TEST_CASE("RawArray options: --ra-reject-metadata, --no-ra-type5, --max-ndim", "[cli][ra]") {
  const std::string image = NPYGUARD_SOURCE_DIR "/examples/image.ra";
  const full_run strict = run_full({"check", "--ra-reject-metadata", image});
  CHECK(strict.status == 1);
  CHECK(strict.out.find(":112: trailing_data: 38 bytes of metadata follow the data (--ra-reject-metadata)") !=
        std::string::npos);
  const full_run piped = run_full({"check", "--ra-reject-metadata", "-"}, image);
  CHECK(piped.out.find("-:112: trailing_data: ") != std::string::npos);

  tree files;
  std::string julia_bool("rawarray", 8);
  for (const std::uint64_t word : {0u, 5u, 1u, 3u, 1u, 3u}) {
    for (int i = 0; i < 8; ++i) julia_bool.push_back(static_cast<char>((word >> (8 * i)) & 0xFF));
  }
  julia_bool += std::string("\x01\x00\x01", 3);
  std::ofstream(files.path("b.ra"), std::ios::binary) << julia_bool;
  CHECK(run_full({"check", files.path("b.ra")}).out.find(": ok, ra, bool, dims [3], nbytes 3") != std::string::npos);
  const full_run refused = run_full({"check", "--no-ra-type5", files.path("b.ra")});
  CHECK(refused.status == 1);
  CHECK(refused.out.find(":16: unknown_element_type: ") != std::string::npos);
  CHECK(refused.out.find("(--no-ra-type5)") != std::string::npos);
  const full_run few = run_full({"check", "--max-ndim", "1", image});
  CHECK(few.out.find(":40: too_many_dimensions: ") != std::string::npos);
  CHECK(few.out.find("--max-ndim") != std::string::npos);
}

TEST_CASE("convert reads IN through the boundary: a FIFO is refused at once, nothing written", "[cli][convert]") {
  tree files;
  for (const char* name : {"pipe.ra", "pipe"}) {
    INFO(name);
    REQUIRE(::mkfifo(files.path(name).c_str(), 0600) == 0);
    // No writer ever comes: a blocking open or read would hang here
    // (run_full's `timeout` then makes it status 124).
    const full_run refused = run_full({"convert", files.path(name), files.path("out.npy")});
    CHECK(refused.status == 2);
    CHECK(refused.err.find(": io_error: ") != std::string::npos);
    CHECK(refused.err.find("not a regular file") != std::string::npos);
    CHECK_FALSE(std::ifstream(files.path("out.npy")).good());
  }
}
