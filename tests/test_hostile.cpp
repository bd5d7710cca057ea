// Hostile inputs: each is rejected with its code, without deep recursion and
// without a large allocation. A counting global allocator proves the bound.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/keyed_hash.hpp"
#include "crafted_names.hpp"
#include "support.hpp"

using namespace npyguard_test;
using npyguard::error_code;

namespace {

// Live and peak bytes allocated through operator new while `counting`, and
// an optional budget past which allocation fails.
std::atomic<bool> counting{false};
std::atomic<std::size_t> live_bytes{0};
std::atomic<std::size_t> peak_bytes{0};
std::atomic<std::size_t> budget{static_cast<std::size_t>(-1)};

constexpr std::size_t prefix = alignof(std::max_align_t);

void* counted_allocate(std::size_t size) {
  const bool active = counting.load(std::memory_order_relaxed);
  if (active && live_bytes.load() + size > budget.load()) return nullptr;
  auto* block = static_cast<unsigned char*>(std::malloc(size + prefix));
  if (block == nullptr) return nullptr;
  *reinterpret_cast<std::size_t*>(block) = active ? size : 0;
  if (active) {
    const std::size_t now = live_bytes.fetch_add(size) + size;
    std::size_t peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {}
  }
  return block + prefix;
}

void counted_free(void* pointer) noexcept {
  if (pointer == nullptr) return;
  auto* block = static_cast<unsigned char*>(pointer) - prefix;
  live_bytes.fetch_sub(*reinterpret_cast<std::size_t*>(block));
  std::free(block);
}

// Peak bytes the library allocated while running `function`.
template <typename Function>
std::size_t peak_allocation(Function&& function, std::size_t limit = static_cast<std::size_t>(-1)) {
  live_bytes = 0;
  peak_bytes = 0;
  budget = limit;
  counting = true;
  function();
  counting = false;
  budget = static_cast<std::size_t>(-1);
  return peak_bytes.load();
}

// The library's documented bound (README, "Limits"): the AST keeps at most
// 12 bytes per header byte and peaks at 20 while its last doubling copies;
// decoded strings take at most 2 (latin-1 doubles in UTF-8); plus messages.
std::size_t allocation_bound(std::size_t input_bytes) { return 22 * input_bytes + 4096; }

std::string descr_file(const std::string& descr, const std::string& shape = "(3,)") {
  const std::string dict = "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }";
  return npy_file(dict, dict.size() > 65000 ? 2 : 1); // version 1.0 lengths are 16-bit
}

// Runs `function` on a thread with a small stack: deep recursion would crash.
template <typename Function>
void on_small_stack(Function function, std::size_t stack_bytes) {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, stack_bytes);
  pthread_t thread;
  auto trampoline = [](void* argument) -> void* {
    (*static_cast<Function*>(argument))();
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attributes, trampoline, &function) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
}

} // namespace

