// npyguard benchmarks: full validation of .npy headers from memory, side by
// side with a naive reference parser written in the style of the popular C++
// .npy readers (find the keys with std::string::find, take substrings, stoul
// the dimensions, validate nothing else). Both run on the same buffers in the
// same process, so the reference is measured under identical conditions.
//
// Every benchmark reports time per header and, through SetBytesProcessed,
// MB/s of *header* bytes (preamble + HEADER_LEN); the array data is never
// read by either side (npyguard only compares the buffer size with nbytes).
// It also reports, per header, the minor page faults ("minflt") and the heap
// allocations ("allocs": calls of operator new, counted by the replacement
// below, in the library and the reference alike).

#include <benchmark/benchmark.h>

#include <npyguard/npyguard.hpp>

#include "crafted_names.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "heap_meter.hpp"

using npyguard_bench::heap_meter;

namespace {

// ---------------------------------------------------------------------------
// Building .npy files the way numpy.lib.format writes them.
// ---------------------------------------------------------------------------

struct npy_file {
  std::vector<unsigned char> bytes; // preamble + header + data (zeroed)
  std::size_t header_bytes = 0;     // preamble + HEADER_LEN (the data offset)
};

// `dict` is the header dict text without padding, e.g.
// "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }".
// Pads with spaces and a final '\n' so the data offset is a multiple of 64,
// chooses version 1.0 or, when HEADER_LEN does not fit in 16 bits, 2.0, and
// appends `data_bytes` zero bytes.
npy_file make_npy(const std::string& dict, std::uint64_t data_bytes) {
  std::size_t preamble = 10; // magic(6) + version(2) + uint16 HEADER_LEN
  std::uint8_t major = 1;
  std::size_t unpadded = dict.size() + 1; // + the final '\n'
  std::size_t total = (preamble + unpadded + 63) / 64 * 64;
  if (total - preamble > 0xFFFFu) {
    preamble = 12; // version 2.0: uint32 HEADER_LEN
    major = 2;
    total = (preamble + unpadded + 63) / 64 * 64;
  }
  const std::size_t header_len = total - preamble;

  std::string head("\x93NUMPY", 6);
  head += static_cast<char>(major);
  head += '\0';
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) {
    head += static_cast<char>((header_len >> (8 * i)) & 0xFFu);
  }
  head += dict;
  head.append(total - 1 - head.size(), ' ');
  head += '\n';

  npy_file file;
  file.header_bytes = total;
  file.bytes.assign(head.begin(), head.end());
  file.bytes.resize(total + static_cast<std::size_t>(data_bytes), 0);
  return file;
}

// numpy's typical header: np.save of np.zeros((1000, 1000)).
const npy_file& typical_file() {
  static const npy_file file =
      make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }", std::uint64_t{1000} * 1000 * 8);
  return file;
}

// A structured dtype with n fields cycling through five type strings, shape
// (10,): "[('f0000', '<f8'), ('f0001', '<i4'), ...]" as numpy's repr writes it.
const char* const struct_types[] = {"<f8", "<i4", "|u1", "<c16", "|S7"};
const std::uint64_t struct_sizes[] = {8, 4, 1, 16, 7};

npy_file make_struct_file(int n) {
  std::string dict = "{'descr': [";
  std::uint64_t itemsize = 0;
  char name[16];
  for (int i = 0; i < n; ++i) {
    if (i != 0) {
      dict += ", ";
    }
    std::snprintf(name, sizeof name, "f%04d", i);
    dict += "('";
    dict += name;
    dict += "', '";
    dict += struct_types[i % 5];
    dict += "')";
    itemsize += struct_sizes[i % 5];
  }
  dict += "], 'fortran_order': False, 'shape': (10,), }";
  return make_npy(dict, itemsize * 10);
}

const npy_file& struct_file(int n) {
  // Built once per N; std::map keeps references valid as entries are added.
  static std::map<int, npy_file> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    it = cache.emplace(n, make_struct_file(n)).first;
  }
  return it->second;
}

