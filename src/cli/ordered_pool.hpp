// Work done on several threads, results handed out in order: the pattern of
// check over many files, where the output must follow the arguments.
#ifndef NPYGUARD_CLI_ORDERED_POOL_HPP
#define NPYGUARD_CLI_ORDERED_POOL_HPP

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace npyguard_cli {

// Runs produce(c) for the chunks c = 0 .. chunks-1 on `jobs` threads and
// hands each result to consume(c, result) on the calling thread, in chunk
// order, as soon as its turn comes. The workers stay at most `ahead`
// chunks in front of the consumer, so memory does not grow with the number
// of chunks when the consumer is slow. waiting(c) is called on the calling
// thread before chunk c and about every 100 ms while it waits for it. With
// one job no thread is started: each chunk is produced just before it is
// consumed.
template <typename Result, typename Produce, typename Consume, typename Waiting>
void run_ordered(std::size_t chunks, unsigned jobs, std::size_t ahead, Produce produce, Consume consume,
                 Waiting waiting) {
  if (jobs <= 1) {
    for (std::size_t c = 0; c < chunks; ++c) {
      waiting(c);
      consume(c, produce(c));
    }
    return;
  }
  std::vector<Result> results(chunks);
  std::vector<char> done(chunks, 0);
  std::mutex lock;
  std::condition_variable ready; // a chunk the consumer waits for arrived
  std::condition_variable room;  // the consumer moved on
  bool consumer_waiting = false;
  std::size_t consumed = 0;
  std::atomic<std::size_t> next_chunk{0};
  const auto work = [&] {
    for (std::size_t c; (c = next_chunk.fetch_add(1)) < chunks;) {
      {
        std::unique_lock<std::mutex> guard(lock);
        room.wait(guard, [&] { return c < consumed + ahead; });
      }
      Result produced = produce(c);
      bool wake = false;
      {
        const std::lock_guard<std::mutex> guard(lock);
        results[c] = std::move(produced);
        done[c] = 1;
        wake = consumer_waiting;
      }
      if (wake) ready.notify_one();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < jobs; ++t) workers.emplace_back(work);
  for (std::size_t c = 0; c < chunks; ++c) {
    Result taken;
    {
      std::unique_lock<std::mutex> guard(lock);
      while (!done[c]) {
        consumer_waiting = true;
        ready.wait_for(guard, std::chrono::milliseconds(100));
        consumer_waiting = false;
        if (!done[c]) {
          guard.unlock();
          waiting(c);
          guard.lock();
        }
      }
      taken = std::move(results[c]);
      consumed = c + 1;
    }
    room.notify_all();
    consume(c, std::move(taken));
  }
  for (std::thread& worker : workers) worker.join();
}

} // namespace npyguard_cli

#endif
