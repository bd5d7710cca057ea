// Crafted .npz archives against benign ones of the same byte size
// (bench/npz_crafted.py builds the pairs and prints the table; README.md,
// "Crafted .npz input"). Every archive in NPYGUARD_BENCH_CRAFTED (a
// directory) is checked from memory by default and with verification,
// whatever the verdict: a hostile archive is timed until its verdict, which
// is what it costs a service, accepted or not.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "npyguard/npz/validate.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::string bytes;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    char chunk[65536];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.append(chunk, n);
    std::fclose(f);
  }
  return bytes;
}

void run(benchmark::State& state, const std::string& bytes, bool verify) {
  npyguard::options opts;
  opts.verify = verify;
  const auto first = npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
  for (auto _ : state) {
    const auto checked = npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
    benchmark::DoNotOptimize(checked);
  }
  state.SetLabel(first.ok() ? std::string("ok") : std::string(npyguard::error_code_name(first.failure().code)));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

} // namespace

int main(int argc, char** argv) {
  const char* directory = std::getenv("NPYGUARD_BENCH_CRAFTED");
  if (directory == nullptr) {
    std::fprintf(stderr, "set NPYGUARD_BENCH_CRAFTED to a directory of archives (bench/npz_crafted.py does)\n");
    return 2;
  }
  std::vector<std::string> names;
  if (DIR* listing = opendir(directory)) {
    while (const dirent* entry = readdir(listing)) {
      const std::string name = entry->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0) names.push_back(name);
    }
    closedir(listing);
  }
  std::sort(names.begin(), names.end());
  // Held for the whole run: each benchmark reads its archive from memory.
  static std::vector<std::string> archives;
  archives.reserve(names.size());
  for (const std::string& name : names) {
    archives.push_back(slurp(std::string(directory) + "/" + name));
    const std::string& bytes = archives.back();
    const std::string stem = name.substr(0, name.size() - 4);
    benchmark::RegisterBenchmark(("BM_npz_crafted/" + stem + "/default").c_str(), [&bytes](benchmark::State& s) {
      run(s, bytes, false);
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_npz_crafted/" + stem + "/verify").c_str(), [&bytes](benchmark::State& s) {
      run(s, bytes, true);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
