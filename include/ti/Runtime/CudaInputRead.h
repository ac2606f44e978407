//===- CudaInputRead.h - What reading a task's input costs ------*- C++ -*-===//
//
// Every GEMV task of the stream worker begins by reading its whole input
// vector, K tagged values (8 bytes each: the value and its step's tag), from
// L2, and every worker of a wave reads the same vector at about the same
// time. The 1B's down projection (K = 8,192) takes about 3 us for it on an
// H100 even when nothing is waiting (docs/PERFORMANCE.md, step 42): either
// its threads' rounds of loads, each waited for before the next is issued,
// or L2 serving the same lines to every SM at once. This measures both on a
// GPU, for the models' input lengths: every SM reading one vector in the
// worker's way (rounds of 4 pairs a thread), two rounds in flight, 16 pairs
// a thread in flight, one SM alone in the worker's way, and, on GPUs with
// the bulk-copy engine, behind bulk copies in flight from memory into shared
// memory, as the stream worker's producer keeps them while its consumers
// read: every SM reading and copying (in rounds, and 16 pairs at a time),
// and one SM reading while only the others copy or only it copies, which
// says whose copies a read waits behind. `tirun probe` reports it. The method is in lib/Runtime/cuda/InputRead.cu.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_CUDAINPUTREAD_H
#define TI_RUNTIME_CUDAINPUTREAD_H

#include "ti/Support/Status.h"

#include <cstdint>
#include <vector>

namespace ti {

struct InputReadOptions {
  /// The vectors' lengths in values (multiples of 512: whole rounds of the
  /// 256 reading threads' pairs): the 1B's and 8B's hidden sizes and FFN
  /// inputs.
  std::vector<uint32_t> lengths = {2048, 4096, 8192, 14336};
  /// Timed reads of each vector and way; every SM's reads count.
  int repetitions = 40;
  /// The copying way's load: the buffer each SM's copies stride over (much
  /// more than L2) and its ring (the built-in h200 target's stage and
  /// in-flight bytes: two 32 KiB copies).
  uint64_t copyBytes = 1ull << 30;
  uint32_t copyStageBytes = 32768;
  int copyStages = 2;
};

/// Nanoseconds for one SM to read a vector (from its 256 threads' first load
/// to the block's barrier after the last), the median over the SMs and the
/// repetitions.
struct InputReadResult {
  uint32_t length = 0; // Values.
  double roundsNs = 0;    // Every SM, rounds of 4 pairs a thread, each waited for.
  double pipelinedNs = 0; // Every SM, the next round issued before this one is waited for.
  double batchedNs = 0;   // Every SM, 16 pairs a thread in flight.
  double aloneNs = 0;     // One SM, rounds of 4 pairs.
  /// Behind bulk copies, measured only where the GPU has the bulk-copy
  /// engine (copiesMeasured), each beside what the copies streamed meanwhile
  /// (GB/s): every SM in rounds of 4 pairs while it copies; every SM with 16
  /// pairs a thread in flight while it copies; one SM in rounds while every
  /// other SM copies; one SM in rounds while it alone copies.
  bool copiesMeasured = false;
  double copyingNs = 0, copyingGBs = 0;
  double copyingBatchedNs = 0, copyingBatchedGBs = 0;
  double othersCopyingNs = 0, othersCopyingGBs = 0;
  double ownCopyingNs = 0, ownCopyingGBs = 0;
};

/// Measures GPU `device`. CUDA failures (no GPU, no cooperative launch) are
/// one-line errors; everything is freed.
StatusOr<std::vector<InputReadResult>> measureInputRead(int device,
                                                        const InputReadOptions &options);

} // namespace ti

#endif // TI_RUNTIME_CUDAINPUTREAD_H
