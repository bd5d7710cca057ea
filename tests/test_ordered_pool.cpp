// run_ordered (src/cli/ordered_pool.hpp), the pool behind check's -j: every
// chunk consumed once, in order, on the calling thread; fill on the calling
// thread, in order; never more than `ahead` chunks in flight; and no more
// threads at work than `jobs`, the calling thread one of them.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/ordered_pool.hpp"

namespace {

struct slot {
  std::size_t chunk = 0;
  std::size_t produced = 0;
};

struct observed {
  std::vector<std::size_t> consumed;
  std::vector<std::size_t> waited;
  std::set<std::thread::id> threads; // those that filled, produced or consumed
  std::size_t most_in_flight = 0;
  bool fill_overlapped = false;
  bool filled_elsewhere = false;
  bool helped_here = false; // help() is for the workers
  bool consumed_elsewhere = false;
};

// `chunks` chunks; produce spins a few microseconds, longer for every
// seventh chunk, so that chunks finish out of order.
observed run(unsigned jobs, std::size_t ahead, std::size_t chunks) {
  observed seen;
  std::mutex seen_lock;
  const auto note_thread = [&] {
    const std::lock_guard<std::mutex> guard(seen_lock);
    seen.threads.insert(std::this_thread::get_id());
  };
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> filling{0};
  std::atomic<std::size_t> filled{0};
  std::atomic<std::size_t> consumed{0};
  npyguard_cli::run_ordered<slot>(
      jobs, ahead,
      [&](slot& s) {
        note_thread();
        if (std::this_thread::get_id() != caller) seen.filled_elsewhere = true;
        if (filling.fetch_add(1) != 0) seen.fill_overlapped = true;
        const std::size_t c = filled.load();
        const bool more = c < chunks;
        if (more) {
          s.chunk = c;
          s.produced = 0;
          filled.store(c + 1);
          const std::size_t in_flight = c + 1 - consumed.load();
          const std::lock_guard<std::mutex> guard(seen_lock);
          if (in_flight > seen.most_in_flight) seen.most_in_flight = in_flight;
        }
        filling.fetch_sub(1);
        return more;
      },
      [&](slot& s) {
        note_thread();
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(s.chunk % 7 == 0 ? 200 : 5);
        while (std::chrono::steady_clock::now() < until) {}
        s.produced = s.chunk * 3 + 1;
      },
      [&](std::size_t c, const slot& s) {
        note_thread();
        if (std::this_thread::get_id() != caller) seen.consumed_elsewhere = true;
        seen.consumed.push_back(s.produced == s.chunk * 3 + 1 && s.chunk == c ? c : chunks + 1);
        consumed.store(c + 1);
      },
      [&](std::size_t c) {
        if (std::this_thread::get_id() != caller) seen.consumed_elsewhere = true;
        seen.waited.push_back(c);
      },
      [&] {
        if (std::this_thread::get_id() == caller) seen.helped_here = true;
      });
  return seen;
}

} // namespace

TEST_CASE("run_ordered consumes every chunk once, in order, with at most `ahead` in flight and `jobs` threads",
          "[cli][walk][pool]") {
  for (const unsigned jobs : {1u, 2u, 3u, 8u}) {
    for (const std::size_t ahead : {std::size_t{2}, std::size_t{3}, std::size_t{32}}) {
      for (const std::size_t chunks : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{97}}) {
        INFO("jobs " << jobs << ", ahead " << ahead << ", chunks " << chunks);
        const observed seen = run(jobs, ahead, chunks);
        std::vector<std::size_t> expected(chunks);
        for (std::size_t c = 0; c < chunks; ++c) expected[c] = c;
        CHECK(seen.consumed == expected);
        CHECK_FALSE(seen.fill_overlapped);
        CHECK_FALSE(seen.filled_elsewhere);
        CHECK_FALSE(seen.helped_here);
        CHECK_FALSE(seen.consumed_elsewhere);
        CHECK(seen.most_in_flight <= (jobs == 1 ? 1 : ahead));
        // The calling thread works too: jobs threads in all, not jobs + 1.
        CHECK(seen.threads.size() <= jobs);
        // waiting(c) comes before chunk c is consumed, and c never goes back.
        REQUIRE_FALSE(seen.waited.empty());
        for (std::size_t k = 1; k < seen.waited.size(); ++k) CHECK(seen.waited[k - 1] <= seen.waited[k]);
        CHECK(seen.waited.back() == chunks);
      }
    }
  }
}