// ---------------------------------------------------------------------------
// Field-name sets for the duplicate-name check (issue 11, item 4; SPEC.md §2:
// crafted names may cost at most 2x random names of the same length).
//
// Each file is one structured dtype "[('NAME', '|V0'), ...]", shape (1,), so
// the data is empty, with as many fields as fit in the target header size
// (preamble + HEADER_LEN <= 1 MiB or 4 MiB; always a version 2.0 file). All
// names of one file have the same length L:
//   random         L = 16,  uniform over [A-Za-z0-9]
//   colliding      L = 16,  random names kept only if the OLD name_table hash
//                  (FNV-1a 64, folded h ^ (h >> 32), masked by slots-1) puts
//                  them in the first 1/64 of the final table: one cluster
//   random         L = 128, as above, the control for shared_prefix
//   shared_prefix  L = 128, 120 identical bytes then 8 random [A-Za-z0-9]
// Everything is deterministic (fixed seeds), built once per process and
// cached, outside the timed loop.
// ---------------------------------------------------------------------------

enum class name_kind { random, colliding, shared_prefix };

using npyguard_crafted::name_alphabet;
using npyguard_crafted::name_alphabet_size;
using npyguard_crafted::splitmix64;

// Bytes one field adds to the dict: "('" NAME "', '|V0')" plus ", " between.
constexpr std::size_t field_overhead = 2 + 4 + 3 + 2 + 2;
const std::string names_dict_head = "{'descr': [";
const std::string names_dict_tail = "], 'fortran_order': False, 'shape': (1,), }";

// The largest field count whose file (v2.0 preamble, padded to 64, final
// '\n') has preamble + HEADER_LEN <= target.
std::size_t names_file_size(std::size_t n, std::size_t len) {
  const std::size_t dict = names_dict_head.size() + n * (len + field_overhead) - 2 + names_dict_tail.size();
  return (12 + dict + 1 + 63) / 64 * 64; // v2.0 preamble, final '\n', padded to 64
}

std::size_t names_field_count(std::size_t target, std::size_t len) {
  std::size_t n = target / (len + field_overhead) + 1;
  while (n > 1 && names_file_size(n, len) > target) {
    --n;
  }
  return n;
}

std::vector<std::string> make_names(name_kind kind, std::size_t n, std::size_t len, std::uint64_t seed) {
  if (kind == name_kind::colliding) return npyguard_crafted::colliding_names(n, len, seed);
  splitmix64 rng{seed};
  std::vector<std::string> names;
  names.reserve(n);
  std::unordered_set<std::string> seen;
  seen.reserve(n * 2);

  const std::size_t prefix = kind == name_kind::shared_prefix ? len - 8 : 0;
  std::string name(len, 'a');
  for (std::size_t i = 0; i < prefix; ++i) {
    name[i] = name_alphabet[i % name_alphabet_size]; // the same for every name
  }
  while (names.size() < n) {
    for (std::size_t i = prefix; i < len; ++i) {
      name[i] = rng.name_char();
    }
    if (seen.insert(name).second) {
      names.push_back(name);
    }
  }
  return names;
}

npy_file make_names_file(const std::vector<std::string>& names) {
  std::string dict = names_dict_head;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i != 0) {
      dict += ", ";
    }
    dict += "('";
    dict += names[i];
    dict += "', '|V0')";
  }
  dict += names_dict_tail;
  return make_npy(dict, 0);
}

struct names_case {
  name_kind kind;
  std::size_t len;    // L, bytes per name
  std::size_t target; // header size: preamble + HEADER_LEN <= target
};

