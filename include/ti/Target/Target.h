//===- Target.h - What the compiler knows about a GPU ------------*- C++ -*-===//
//
// A target description holds every fact and choice that makes one plan better
// than another on a given GPU: the number of workers (one block per SM), the
// worker's block size and register budget, the measured streaming bandwidth,
// when attention switches to its chunked form, how far row splits may be out of
// balance. Passes read it; the kernel never hard-codes any of it.
//
// Built-in targets: `rtx3050` (the TileInfer post's GPU) and `h200`. A target
// file (JSON, written by `tirun probe`) describes any other GPU.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TARGET_TARGET_H
#define TI_TARGET_TARGET_H

#include "ti/Support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ti {

struct Target {
  std::string name;
  std::string gpu;  // The GPU's marketing name, as the probe reports it.
  std::string arch; // "sm_90"
  uint32_t workers = 0;
  uint32_t threadsPerWorker = 1024;
  uint32_t maxRegisters = 64;
  double bandwidthGBs = 0;
  /// Contexts above this run attention in chunks, with a barrier between
  /// scores and values (the post used 384 on its 20 SMs).
  uint32_t attentionSplitContext = 384;
  /// The largest relative difference of the bytes that the active workers of
  /// a weight wave stream (0.01 = 1%).
  double balanceTolerance = 0.01;
  /// A hash of the worker binary the target was probed with; empty for the
  /// built-in targets, which were not probed.
  std::string workerFingerprint;

  /// A one-line description for plan headers and --stats.
  std::string describe() const;
};

/// The names of the built-in targets.
std::vector<std::string> builtinTargetNames();
/// A built-in target by name, or an error that lists the known names.
StatusOr<Target> builtinTarget(const std::string &name);
/// Reads a target file (JSON). Unknown keys are errors (a typo must not pass).
StatusOr<Target> readTargetFile(const std::string &path);
/// Parses target JSON text; `source` names it in errors.
StatusOr<Target> parseTargetJson(const std::string &text, const std::string &source);
/// The JSON text of a target (what the probe writes).
std::string targetToJson(const Target &target);

} // namespace ti

#endif // TI_TARGET_TARGET_H
