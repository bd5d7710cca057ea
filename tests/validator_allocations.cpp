// In steady state a reused validator allocates nothing (issue 15): this
// program counts every call of the global operator new and checks that
// validating the same headers again, in any order, makes none. It is its
// own executable because the counting replaces operator new for the whole
// program. Under AddressSanitizer, whose runtime owns operator new, it
// reports a skip instead (ctest SKIP_RETURN_CODE 77).
//
// The other formats hold no syntax tree to reuse: a RawArray check
// allocates only the dims of the model it returns, and an .npz check reads
// every member's header through one workspace, so what it allocates grows
// by one block a member (the member's shape), not by the headers' sizes.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "npyguard/npyguard.hpp"
#include "ra_support.hpp"
#include "zip_builder.hpp"

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

#ifndef NPYGUARD_ASAN // the helpers of the counting checks, which ASan skips
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

// An archive of `members` small .npy members, stored or deflated.
std::string archive_of(std::size_t members, std::uint16_t method) {
  const std::string npy = file_for("{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }", 96);
  std::vector<npyguard_test::zip_entry> entries(members);
  for (std::size_t i = 0; i < members; ++i) {
    entries[i].name = "a" + std::to_string(i) + ".npy";
    entries[i].data = npy;
    entries[i].method = method;
  }
  return npyguard_test::build_zip(entries).bytes;
}

// Heap allocations of one .npz check (the second of two).
std::uint64_t npz_allocations(const std::string& archive) {
  (void)npyguard::npz::validate_buffer(archive.data(), archive.size());
  const std::uint64_t before = heap_allocations.load();
  const auto checked = npyguard::npz::validate_buffer(archive.data(), archive.size());
  const std::uint64_t made = heap_allocations.load() - before;
  return checked.ok() ? made : 0;
}
#endif

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
  // RawArray: the dims of the model returned, and nothing else.
  const std::string ra = npyguard_test::ra_file(npyguard_test::ra_fields{});
  (void)npyguard::ra::validate_buffer(ra.data(), ra.size());
  const std::uint64_t before_ra = heap_allocations.load();
  const npyguard::ra::result ra_result = npyguard::ra::validate_buffer(ra.data(), ra.size());
  const std::uint64_t made_ra = heap_allocations.load() - before_ra;
  if (!ra_result.ok() || made_ra != 1) {
    std::printf("FAIL: ra::validate_buffer made %llu allocations, expected 1 (the dims)\n",
                static_cast<unsigned long long>(made_ra));
    ++failures;
  }
  // .npz: from 100 to 1,000 members, one allocation more a member (its
  // shape) and a few for the lists that grow with them (2.7% measured),
  // stored or deflated.
  for (const std::uint16_t method : {std::uint16_t{0}, std::uint16_t{8}}) {
    const std::uint64_t small = npz_allocations(archive_of(100, method));
    const std::uint64_t large = npz_allocations(archive_of(1000, method));
    if (small == 0 || large < small || large - small > 900 + 45) {
      std::printf(
          "FAIL: .npz (method %u): %llu allocations for 100 members, %llu for 1,000: expected about "
          "one more a member\n",
          method, static_cast<unsigned long long>(small), static_cast<unsigned long long>(large));
      ++failures;
    }
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
