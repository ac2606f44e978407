//===- HostBandwidth.h - The CPU's streaming-read bandwidth -----*- C++ -*-===//
//
// The floor of the CPU backend: how fast this machine's cores together read a
// buffer much larger than their caches. Only so that `tirun bench` on a
// machine without a GPU reports a share of a floor that means something; the
// CPU executor is the reference, not a fast path.
//
//===----------------------------------------------------------------------===//
#ifndef TI_BENCH_HOSTBANDWIDTH_H
#define TI_BENCH_HOSTBANDWIDTH_H

#include <cstdint>
#include <vector>

namespace ti::bench {

/// GB/s (1e9 bytes) of each of `repetitions` timed passes, after one untimed
/// one, of `threads` threads (0: one per hardware thread) each summing its
/// share of a `bytes` buffer.
std::vector<double> measureHostBandwidth(uint64_t bytes, unsigned threads, int repetitions);

} // namespace ti::bench

#endif // TI_BENCH_HOSTBANDWIDTH_H
