// The streaming walk of check -r (issue 33): the output order, the first
// verdict before the walk ends, and memory that does not grow with the tree.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace {

const std::string golden = NPYGUARD_SOURCE_DIR "/tests/golden/files/";

std::string shell_word(const std::string& argument) {
  std::string out = "'";
  for (const char c : argument) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

// A temporary directory, removed at the end.
class scratch {
public:
  scratch() {
    std::string pattern = std::string(P_tmpdir) + "/npyguard_walk_XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    root_ = pattern;
  }
  ~scratch() { std::system(("rm -rf " + shell_word(root_)).c_str()); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  [[nodiscard]] std::string path(const std::string& relative) const { return root_ + "/" + relative; }
  [[nodiscard]] const std::string& root() const { return root_; }

private:
  std::string root_;
};

// Creates `relative`'s missing parent directories under `root`.
void make_parents(const std::string& root, const std::string& relative) {
  for (std::size_t slash = relative.find('/'); slash != std::string::npos; slash = relative.find('/', slash + 1)) {
    const std::string parent = root + "/" + relative.substr(0, slash);
    REQUIRE((::mkdir(parent.c_str(), 0755) == 0 || errno == EEXIST));
  }
}

// A hard link to `source`: a tree of thousands of files costs one inode.
void link_to(const std::string& source, const std::string& path) { REQUIRE(::link(source.c_str(), path.c_str()) == 0); }

// A copy of the golden file `name` in the tree's root, to link to (the
// sources may be on another file system); ".src": no walk takes it.
std::string source_copy(const scratch& files, const std::string& name) {
  const std::string path = files.path(name + ".src");
  std::ofstream(path, std::ios::binary) << slurp(golden + name);
  return path;
}

// The tool, both outputs captured.
struct full_run {
  int status = -1;
  std::string out;
  std::string err;
};

full_run run_tool(const std::vector<std::string>& arguments, const std::string& prefix = "") {
  const std::string base = std::string(P_tmpdir) + "/npyguard_walk_" + std::to_string(::getpid());
  std::string command = prefix + "timeout 120 " + shell_word(NPYGUARD_TOOL_PATH);
  for (const auto& argument : arguments) command += " " + shell_word(argument);
  command += " </dev/null >" + shell_word(base + ".out") + " 2>" + shell_word(base + ".err");
  const int status = std::system(command.c_str());
  full_run result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = slurp(base + ".out");
  result.err = slurp(base + ".err");
  ::unlink((base + ".out").c_str());
  ::unlink((base + ".err").c_str());
  return result;
}

std::vector<std::string> files_named(const std::string& json_lines) {
  std::vector<std::string> named;
  for (const auto& line : lines_of(json_lines)) named.push_back(nlohmann::json::parse(line)["file"].get<std::string>());
  return named;
}

// The order the manual promises, said independently of the walk: paths
// compared component by component, each component by its bytes. A
// directory's entries in name order, a subdirectory's files in its place.
bool walk_order(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  for (;;) {
    const std::size_t a_end = std::min(a.find('/', i), a.size());
    const std::size_t b_end = std::min(b.find('/', j), b.size());
    const int order = a.compare(i, a_end - i, b, j, b_end - j);
    if (order != 0) return order < 0;
    if (a_end == a.size() || b_end == b.size()) return a_end == a.size() && b_end != b.size();
    i = a_end + 1;
    j = b_end + 1;
  }
}

} // namespace

TEST_CASE("check -r prints the sorted walk's order, byte for byte the same with -j 1, 2 and 8", "[cli][walk]") {
  scratch files;
  const std::string ok = source_copy(files, "scalar_lt_f8.npy");
  const std::string bad = source_copy(files, "object_mixed.npy");
  // Names whose byte order differs from a sort of whole paths ("a-b/" before
  // "a/" there, '-' < '/'), from a case-blind or locale sort ("B" < "_" <
  // "a"), and from a numeric one ("10" < "9"); non-ASCII after ASCII.
  std::vector<std::string> wanted = {
      "a/x.npy",
      "a/deeper/still/z.npy",
      "a/deeper/still/y.npy",
      "a-b/x.npy",
      "a.b/x.npy",
      "a0.npy",
      "B.npy",
      "_x.npy",
      "10.npy",
      "9.npy",
      "Z/m/n.npz",
      "Z/m.npy",
      "\xc3\xa9/u.npy",
      "\xc3\xa9.ra",
      "a/deeper/w.npy",
  };
  // Enough files that the workers run past each other and past the window
  // of 1024 inputs the output may lag behind.
  for (int i = 0; i < 1500; ++i) wanted.push_back("many/" + std::to_string(i % 7) + "/f" + std::to_string(i) + ".npy");
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    make_parents(files.root(), wanted[i]);
    link_to(i % 5 == 3 ? bad : ok, files.path(wanted[i]));
  }
  // Not taken: other names, links (never followed inside a walk).
  std::ofstream(files.path("a/notes.txt")) << "text";
  REQUIRE(::symlink("..", files.path("a/deeper/loop").c_str()) == 0);
  REQUIRE(::symlink("../B.npy", files.path("a/link.npy").c_str()) == 0);
  std::sort(wanted.begin(), wanted.end(), walk_order);
  std::vector<std::string> expected;
  for (const auto& relative : wanted) expected.push_back(files.path(relative));

  full_run first;
  for (const bool json : {true, false}) {
    for (const char* jobs : {"1", "2", "8"}) {
      INFO("-j " << jobs << (json ? " --json" : ""));
      const full_run result =
          run_tool(json ? std::vector<std::string>{"check", "-r", "--json", "-j", jobs, files.root()}
                        : std::vector<std::string>{"check", "-r", "-j", jobs, files.root()});
      CHECK(result.status == 1);
      if (json) CHECK(files_named(result.out) == expected);
      if (jobs[0] == '1') {
        first = result;
        continue;
      }
      CHECK(result.out == first.out);
      CHECK(result.err == first.err);
    }
  }
  CHECK(first.err.find(std::to_string(expected.size()) + " files: ") == 0);

  // A directory reached twice is walked where it is first reached: here
  // as the first argument, then skipped inside the root and as the third.
  const full_run repeated =
      run_tool({"check", "-r", "--json", "-j", "2", files.path("Z"), files.root(), files.path("Z")});
  std::vector<std::string> once = {files.path("Z/m/n.npz"), files.path("Z/m.npy")};
  for (const auto& path : expected) {
    if (path.rfind(files.path("Z/"), 0) != 0) once.push_back(path);
  }
  CHECK(files_named(repeated.out) == once);
}

