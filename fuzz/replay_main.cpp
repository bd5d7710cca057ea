// A main for the fuzz targets when no fuzzing engine is linked (g++, or
// clang without -fsanitize=fuzzer): runs every input named on the command
// line, files or directories (the regular files below them, recursively as
// libFuzzer reads them, in path order), through LLVMFuzzerTestOneInput once. Arguments starting with '-' are libFuzzer
// flags and are ignored, so ctest can give both builds the same command.
//
// Exits 1 when a path cannot be read or no input was run at all, so a
// missing corpus cannot pass silently; a failed invariant traps.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

bool replay(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  // Exactly sized, like the input libFuzzer hands over, so ASan sees one
  // byte past the end.
  auto copy = std::make_unique<std::uint8_t[]>(bytes.size());
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  LLVMFuzzerTestOneInput(copy.get(), bytes.size());
  return true;
}

} // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t replayed = 0;
  bool failed = false;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    const fs::path root(argv[i]);
    std::error_code ec;
    std::vector<fs::path> inputs;
    if (fs::is_directory(root, ec)) {
      // Directory symlinks are not followed, so there are no loops.
      for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
        if (entry.is_regular_file(ec)) inputs.push_back(entry.path());
      }
      std::sort(inputs.begin(), inputs.end());
    } else if (fs::is_regular_file(root, ec)) {
      inputs.push_back(root);
    }
    if (ec || inputs.empty()) {
      std::fprintf(stderr, "replay: no inputs in %s\n", root.c_str());
      failed = true;
      continue;
    }
    for (const fs::path& input : inputs) {
      failed = !replay(input) || failed;
      ++replayed;
    }
  }
  std::fprintf(stderr, "replay: %zu inputs\n", replayed);
  return failed || replayed == 0 ? 1 : 0;
}