const npy_file& names_file(const names_case& c) {
  static std::map<std::tuple<int, std::size_t, std::size_t>, npy_file> cache;
  const auto key = std::make_tuple(static_cast<int>(c.kind), c.len, c.target);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const std::size_t n = names_field_count(c.target, c.len);
    const std::uint64_t seed =
        0x6e707967ull * 1000003u + static_cast<std::uint64_t>(c.kind) * 7919u + c.len * 131u + c.target;
    it = cache.emplace(key, make_names_file(make_names(c.kind, n, c.len, seed))).first;
  }
  return it->second;
}

// ---------------------------------------------------------------------------
// The naive reference (cnpy / libnpy style). Written for this benchmark. It
// does NOT validate: it trusts the magic, ignores padding, accepts any text
// around the keys, never checks the descr grammar, the field list, the
// data size or integer overflow. It is the lower bound of "parsing" a header.
// ---------------------------------------------------------------------------

struct naive_header {
  std::string descr; // the type string, or the raw field list
  bool fortran_order = false;
  std::vector<std::size_t> shape;
  std::size_t field_count = 0; // structs only: number of "('" in the list
  std::size_t header_len = 0;
};

// Reads HEADER_LEN from the preamble and copies the header into a
// std::string, like the popular readers do. Returns false on a short buffer.
bool naive_header_string(const unsigned char* data, std::size_t size, std::string& header, std::size_t& header_len) {
  if (size < 10) {
    return false;
  }
  const unsigned major = data[6];
  std::size_t start = 10;
  if (major == 1) {
    header_len = static_cast<std::size_t>(data[8]) | (static_cast<std::size_t>(data[9]) << 8);
  } else {
    if (size < 12) {
      return false;
    }
    header_len = static_cast<std::size_t>(data[8]) | (static_cast<std::size_t>(data[9]) << 8) |
                 (static_cast<std::size_t>(data[10]) << 16) | (static_cast<std::size_t>(data[11]) << 24);
    start = 12;
  }
  if (size - start < header_len) {
    return false;
  }
  header.assign(reinterpret_cast<const char*>(data) + start, header_len);
  return true;
}

// fortran_order and shape, found by key name. Throws (std::stoul) on garbage.
void naive_order_and_shape(const std::string& header, naive_header& out) {
  const std::size_t order_pos = header.find("fortran_order");
  if (order_pos != std::string::npos) {
    const std::size_t colon = header.find(':', order_pos);
    out.fortran_order = header.substr(colon + 1, 5).find("True") != std::string::npos;
  }
  const std::size_t shape_pos = header.find("shape");
  if (shape_pos != std::string::npos) {
    const std::size_t open = header.find('(', shape_pos);
    const std::size_t close = header.find(')', open);
    std::string dims = header.substr(open + 1, close - open - 1);
    std::size_t pos = 0;
    while (pos < dims.size()) {
      std::size_t comma = dims.find(',', pos);
      if (comma == std::string::npos) {
        comma = dims.size();
      }
      std::string item = dims.substr(pos, comma - pos);
      if (item.find_first_of("0123456789") != std::string::npos) {
        out.shape.push_back(static_cast<std::size_t>(std::stoul(item)));
      }
      pos = comma + 1;
    }
  }
}

// Shared by both naive parsers: copy the header, find "descr" (npos on failure).
std::size_t naive_find_descr(const unsigned char* data, std::size_t size, std::string& header, naive_header& out) {
  if (!naive_header_string(data, size, header, out.header_len)) {
    return std::string::npos;
  }
  return header.find("descr");
}

// Typical header: descr is a quoted type string.
bool naive_parse_simple(const unsigned char* data, std::size_t size, naive_header& out) {
  std::string header;
  const std::size_t descr_pos = naive_find_descr(data, size, header, out);
  if (descr_pos == std::string::npos) {
    return false;
  }
  const std::size_t colon = header.find(':', descr_pos);
  const std::size_t q1 = header.find('\'', colon);
  const std::size_t q2 = header.find('\'', q1 + 1);
  out.descr = header.substr(q1 + 1, q2 - q1 - 1);
  naive_order_and_shape(header, out);
  return true;
}

