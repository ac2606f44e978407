//===- LoadedPlan.h - A plan and its weights, checked -----------*- C++ -*-===//
//
// What both executors start from. Loading checks everything before anything
// runs, in order: the plan file (identifier, FlatBuffers verifier, fields), the
// plan verifier (the same library the compiler ran), the weights file's header,
// and the weights against the plan (layout hash, sizes, tensor table). The
// first problem is the error; nothing is half-loaded.
//
// Ownership: owns the plan and the weights mapping. Immutable after loading;
// safe to share between threads.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_LOADEDPLAN_H
#define TI_RUNTIME_LOADEDPLAN_H

#include "ti/Plan/Plan.h"
#include "ti/Support/Status.h"
#include "ti/Runtime/Select.h"
#include "ti/Weights/WeightsFile.h"

#include <memory>
#include <string>
#include <vector>

namespace ti {

struct LoadedPlan {
  plan::Plan plan;
  std::unique_ptr<WeightsFile> weights;
  /// Task indices of each wave, in plan order (workers ascending).
  std::vector<std::vector<uint32_t>> waveTasks;
  /// Arena offsets the host reads and writes.
  uint64_t promptOffset = 0, stepStateOffset = 0, logitsOffset = 0;

  SelectParams selectParams() const;
};

/// With `verifyWeights`, the whole weights file is read first and its
/// payload checksum compared (WeightsFile::verifyPayload); its header's
/// checksum is compared at every load.
StatusOr<std::shared_ptr<const LoadedPlan>> loadPlan(const std::string &planPath,
                                                     const std::string &weightsPath,
                                                     bool verifyWeights = false);

/// The same from a plan already in memory (tests); the plan is verified.
StatusOr<std::shared_ptr<const LoadedPlan>> loadPlan(plan::Plan plan,
                                                     std::unique_ptr<WeightsFile> weights);

} // namespace ti

#endif // TI_RUNTIME_LOADEDPLAN_H
