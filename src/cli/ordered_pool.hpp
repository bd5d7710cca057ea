// Work done on several threads, results handed out in order: the pattern of
// check over many files, where the output must follow the arguments and the
// files are found while they are checked.
#ifndef NPYGUARD_CLI_ORDERED_POOL_HPP
#define NPYGUARD_CLI_ORDERED_POOL_HPP

#include <sched.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace npyguard_cli {

// Chunks of work from a source whose length is not known in advance, done
// on `jobs` threads, the calling thread one of them, and handed to the
// calling thread in order.
//
// fill(slot) puts the next chunk into a Slot and returns true, or returns
// false when the source is exhausted; it runs on the calling thread only, so
// what the source opens (the walk's directories) is the calling thread's.
// produce(slot) does the chunk's work, on any of the threads; each worker
// thread has a descriptor table of its own (unshare(CLONE_FILES), where the
// system allows it), so produce must close what it opens and use no
// descriptor fill opened. consume(c, slot) takes chunk c on the calling
// thread, in chunk order.
//
// The calling thread fills chunks while the window allows, consumes each
// chunk whose turn has come, produces the oldest chunk no worker has taken
// when it has nothing else to do, and sleeps only when every chunk is taken
// and the one whose turn it is is not done. So on a machine with as many
// cores as jobs no third thread wakes once a chunk. There are `ahead` slots,
// reused in turn: the work stays at most `ahead` chunks in front of the
// output, so memory does not grow with the number of chunks, and a Slot's
// buffers (kept from its last chunk) spare allocations. waiting(c) is called
// before the calling thread looks at chunk c and about every 100 ms while it
// sleeps waiting for it. help() is called on a worker before it looks for a
// chunk: work the source can have done in parallel with fill (the walk lists
// the directories it will enter), under the same rule as produce. With one
// job no thread is started and one slot is used: each chunk is filled and
// produced just before it is consumed, and help() is never called.
template <typename Slot, typename Fill, typename Produce, typename Consume, typename Waiting, typename Help>
void run_ordered(unsigned jobs, std::size_t ahead, Fill fill, Produce produce, Consume consume, Waiting waiting,
                 Help help) {
  if (jobs <= 1 || ahead < 2) {
    Slot slot;
    for (std::size_t c = 0;; ++c) {
      waiting(c);
      if (!fill(slot)) return;
      produce(slot);
      consume(c, slot);
    }
  }
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<Slot> slots(ahead);
  std::vector<char> done(ahead, 0); // slot c % ahead holds chunk c, produced
  std::mutex lock;
  std::condition_variable ready; // a chunk the calling thread waits for is done
  std::condition_variable work;  // a chunk was filled, or the end is known
  std::size_t filled = 0;        // chunks filled
  std::size_t taken = 0;         // chunks taken to be produced
  std::size_t consumed = 0;
  std::size_t end = none; // the number of chunks, once known
  bool consumer_waiting = false;
  const auto worker = [&] {
    // A table of its own: opening and closing a file then takes no lock
    // the other threads take, and a descriptor it reads is not shared.
    // Where the system refuses, the table stays shared, which is correct too.
    (void)::unshare(CLONE_FILES);
    for (;;) {
      help();
      std::unique_lock<std::mutex> guard(lock);
      work.wait(guard, [&] { return taken < filled || end != none; });
      if (taken == filled) return; // the end, and nothing left to take
      const std::size_t c = taken++;
      guard.unlock();
      produce(slots[c % ahead]);
      guard.lock();
      done[c % ahead] = 1;
      if (consumer_waiting) ready.notify_one();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < jobs; ++t) workers.emplace_back(worker);
  std::unique_lock<std::mutex> guard(lock);
  for (std::size_t c = 0;;) {
    guard.unlock();
    waiting(c);
    guard.lock();
    if (c == end) break;
    if (done[c % ahead] != 0) {
      guard.unlock();
      consume(c, slots[c % ahead]); // no worker touches the slot until consumed moves past it
      guard.lock();
      done[c % ahead] = 0;
      consumed = ++c;
      continue;
    }
    if (end == none && filled < consumed + ahead) {
      const std::size_t f = filled;
      guard.unlock();
      const bool more = fill(slots[f % ahead]);
      guard.lock();
      if (more) {
        filled = f + 1;
        work.notify_one();
      } else {
        end = f;
        work.notify_all();
      }
      continue;
    }
    if (taken < filled) {
      const std::size_t t = taken++;
      guard.unlock();
      produce(slots[t % ahead]);
      guard.lock();
      done[t % ahead] = 1;
      continue;
    }
    // Every chunk is taken, and chunk c is a worker's: wait for it.
    consumer_waiting = true;
    if (ready.wait_for(guard, std::chrono::milliseconds(100), [&] { return done[c % ahead] != 0; })) {
      consumer_waiting = false;
      continue;
    }
    consumer_waiting = false;
  }
  guard.unlock();
  for (std::thread& thread : workers) thread.join();
}

} // namespace npyguard_cli

#endif