// Structured header: find the bounds of the descr list and count fields by
// scanning for "('". Field names and types are not parsed or checked.
bool naive_parse_struct(const unsigned char* data, std::size_t size, naive_header& out) {
  std::string header;
  const std::size_t descr_pos = naive_find_descr(data, size, header, out);
  if (descr_pos == std::string::npos) {
    return false;
  }
  const std::size_t open = header.find('[', descr_pos);
  const std::size_t close = header.find(']', open);
  if (open == std::string::npos || close == std::string::npos) {
    return false;
  }
  out.descr = header.substr(open, close - open + 1);
  for (std::size_t pos = out.descr.find("('"); pos != std::string::npos; pos = out.descr.find("('", pos + 2)) {
    ++out.field_count;
  }
  naive_order_and_shape(header, out);
  return true;
}

// ---------------------------------------------------------------------------
// Benchmarks.
// ---------------------------------------------------------------------------

bool check_npyguard(benchmark::State& state, const npy_file& file, const npyguard::options& opts) {
  const npyguard::result r = npyguard::validate_buffer(file.bytes.data(), file.bytes.size(), opts);
  if (!r.ok()) {
    const npyguard::error& e = r.failure();
    const std::string msg = std::string(npyguard::error_code_name(e.code)) + " at offset " +
                            (e.offset ? std::to_string(*e.offset) : std::string("-")) + ": " + e.message;
    std::fprintf(stderr, "npyguard rejected the generated header: %s\n", msg.c_str());
    state.SkipWithError(msg.c_str());
    return false;
  }
  return true;
}

void set_counters(benchmark::State& state, const npy_file& file, const heap_meter& meter) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(file.header_bytes));
  state.counters["header_bytes"] = static_cast<double>(file.header_bytes);
  meter.report(state);
}

// The reusable validator (npyguard/npy/validator.hpp), kept across the
// timed loop as a service keeps one per thread. The first call, outside the
// loop, sizes its buffers.
void run_npyguard(benchmark::State& state, const npy_file& file, const npyguard::options& opts = npyguard::options{}) {
  if (!check_npyguard(state, file, opts)) {
    return;
  }
  npyguard::validator v;
  benchmark::DoNotOptimize(v.validate_buffer(file.bytes.data(), file.bytes.size(), opts));
  const heap_meter meter;
  for (auto _ : state) {
    const npyguard::result& r = v.validate_buffer(file.bytes.data(), file.bytes.size(), opts);
    benchmark::DoNotOptimize(&r);
  }
  set_counters(state, file, meter);
}

// The free function: a new result (model) per call, in the thread's
// workspace.
void run_free_function(benchmark::State& state, const npy_file& file) {
  if (!check_npyguard(state, file, npyguard::options{})) {
    return;
  }
  const heap_meter meter;
  for (auto _ : state) {
    npyguard::result r = npyguard::validate_buffer(file.bytes.data(), file.bytes.size());
    benchmark::DoNotOptimize(r);
  }
  set_counters(state, file, meter);
}

template <typename Parse>
void run_naive(benchmark::State& state, const npy_file& file, Parse parse) {
  {
    naive_header h;
    if (!parse(file.bytes.data(), file.bytes.size(), h)) {
      state.SkipWithError("naive reference failed to parse the generated header");
      return;
    }
  }
  const heap_meter meter;
  for (auto _ : state) {
    naive_header h;
    bool ok = parse(file.bytes.data(), file.bytes.size(), h);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(h);
  }
  set_counters(state, file, meter);
}

void BM_npyguard_typical(benchmark::State& state) { run_npyguard(state, typical_file()); }

void BM_reference_naive_typical(benchmark::State& state) { run_naive(state, typical_file(), naive_parse_simple); }

void BM_npyguard_struct(benchmark::State& state) { run_npyguard(state, struct_file(static_cast<int>(state.range(0)))); }

void BM_validate_buffer_typical(benchmark::State& state) { run_free_function(state, typical_file()); }