void* operator new(std::size_t size) {
  if (void* p = counted_allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_allocate(size); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }

TEST_CASE("the counting allocator counts", "[hostile]") {
  const std::size_t peak = peak_allocation([] { std::string s(100000, 'x'); });
  CHECK(peak >= 100000);
}

TEST_CASE("100,000 nested brackets: depth_exceeded, bounded stack and memory", "[hostile]") {
  const std::string lists = descr_file(std::string(100000, '['));
  const std::string tuples = descr_file("'<f8'", std::string(100000, '('));
  for (const std::string* bytes : {&lists, &tuples}) {
    npyguard::result checked = npyguard::error{};
    const std::size_t peak = peak_allocation([&] { checked = check_bytes(*bytes); });
    require_error(checked, error_code::depth_exceeded, offset_of(*bytes, bytes == &lists ? "[[" : "((") + 32);
    CHECK(peak <= allocation_bound(bytes->size()));
  }
  // Even at the hard maximum depth the parser fits a 512 KiB stack.
  npyguard::options deepest;
  deepest.limits.max_depth = 1000000; // capped at hard_max_depth
  npyguard::result checked = npyguard::error{};
  on_small_stack([&] { checked = check_bytes(lists, deepest); }, 512 * 1024);
  require_error(checked, error_code::depth_exceeded, offset_of(lists, "[[") + npyguard::hard_max_depth);
}

TEST_CASE("a 5,000-digit integer: integer_too_large", "[hostile]") {
  const std::string bytes = descr_file("'<f8'", "(" + std::string(5000, '7') + ",)");
  npyguard::result checked = npyguard::error{};
  const std::size_t peak = peak_allocation([&] { checked = check_bytes(bytes); });
  require_error(checked, error_code::integer_too_large, offset_of(bytes, "777"));
  CHECK(peak <= allocation_bound(bytes.size()));
}

TEST_CASE("a 12-byte input claiming a 4 GiB header costs almost nothing", "[hostile]") {
  const std::string bytes = preamble(2, 0xFFFFFFFFu);
  REQUIRE(bytes.size() == 12);
  npyguard::options huge;
  huge.limits.max_header_bytes = 0xFFFFFFFFu;
  npyguard::result checked = npyguard::error{};
  // Known size: decided before allocating.
  std::size_t peak = peak_allocation([&] { checked = check_bytes(bytes, huge); });
  require_error(checked, error_code::truncated_header, 12);
  CHECK(peak <= 1024); // the message only
  // Default limit: header_too_large from the length field.
  peak = peak_allocation([&] { checked = check_bytes(bytes); });
  require_error(checked, error_code::header_too_large, 8);
  CHECK(peak <= 1024);
  // Unknown size (a pipe): the header is read in bounded chunks.
  peak = peak_allocation([&] {
    chunked_source source(bytes, bytes.size());
    checked = npyguard::validate_stream(source, huge);
  });
  require_error(checked, error_code::truncated_header, 12);
  CHECK(peak <= 16 * 1024);
}

TEST_CASE("shape (2**32, 2**32) and an itemsize of 2**31", "[hostile]") {
  const std::string square = descr_file("'<f8'", "(4294967296, 4294967296)");
  npyguard::result checked = npyguard::error{};
  std::size_t peak = peak_allocation([&] { checked = check_bytes(square); });
  require_error(checked, error_code::size_overflow, offset_of(square, "4294967296)"));
  CHECK(peak <= allocation_bound(square.size()));

  const std::string itemsize = descr_file("'|S2147483648'");
  peak = peak_allocation([&] { checked = check_bytes(itemsize); });
  require_error(checked, error_code::itemsize_overflow, offset_of(itemsize, "'|S"));
  CHECK(peak <= allocation_bound(itemsize.size()));
  const std::string fields = descr_file("[('a', '|V2147483647'), ('b', '|V1')]");
  require_error(check_bytes(fields), error_code::itemsize_overflow, offset_of(fields, "('b'"));
}

TEST_CASE("memory is bounded by a small multiple of the header", "[hostile]") {
  // A 1 MiB header of small tokens: the worst case for the AST.
  std::string descr = "[";
  while (descr.size() < 1000000) descr += "0,";
  descr += "]";
  const std::string bytes = descr_file(descr);
  npyguard::result checked = npyguard::error{};
  npyguard::options big;
  big.limits.max_header_bytes = 2 * 1024 * 1024;
  const std::size_t peak = peak_allocation([&] { checked = check_bytes(bytes, big); });
  require_error(checked, error_code::bad_descr, offset_of(bytes, "0,"));
  CHECK(peak <= allocation_bound(bytes.size()));
}

TEST_CASE("running out of memory is an error, not a crash", "[hostile]") {
  std::string descr = "[";
  for (int i = 0; i < 2000; ++i) descr += "('f" + std::to_string(i) + "', '<f8'), ";
  descr += "]";
  const std::string bytes = descr_file(descr, "(0,)");
  require_ok(check_bytes(bytes));
  for (std::size_t limit : {std::size_t{0}, std::size_t{100}, std::size_t{4096}, std::size_t{60000}}) {
    npyguard::result checked = npyguard::error{};
    peak_allocation([&] { checked = check_bytes(bytes); }, limit);
    INFO("budget " << limit);
    REQUIRE_FALSE(checked.ok());
    CHECK(checked.failure().code == error_code::out_of_memory);
    CHECK_FALSE(checked.failure().offset.has_value());
  }
}

TEST_CASE("the duplicate-name table's keyed hash is SipHash-1-3", "[hostile][names]") {
  // The same function under the all-zero key as CPython's str and bytes
  // hash (its own siphash13), which PYTHONHASHSEED=0 gives that key:
  //   PYTHONHASHSEED=0 python3 -c "print(hash(b'f0001') & (2**64 - 1))"
  // One value per tail length class: 1, 5 and 7 bytes, one whole word, and
  // three words and a tail.
  using npyguard::detail::hash_key;
  using npyguard::detail::keyed_hash;
  constexpr hash_key zero{0, 0};
  CHECK(keyed_hash("a", zero) == 4644417185603328019ull);
  CHECK(keyed_hash("f0001", zero) == 14020180141503068512ull);
  CHECK(keyed_hash("abcdefg", zero) == 7904145750247929094ull);
  CHECK(keyed_hash("abcdefgh", zero) == 4574395652268504554ull);
  CHECK(keyed_hash("the quick brown fox jumps", zero) == 56729954816557122ull);
  // The process key is drawn once, so a name hashes alike every time.
  CHECK(keyed_hash("f0001") == keyed_hash(std::string("f0001")));
  CHECK(&npyguard::detail::process_hash_key() == &npyguard::detail::process_hash_key());
}

TEST_CASE("the duplicate-name table's short hash keeps names apart", "[hostile][names]") {
  // keyed_short_hash reads a name up to 16 bytes as two words that, with
  // its length, determine it: distinct names of every length class (1 to 3,
  // 4 to 7, 8 to 16 bytes and longer, sharing prefixes and suffixes) give
  // distinct hashes under a key, and the key changes them.
  using npyguard::detail::hash_key;
  using npyguard::detail::keyed_short_hash;
  constexpr hash_key key{0x0123456789abcdefull, 0xfedcba9876543210ull};
  constexpr hash_key other{1, 2};
  std::vector<std::string> names;
  const std::size_t lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33};
  for (const std::size_t length : lengths) {
    for (int i = 0; i < 3000; ++i) {
      std::string name(length, 'f');
      for (std::size_t at = 0, v = static_cast<std::size_t>(i); at < length && v != 0; ++at, v /= 26) {
        name[length - 1 - at] = static_cast<char>('a' + v % 26);
      }
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<std::uint64_t> hashes;
  std::size_t same_under_other_key = 0;
  for (const std::string& name : names) {
    hashes.push_back(keyed_short_hash(name, key));
    if (keyed_short_hash(name, other) == hashes.back()) ++same_under_other_key;
  }
  std::sort(hashes.begin(), hashes.end());
  CHECK(std::adjacent_find(hashes.begin(), hashes.end()) == hashes.end());
  CHECK(same_under_other_key == 0);
  CHECK(keyed_short_hash("", key) != keyed_short_hash(std::string(1, '\0'), key));
  CHECK(keyed_short_hash("f0001", key) == keyed_short_hash(std::string("f0001"), key));
}

TEST_CASE("field names crafted to collide in the old duplicate-name table", "[hostile][names]") {
  // 36,000 names that formed one linear-probing cluster under the unkeyed
  // hash npyguard used up to e806355: about 1.25e9 probes, 3.7 s in a
  // release build then (and it grows quadratically). Now the names are
  // sorted by a keyed hash: milliseconds. The 20 s limit only turns a
  // return of the quadratic path into a failure instead of a stalled suite.
  const std::vector<std::string> names = npyguard_crafted::colliding_names(36000, 16, 11);
  std::string descr = "[";
  for (const std::string& name : names) descr += "('" + name + "', '|V0'), ";
  const std::string distinct = descr + "]";
  const std::string repeated = descr + "('" + names[20000] + "', '|V0')]";
  npyguard::options wide;
  wide.limits.max_header_bytes = 2u << 20;
  for (const std::string* list : {&distinct, &repeated}) {
    const auto bytes = std::make_shared<const std::string>(descr_file(*list, "(1,)"));
    const npyguard::result checked =
        within(std::chrono::seconds(20), [bytes, wide] { return check_bytes(*bytes, wide); });
    if (list == &distinct) {
      require_ok(checked);
      CHECK(checked.value().descr.fields.size() == names.size());
    } else {
      require_error(checked, error_code::duplicate_field_name, bytes->rfind("('" + names[20000]) + 1);
    }
  }
}