TEST_CASE("check -r walks a tree deeper than the descriptors it may hold", "[cli][walk]") {
  scratch files;
  // 100 levels of "d", a file at each: "d" sorts before "f.npy", so the
  // deepest file comes first. With 24 descriptors the walk holds few of
  // them and opens the deeper directories by path.
  const std::string ok = source_copy(files, "scalar_lt_f8.npy");
  std::string relative;
  std::vector<std::string> expected;
  for (int level = 0; level < 100; ++level) {
    make_parents(files.root(), relative + "f.npy");
    link_to(ok, files.path(relative + "f.npy"));
    expected.insert(expected.begin(), files.path(relative + "f.npy"));
    relative += "d/";
  }
  for (const char* jobs : {"1", "4"}) {
    const full_run result = run_tool({"check", "-r", "--json", "-j", jobs, files.root()}, "ulimit -n 24 && ");
    CHECK(result.status == 0);
    CHECK(files_named(result.out) == expected);
  }
}

TEST_CASE("check -r prints the first verdict before the walk has finished", "[cli][walk]") {
  // No timing: the tool's standard output is a pipe of one page that this
  // test stops reading after the first line, so the tool blocks within its
  // first few hundred lines, its workers at most 1024 inputs ahead. Only
  // then is z/late.npy created: a walk that had listed z before printing
  // (the whole tree walked up front) cannot name it; a streaming one lists
  // z thousands of files later and must.
  scratch files;
  make_parents(files.root(), "a/");
  make_parents(files.root(), "z/");
  const std::string ok = source_copy(files, "scalar_lt_f8.npy");
  for (int i = 0; i < 4000; ++i) link_to(ok, files.path("a/" + std::to_string(i) + ".npy"));
  for (const char* jobs : {"1", "4"}) {
    INFO("-j " << jobs);
    ::unlink(files.path("z/late.npy").c_str());
    int channel[2];
    REQUIRE(::pipe(channel) == 0);
    REQUIRE(::fcntl(channel[1], F_SETPIPE_SZ, 4096) >= 0);
    std::string tool = NPYGUARD_TOOL_PATH;
    std::vector<std::string> words = {"check", "-r", "--json", "-j", jobs, files.root()};
    std::vector<char*> argv{tool.data()};
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 2);
      ::dup2(channel[1], 1);
      ::close(channel[0]);
      ::close(channel[1]);
      ::execv(argv[0], argv.data());
      _exit(127);
    }
    ::close(channel[1]);
    std::string out;
    char buffer[4096];
    ssize_t n = 0;
    while (out.find('\n') == std::string::npos && (n = ::read(channel[0], buffer, sizeof buffer)) > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
    }
    REQUIRE(out.find('\n') != std::string::npos);
    CHECK(nlohmann::json::parse(out.substr(0, out.find('\n')))["file"] == files.path("a/0.npy"));
    link_to(ok, files.path("z/late.npy"));
    while ((n = ::read(channel[0], buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
    ::close(channel[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    const auto named = files_named(out);
    REQUIRE(named.size() == 4001);
    CHECK(named.back() == files.path("z/late.npy"));
  }
}

namespace {

// The tool's peak resident set in KiB, outputs discarded; it must succeed.
long peak_rss_kib(const std::vector<std::string>& arguments) {
  const npyguard_cli_test::measured_run run = npyguard_cli_test::run_measured(arguments);
  CHECK(run.status == 0);
  return run.max_rss_kib;
}

// AddressSanitizer's quarantine and shadow memory grow with every
// allocation the tool has made, whatever it still holds: its peak says
// nothing about what the walk keeps (the asan-ubsan preset builds the tool
// with it, as it builds this test).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool under_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool under_address_sanitizer = true;
#else
constexpr bool under_address_sanitizer = false;
#endif
#else
constexpr bool under_address_sanitizer = false;
#endif

} // namespace

TEST_CASE("check -r needs no more memory for 10 times the files", "[cli][walk]") {
  if (under_address_sanitizer) {
    WARN("skipped under AddressSanitizer: its quarantine grows with every allocation");
    return;
  }
  // 4,000 then 40,000 files in directories of 500 with long names (a list of
  // the whole tree would hold about 5 MiB more for the larger one); the
  // peak may differ by the noise of the allocator only.
  scratch files;
  const std::string ok = source_copy(files, "scalar_lt_f8.npy");
  const std::string padding(60, 'p');
  const auto grow = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string directory = files.path("d" + std::to_string(i / 500));
      if (i % 500 == 0) REQUIRE(::mkdir(directory.c_str(), 0755) == 0);
      link_to(ok, directory + "/" + padding + std::to_string(i) + ".npy");
    }
  };
  grow(0, 4000);
  const long small = peak_rss_kib({"check", "-r", "-q", "-j", "2", files.root()});
  grow(4000, 40000);
  const long large = peak_rss_kib({"check", "-r", "-q", "-j", "2", files.root()});
  INFO("peak RSS " << small << " KiB for 4,000 files, " << large << " KiB for 40,000");
  CHECK(large - small < 1536);
}
