// The npyguard command itself: exit codes, the human format, and --json
// reporting exactly what numpy 1.24 read from the golden files.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

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
      for (const char* key : {"version", "shape", "fortran_order", "descr", "itemsize", "data_offset", "header_length"}) {
        INFO(key);
        CHECK(got[key] == want[key]);
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
  CHECK(run({"check"}).status == 2);                                   // no FILE
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

// Runs the tool with stdout and stderr discarded; returns the exit status
// and the child's peak resident set size in KiB (getrusage of the child).
struct measured_run {
  int status = -1;
  long max_rss_kib = 0;
};

measured_run run_measured(const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  std::string tool = NPYGUARD_TOOL_PATH;
  argv.push_back(tool.data());
  std::vector<std::string> copies = arguments;
  for (auto& argument : copies) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  REQUIRE(::wait4(child, &status, 0, &usage) == child);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
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
  std::string text = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  text.append(16 - (10 + text.size() + 1) % 16, ' ');
  text += '\n';
  std::string header = "\x93NUMPY\x01";
  header.push_back('\0');
  header.push_back(static_cast<char>(text.size() & 0xFF));
  header.push_back(static_cast<char>(text.size() >> 8));
  header += text;

  const std::string input = std::string(P_tmpdir) + "/npyguard_cli_big_in.npy";
  const std::string output = std::string(P_tmpdir) + "/npyguard_cli_big_out.npy";
  const int fd = ::open(input.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size()));
  REQUIRE(::ftruncate(fd, static_cast<off_t>(header.size() + count)) == 0);
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
  const std::string output = std::string(P_tmpdir) + "/npyguard_cli_canon_out.npy";
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

// The tool with standard input from `input_path` (default /dev/null), both
// outputs captured.
full_run run_full(const std::vector<std::string>& arguments, const std::string& input_path = "/dev/null") {
  const std::string base = std::string(P_tmpdir) + "/npyguard_cli_" + std::to_string(::getpid());
  std::string command = shell_quoted(NPYGUARD_TOOL_PATH);
  for (const auto& argument : arguments) command += " " + shell_quoted(argument);
  command += " <" + shell_quoted(input_path) + " >" + shell_quoted(base + ".out") + " 2>" + shell_quoted(base + ".err");
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
  REQUIRE(::symlink("..", files.path("a/deep/loop").c_str()) == 0);      // a directory loop
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
  bytes[10 + 12] = '\x1b'; // inside '<f8'
  std::ofstream(files.path("esc.npy"), std::ios::binary) << bytes;

  full_run result = run_full({"check", files.path("esc.npy")});
  CHECK(result.status == 1);
  const auto lines = lines_of(result.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == files.path("esc.npy") + ":22: control_character: " + lines[0].substr(lines[0].find(": control_character: ") + 21));
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
  for (const char* command : {"check", "inspect", "canon"}) {
    const std::string help = run_full({command, "--help"}).out;
    for (std::size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
      std::size_t end = at + 2;
      while (end < help.size() && (std::isalnum(static_cast<unsigned char>(help[end])) || help[end] == '-')) ++end;
      if (end == at + 2) continue; // "--" itself
      std::string roff; // the option as roff spells it: every '-' escaped
      for (std::size_t i = at; i < end; ++i) roff += help[i] == '-' ? std::string("\\-") : std::string(1, help[i]);
      INFO(command << " " << help.substr(at, end - at));
      CHECK(manual.find(roff) != std::string::npos);
      ++options_seen;
    }
  }
  CHECK(options_seen >= 20);
}
