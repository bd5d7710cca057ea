// Heap allocations (calls of operator new, in the library and the reference
// alike) and minor page faults across a benchmark's timed loop, reported
// per iteration as the counters "allocs" and "minflt". Include in exactly
// one translation unit of a benchmark program: it brings the counting
// operator new of tests/allocation_counter.hpp with it.
#ifndef NPYGUARD_BENCH_HEAP_METER_HPP
#define NPYGUARD_BENCH_HEAP_METER_HPP

#include <cstdint>

#if defined(__unix__)
#include <sys/resource.h>
#endif

#include <benchmark/benchmark.h>

#include "allocation_counter.hpp"

namespace npyguard_bench {

// Minor page faults of the process so far (0 where getrusage is missing).
// A large header's validation that allocates several hundred KB, which
// glibc trims off the heap top on free, faults it in again on every call: a
// non-zero minflt means the time includes that kernel work (README.md).
inline std::int64_t minor_faults() {
#if defined(__unix__)
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) return static_cast<std::int64_t>(usage.ru_minflt);
#endif
  return 0;
}

// Made just before the timed loop, reported just after it.
struct heap_meter {
  std::int64_t faults = minor_faults();
  std::uint64_t allocations = npyguard_test::heap_allocations.load(std::memory_order_relaxed);

  void report(benchmark::State& state) const {
    state.counters["minflt"] =
        benchmark::Counter(static_cast<double>(minor_faults() - faults), benchmark::Counter::kAvgIterations);
    state.counters["allocs"] = benchmark::Counter(
        static_cast<double>(npyguard_test::heap_allocations.load(std::memory_order_relaxed) - allocations),
        benchmark::Counter::kAvgIterations);
  }
};

} // namespace npyguard_bench

#endif
