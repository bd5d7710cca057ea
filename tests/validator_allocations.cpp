// In steady state a reused validator allocates nothing (issue 15): this
// program counts every call of the global operator new and checks that
// validating the same headers again, in any order, makes none. It is its
// own executable because the counting replaces operator new for the whole
// program. Under AddressSanitizer, whose runtime owns operator new, it
// reports a skip instead (ctest SKIP_RETURN_CODE 77).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "npyguard/npyguard.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define NPYGUARD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPYGUARD_ASAN 1
#endif
#endif

#ifndef NPYGUARD_ASAN
#include "allocation_counter.hpp"
using npyguard_test::heap_allocations;
#endif

namespace {

std::string file_for(const std::string& dict, std::uint64_t data_bytes) {
  const std::size_t unpadded = 10 + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  std::string out("\x93NUMPY\x01\x00", 8);
  const std::size_t header_len = total - 10;
  out.push_back(static_cast<char>(header_len & 0xFF));
  out.push_back(static_cast<char>(header_len >> 8));
  out += dict;
  out.append(total - 1 - out.size(), ' ');
  out.push_back('\n');
  out.append(data_bytes, '\0');
  return out;
}

std::string struct_dict(int fields, const std::string& prefix) {
  std::string dict = "{'descr': [";
  for (int i = 0; i < fields; ++i) dict += "('" + prefix + std::to_string(i) + "', '<i4'), ";
  return dict + "], 'fortran_order': False, 'shape': (3,), }";
}

} // namespace

int main() {
#ifdef NPYGUARD_ASAN
  std::puts("skipped: AddressSanitizer owns operator new");
  return 77;
#else
  const std::vector<std::string> files = {
      file_for("{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }", 8000000),
      file_for(struct_dict(2000, "f"), 2000 * 4 * 3),
      file_for(struct_dict(30, "a_field_name_longer_than_fifteen_"), 30 * 4 * 3),
      file_for("{'descr': [(('title', 'x'), '<i2'), ('', '|V2'), ('s', [('t', '<f8', (2, 2)), ('u', '|S5')])], "
               "'fortran_order': True, 'shape': (2, 3), }",
               (2 + 2 + 32 + 5) * 6),
      file_for(struct_dict(500, "g"), 500 * 4 * 3),
  };
  npyguard::validator v;
  // Warm up: every header once, then in the other order.
  for (const std::string& f : files) (void)v.validate_buffer(f.data(), f.size());
  for (auto f = files.rbegin(); f != files.rend(); ++f) (void)v.validate_buffer(f->data(), f->size());

  int failures = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      const std::string& f = files[(i * 3 + static_cast<std::size_t>(round)) % files.size()];
      const std::uint64_t before = heap_allocations.load();
      const npyguard::result& r = v.validate_buffer(f.data(), f.size());
      const std::uint64_t made = heap_allocations.load() - before;
      if (!r.ok()) {
        std::printf("FAIL: file %zu rejected: %s\n", i, r.failure().message.c_str());
        ++failures;
      } else if (made != 0) {
        std::printf("FAIL: file %zu (round %d): %llu allocations in steady state\n", i, round,
                    static_cast<unsigned long long>(made));
        ++failures;
      }
    }
  }
  // The free function allocates only the model it returns: for the typical
  // header, its shape.
  const std::string& typical = files[0];
  (void)npyguard::validate_buffer(typical.data(), typical.size());
  const std::uint64_t before = heap_allocations.load();
  const npyguard::result free_result = npyguard::validate_buffer(typical.data(), typical.size());
  const std::uint64_t made = heap_allocations.load() - before;
  if (!free_result.ok() || made != 1) {
    std::printf("FAIL: validate_buffer on the typical header made %llu allocations, expected 1 (the shape)\n",
                static_cast<unsigned long long>(made));
    ++failures;
  }
  // The counter counts: a std::vector of one element allocates once.
  const std::uint64_t probe = heap_allocations.load();
  std::vector<int> one(1);
  if (heap_allocations.load() - probe != 1 || one.size() != 1) {
    std::puts("FAIL: the allocation counter does not count");
    ++failures;
  }
  if (failures == 0) std::puts("ok: no allocation in steady state");
  return failures == 0 ? 0 : 1;
#endif
}
