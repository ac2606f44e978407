//===- CudaHandOff.h - What one hand-off through L2 costs -------*- C++ -*-===//
//
// The stream worker's waves hand their outputs on through L2: a writer's
// relaxed 8-byte store, a reader's relaxed loads until the value is there
// (tagged values, docs/compiler.md). Each layer's chain of waves pays that
// latency several times, and the weight ring must cover it
// (docs/PERFORMANCE.md). This measures its floor on a GPU: one thread on one
// SM and one on another pass a counter back and forth, idle and while the
// other SMs stream from memory at full bandwidth, as the worker's producers
// do during a hand-off, either with plain loads or, on GPUs with the
// bulk-copy engine (sm_90 on), with the producers' own bulk copies into a
// shared-memory ring. `tirun probe` reports it. The method is in
// lib/Runtime/cuda/HandOff.cu.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_CUDAHANDOFF_H
#define TI_RUNTIME_CUDAHANDOFF_H

#include "ti/Support/Status.h"

#include <cstdint>

namespace ti {

struct HandOffOptions {
  /// Timed round trips a launch (each two hand-offs).
  int rounds = 2000;
  /// Untimed round trips first (the streaming SMs up to speed).
  int warmupRounds = 500;
  /// Launches a pair of SMs and a load; their median counts.
  int repetitions = 3;
  /// The buffer the streaming SMs read, over and over (much more than L2).
  uint64_t streamBytes = 1ull << 30;
  /// The bulk-copy loads' ring on each SM: stages of bulkStageBytes, all in
  /// flight (the built-in h200 target's stream_stage_bytes and
  /// stream_in_flight_bytes: two 32 KiB copies).
  uint32_t bulkStageBytes = 32768;
  int bulkStages = 2;
};

/// One-way latency of a hand-off (a store seen by a polling thread on
/// another SM), in nanoseconds: medians over several pairs of SMs.
struct HandOffResult {
  double idleNs = 0;      // nothing else running
  double othersStreamNs = 0; // every other SM streaming from memory
  double allStreamNs = 0; // the two SMs' other warps streaming too
  /// What the streaming SMs read meanwhile, GB/s (medians over the launches).
  double othersStreamGBs = 0;
  double allStreamGBs = 0;
  /// The same two loads made of one thread an SM copying with the bulk-copy
  /// engine into a ring in shared memory, as the Stream worker's producer
  /// does; measured only where the GPU has the engine (bulkMeasured).
  bool bulkMeasured = false;
  double othersBulkNs = 0;
  double allBulkNs = 0;
  double othersBulkGBs = 0;
  double allBulkGBs = 0;
  int pairs = 0;          // pairs of SMs measured
  int rounds = 0;
};

/// Measures GPU `device`'s hand-off latency. CUDA failures (no GPU, no
/// cooperative launch) are one-line errors; everything is freed.
StatusOr<HandOffResult> measureHandOff(int device, const HandOffOptions &options);

} // namespace ti

#endif // TI_RUNTIME_CUDAHANDOFF_H
