//===- CudaBandwidth.h - A GPU's streaming-read bandwidth -------*- C++ -*-===//
//
// The bandwidth floor of every benchmark: how fast a GPU streams bytes from
// its memory when reading them the way the worker reads weights (16-byte
// loads, one 1024-thread block per SM). `tirun probe` writes the median into
// the target file's bandwidth_gbs. The method is in lib/Runtime/cuda/
// Bandwidth.cu.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_CUDABANDWIDTH_H
#define TI_RUNTIME_CUDABANDWIDTH_H

#include "ti/Support/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ti {

struct BandwidthOptions {
  /// The buffer read by each launch; rounded down to whole 16-byte vectors.
  /// 2.5 GiB: more than 40 times the L2 of every supported GPU.
  uint64_t bytes = 2560ull << 20;
  /// Timed launches; the median is the result.
  int repetitions = 20;
  /// Untimed launches first (clocks, TLBs).
  int warmups = 3;
};

struct BandwidthResult {
  double medianGBs = 0; // 1 GB = 1e9 bytes.
  double minGBs = 0;
  double maxGBs = 0;
  int repetitions = 0;
  uint64_t bytes = 0;          // Read by each launch.
  uint64_t l2Bytes = 0;        // The device's L2, for the ratio to `bytes`.
  int blocks = 0;              // Grid: one block per SM.
  int threads = 0;             // Per block.
  std::vector<double> samples; // GB/s of each timed launch, in order.
};

/// Measures GPU `device`'s streaming-read bandwidth. CUDA failures (no GPU,
/// out of memory) are one-line errors; the buffer is always freed.
StatusOr<BandwidthResult> measureStreamingBandwidth(int device, const BandwidthOptions &options);

} // namespace ti

#endif // TI_RUNTIME_CUDABANDWIDTH_H
