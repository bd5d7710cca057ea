// Counting heap allocations: include in exactly one translation unit of a
// program (the benchmarks, tests/validator_allocations.cpp). It replaces the
// global operator new of the whole program (the library linked in
// included) with one that counts its calls. Relaxed: one counter, read
// between the calls it measures.
#ifndef NPYGUARD_TESTS_ALLOCATION_COUNTER_HPP
#define NPYGUARD_TESTS_ALLOCATION_COUNTER_HPP

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace npyguard_test {
inline std::atomic<std::uint64_t> heap_allocations{0};

inline void* counted_allocation(std::size_t size) noexcept {
  heap_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
} // namespace npyguard_test

// GCC sees free() on a pointer from operator new; these are the matching
// pair (malloc inside counted_allocation).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  if (void* p = npyguard_test::counted_allocation(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = npyguard_test::counted_allocation(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return npyguard_test::counted_allocation(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return npyguard_test::counted_allocation(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

#endif
