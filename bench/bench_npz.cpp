// .npz validation of the archives named by NPYGUARD_BENCH_NPZ (a
// colon-separated list of paths), one benchmark per archive: the default
// (headers-only) check and --verify, from the file as `npyguard check` reads
// it. bench/npz_compare.py builds the archives, runs this and numpy on the
// same files in one run, and prints them side by side.
//
// Each row also reports heap allocations and minor page faults per archive
// ("allocs", "minflt"): the members' headers are read through one workspace
// (its tree, string arena and name table sized by the largest header and
// reused), so what allocates is the result itself, a few blocks a member
// (its name, key and model), and nothing faults in steady state.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "heap_meter.hpp"
#include "npyguard/npz/validate.hpp"

namespace {

using npyguard_bench::heap_meter;

void run(benchmark::State& state, const std::string& path, bool verify) {
  npyguard::options opts;
  opts.verify = verify;
  const auto first = npyguard::npz::validate_file(path.c_str(), opts);
  if (!first.ok()) {
    state.SkipWithError(("rejected: " + first.failure().message).c_str());
    return;
  }
  std::uint64_t read = 0;
  const heap_meter meter;
  for (auto _ : state) {
    const auto checked = npyguard::npz::validate_file(path.c_str(), opts);
    benchmark::DoNotOptimize(checked);
    read = checked.value().bytes_read;
  }
  meter.report(state);
  state.counters["members"] = static_cast<double>(first.value().members.size());
  state.counters["bytes_read"] = static_cast<double>(read);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(first.value().size));
}

// The same check on the archive held in memory (npz::validate_buffer):
// what the I/O path costs on top.
void run_buffer(benchmark::State& state, const std::string& path) {
  std::string bytes;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    char chunk[65536];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.append(chunk, n);
    std::fclose(f);
  }
  const npyguard::options opts;
  const auto first = npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
  if (!first.ok()) {
    state.SkipWithError(("rejected: " + first.failure().message).c_str());
    return;
  }
  const heap_meter meter;
  for (auto _ : state) {
    const auto checked = npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
    benchmark::DoNotOptimize(checked);
  }
  meter.report(state);
  state.counters["members"] = static_cast<double>(first.value().members.size());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

} // namespace

int main(int argc, char** argv) {
  const char* list = std::getenv("NPYGUARD_BENCH_NPZ");
  if (list == nullptr) {
    std::fprintf(stderr, "set NPYGUARD_BENCH_NPZ to archive paths separated by ':' (bench/npz_compare.py does)\n");
    return 2;
  }
  std::string paths = list;
  for (std::size_t begin = 0; begin < paths.size();) {
    std::size_t end = paths.find(':', begin);
    if (end == std::string::npos) end = paths.size();
    const std::string path = paths.substr(begin, end - begin);
    benchmark::RegisterBenchmark(("BM_npz_check/" + path).c_str(),
                                 [path](benchmark::State& s) { run(s, path, false); });
    benchmark::RegisterBenchmark(("BM_npz_check_buffer/" + path).c_str(),
                                 [path](benchmark::State& s) { run_buffer(s, path); });
    benchmark::RegisterBenchmark(("BM_npz_verify/" + path).c_str(),
                                 [path](benchmark::State& s) { run(s, path, true); });
    begin = end + 1;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
