// Work done on several threads, results handed out in order: the pattern of
// check over many files, where the output must follow the arguments and the
// files are found while they are checked.
#ifndef NPYGUARD_CLI_ORDERED_POOL_HPP
#define NPYGUARD_CLI_ORDERED_POOL_HPP

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace npyguard_cli {

// Chunks of work from a source whose length is not known in advance, done
// on `jobs` threads and handed to the calling thread in order.
//
// fill(slot) puts the next chunk into a Slot and returns true, or returns
// false when the source is exhausted; it is never called on two threads at
// once, and chunk c is filled before chunk c + 1. produce(slot) does the
// chunk's work on a worker; consume(c, slot) takes chunk c on the calling
// thread, in chunk order, as soon as its turn comes. There are `ahead`
// slots, reused in turn: the workers stay at most `ahead` chunks in front of
// the consumer, so memory does not grow with the number of chunks, and a
// Slot's buffers (kept from its last chunk) spare allocations. waiting(c) is
// called on the calling thread before chunk c and about every 100 ms while
// it waits for it. help() is called on a worker before it fills its next
// chunk, outside the fill lock: work the source can have done in parallel
// (the walk lists the directories it will enter), so that fill, which runs
// one at a time, finds it done. With one job no thread is started and one
// slot is used: each chunk is filled and produced just before it is
// consumed, and help() is never called.
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
  std::vector<Slot> slots(ahead);
  std::vector<char> done(ahead, 0); // slot c % ahead holds chunk c, produced
  std::mutex source_lock;           // fill, filled, exhausted
  std::size_t filled = 0;
  bool exhausted = false;
  std::mutex lock;               // done, consumed, end, consumer_waiting
  std::condition_variable ready; // a chunk the consumer waits for arrived, or the end
  std::condition_variable room;  // the consumer moved on
  bool consumer_waiting = false;
  std::size_t consumed = 0;
  std::size_t end = std::numeric_limits<std::size_t>::max(); // the number of chunks, once known
  const auto work = [&] {
    for (;;) {
      help();
      std::size_t c = 0;
      {
        const std::lock_guard<std::mutex> source(source_lock);
        if (exhausted) return;
        c = filled;
        {
          std::unique_lock<std::mutex> guard(lock);
          room.wait(guard, [&] { return c < consumed + ahead; });
        }
        if (!fill(slots[c % ahead])) {
          exhausted = true;
          bool wake = false;
          {
            const std::lock_guard<std::mutex> guard(lock);
            end = c;
            wake = consumer_waiting;
          }
          if (wake) ready.notify_one();
          return;
        }
        ++filled;
      }
      produce(slots[c % ahead]);
      bool wake = false;
      {
        const std::lock_guard<std::mutex> guard(lock);
        done[c % ahead] = 1;
        wake = consumer_waiting;
      }
      if (wake) ready.notify_one();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < jobs; ++t) workers.emplace_back(work);
  for (std::size_t c = 0;; ++c) {
    waiting(c);
    {
      std::unique_lock<std::mutex> guard(lock);
      while (!done[c % ahead] && c < end) {
        consumer_waiting = true;
        ready.wait_for(guard, std::chrono::milliseconds(100));
        consumer_waiting = false;
        if (!done[c % ahead] && c < end) {
          guard.unlock();
          waiting(c);
          guard.lock();
        }
      }
      if (!done[c % ahead]) break; // c == end
    }
    consume(c, slots[c % ahead]); // no worker touches the slot until consumed moves past it
    {
      const std::lock_guard<std::mutex> guard(lock);
      done[c % ahead] = 0;
      consumed = c + 1;
    }
    room.notify_all();
  }
  for (std::thread& worker : workers) worker.join();
}

} // namespace npyguard_cli

#endif