void BM_validate_buffer_struct(benchmark::State& state) {
  run_free_function(state, struct_file(static_cast<int>(state.range(0))));
}

void BM_reference_naive_struct(benchmark::State& state) {
  run_naive(state, struct_file(static_cast<int>(state.range(0))), naive_parse_struct);
}

// A service's loop over uploads of mixed sizes: each iteration validates the
// next header of a cycle of struct headers (250, 4000, 500, 2000 and 1000
// fields) and the typical one, the pattern under which freeing a large
// result hands memory back to the kernel and the next large one faults it in
// again. Bytes and time are per header.
void BM_npyguard_interleaved(benchmark::State& state) {
  const std::vector<const npy_file*> cycle = {&struct_file(250),  &typical_file(), &struct_file(4000),
                                              &struct_file(500),  &typical_file(), &struct_file(2000),
                                              &struct_file(1000), &typical_file()};
  std::int64_t bytes = 0;
  for (const npy_file* file : cycle) {
    if (!check_npyguard(state, *file, npyguard::options{})) return;
  }
  npyguard::validator v;
  for (const npy_file* file : cycle) {
    benchmark::DoNotOptimize(v.validate_buffer(file->bytes.data(), file->bytes.size()));
  }
  const heap_meter meter;
  std::size_t next = 0;
  for (auto _ : state) {
    const npy_file& file = *cycle[next];
    next = next + 1 == cycle.size() ? 0 : next + 1;
    const npyguard::result& r = v.validate_buffer(file.bytes.data(), file.bytes.size());
    benchmark::DoNotOptimize(&r);
    bytes += static_cast<std::int64_t>(file.header_bytes);
  }
  state.SetBytesProcessed(bytes);
  meter.report(state);
}

// Many fields of one name length; the header limit is raised to fit.
void BM_npyguard_names(benchmark::State& state, names_case c) {
  const npy_file& file = names_file(c);
  npyguard::options opts{};
  opts.limits.max_header_bytes = static_cast<std::uint32_t>(file.header_bytes);
  run_npyguard(state, file, opts);
  state.counters["fields"] = static_cast<double>(names_field_count(c.target, c.len));
  state.counters["name_len"] = static_cast<double>(c.len);
}

} // namespace

BENCHMARK(BM_npyguard_typical);
BENCHMARK(BM_reference_naive_typical);
BENCHMARK(BM_npyguard_struct)->Arg(250)->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000);
BENCHMARK(BM_reference_naive_struct)->Arg(250)->Arg(500)->Arg(1000)->Arg(2000)->Arg(4000);
BENCHMARK(BM_npyguard_interleaved);
BENCHMARK(BM_validate_buffer_typical);
BENCHMARK(BM_validate_buffer_struct)->Arg(250)->Arg(2000)->Arg(4000);

// BM_npyguard_names/<kind>/L<len>/<size>: registered by hand for readable
// names; crafted rows sit next to the random row of the same name length.
namespace {
const bool names_registered = [] {
  struct row {
    const char* label;
    name_kind kind;
    std::size_t len;
  };
  const row rows[] = {{"random/L16", name_kind::random, 16},
                      {"colliding/L16", name_kind::colliding, 16},
                      {"random/L128", name_kind::random, 128},
                      {"shared_prefix/L128", name_kind::shared_prefix, 128}};
  const std::pair<const char*, std::size_t> sizes[] = {{"1MiB", std::size_t{1} << 20}, {"4MiB", std::size_t{4} << 20}};
  for (const auto& size : sizes) {
    for (const row& r : rows) {
      const std::string name = std::string("BM_npyguard_names/") + r.label + "/" + size.first;
      benchmark::RegisterBenchmark(name.c_str(), BM_npyguard_names, names_case{r.kind, r.len, size.second})
          ->Unit(benchmark::kMillisecond);
    }
  }
  return true;
}();
} // namespace

BENCHMARK_MAIN();
