//===- HostBandwidth.cpp - The CPU's streaming-read bandwidth -------------===//
#include "ti/Bench/HostBandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace ti::bench {

namespace {

/// Four independent sums so that loads are not serialised behind one add.
uint64_t sumWords(const uint64_t *begin, const uint64_t *end) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  const uint64_t *p = begin;
  for (; p + 4 <= end; p += 4) {
    a += p[0];
    b += p[1];
    c += p[2];
    d += p[3];
  }
  for (; p < end; ++p)
    a += *p;
  return a + b + c + d;
}

} // namespace

std::vector<double> measureHostBandwidth(uint64_t bytes, unsigned threads, int repetitions) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t words = std::max<uint64_t>(bytes / 8, threads);
  std::vector<uint64_t> buffer(words);
  for (size_t i = 0; i < words; ++i)
    buffer[i] = i; // Touch every page: the timed passes read memory, not zero pages.
  std::atomic<uint64_t> sink{0};
  auto pass = [&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        size_t begin = words * t / threads, end = words * (t + 1) / threads;
        sink += sumWords(buffer.data() + begin, buffer.data() + end);
      });
    for (std::thread &t : pool)
      t.join();
  };
  pass();
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    auto start = std::chrono::steady_clock::now();
    pass();
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    samples.push_back(double(words) * 8 / seconds.count() / 1e9);
  }
  return samples;
}

} // namespace ti::bench
