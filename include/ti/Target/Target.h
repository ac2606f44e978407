//===- Target.h - What the compiler knows about a GPU ------------*- C++ -*-===//
//
// A target description holds the facts about a GPU and its worker kernel that
// the compiler plans with, and its choices: the number of workers (one block
// per SM), the worker's block size and register budget, what the worker can
// run (ti/Plan/WorkerSupport.h: query heads per kv head, head dims, shared
// memory per task, its load width; tic refuses a graph beyond them at the
// op's line and column), the measured streaming bandwidth (the floor), when
// attention switches to its chunked form (split-attention), how far row splits
// may be out of balance (balance-rows).
//
// Built-in targets: `rtx3050` (the TileInfer post's GPU) and `h200`, whose
// worker limits are those of the worker this build compiles (a CUDA build's
// unit test holds them against it). A target file (JSON, written by `tirun
// probe` from the GPU and the worker binary) describes any other GPU; keys it
// lacks keep the defaults of WorkerLimits (the worker on the smallest
// supported GPU). `execution` picks the worker's execution model (plain or
// stream, ti/Plan/Execution.h); tic --execution overrides it.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TARGET_TARGET_H
#define TI_TARGET_TARGET_H

#include "ti/Plan/Execution.h"
#include "ti/Plan/WorkerSupport.h"
#include "ti/Support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ti {

/// How the compiler lowers the MLP (fuse-ffn): as FfnPartial tasks (each its
/// units' gate, up and down columns, writing a partial sum of the whole
/// output) and a reduce wave, the post's form; or as a GateUp wave writing
/// silu(gate) * up and the down projection as a Gemv that reads it.
enum class FfnForm : uint8_t { Partials, GateUp };
/// "partials", "gate_up".
const char *ffnFormName(FfnForm form);
/// The form of that name; false for any other text.
bool parseFfnForm(const std::string &name, FfnForm &form);

/// How a wave hands its outputs to the waves that read them (tag-hand-offs,
/// place-barriers): through a grid barrier after the wave, or as tagged values
/// (ti/Plan/Tagged.h) that each reader waits for, with a grid barrier only
/// where tags cannot order a dependency.
enum class HandOffs : uint8_t { Grid, Tags };
/// "grid", "tags".
const char *handOffsName(HandOffs handOffs);
/// The hand-offs of that name; false for any other text.
bool parseHandOffs(const std::string &name, HandOffs &handOffs);

struct Target {
  std::string name;
  std::string gpu;  // The GPU's marketing name, as the probe reports it.
  std::string arch; // "sm_90"
  uint32_t workers = 0;
  uint32_t threadsPerWorker = 1024;
  uint32_t maxRegisters = 64;
  double bandwidthGBs = 0;
  /// Contexts above this run attention in chunks, merged by the readers (the
  /// post used 384 on its 20 SMs; the lent H200 measured 128 faster, so a GPU
  /// the probe describes starts there).
  uint32_t attentionSplitContext = 128;
  /// How much more (0.01 = 1%) a wave's largest task may stream than the least
  /// possible largest task, to run the wave on fewer workers (balance-rows).
  double balanceTolerance = 0.01;
  /// A hash of the worker binary the target was probed with; empty for the
  /// built-in targets, which were not probed.
  std::string workerFingerprint;
  /// What the worker can run. Its thread count is threadsPerWorker's.
  uint32_t maxQueryHeadsPerKvHead = plan::WorkerLimits().maxGroup;
  std::vector<uint32_t> headDims = plan::WorkerLimits().headDims;
  uint32_t sharedBytesPerWorker = plan::WorkerLimits().sharedBytes;
  uint32_t vectorElements = plan::WorkerLimits().vectorElements;
  /// How the worker executes plans (ti/Plan/Execution.h), and for the Stream
  /// model the weight stream's shape that plan-stream plans with: the stage
  /// size, the ring's bytes and the bulk copies in flight (about 64 KB in
  /// flight per SM saturates HBM; more delays the SM's own stores and loads).
  plan::ExecutionModel execution = plan::ExecutionModel::Plain;
  uint32_t streamStageBytes = 32 * 1024;
  /// Six stages of 32 KB: on an H100 the 1B's step 1.7% faster at context 1
  /// and 1.2% at 4,096 than five, which was all the worker's shared memory
  /// held until the task records left it (docs/PERFORMANCE.md, step 31).
  uint32_t streamRingBytes = 192 * 1024;
  /// The least ring (bytes, whole stages) that fuse-ffn may narrow the stream
  /// to so that a down projection's whole input fits beside it in the GateUp
  /// form; 0 never narrows (withExecution sets 4 stages for the stream worker).
  uint32_t streamMinRingBytes = 0;
  uint32_t streamInFlightBytes = 64 * 1024;
  /// The bulk copies in flight for a wave the consumers have not begun
  /// (withExecution sets one stage's for the stream worker: on the H200 the
  /// 1B's step 4.5% faster than with the whole cap, 1.2% faster than with
  /// none; docs/PERFORMANCE.md, step 6).
  uint32_t streamHandOffInFlightBytes = 0;
  /// Streamed rows longer than this go to several consumer warps, one part
  /// each (plan-stream; Execution.h: StreamConfig::rowPartBytes); 0: whole rows.
  uint32_t streamRowPartBytes = 4096;
  /// Whether the ring's bulk copies mark what they read evict-first in L2
  /// (Execution.h: StreamConfig::copiesEvictFirst; withExecution sets it for
  /// the stream worker).
  bool streamCopiesEvictFirst = false;
  /// Whether the copies of the caches' K/V rows then go without that hint
  /// (Execution.h: StreamConfig::kvCopiesUnhinted); off unless a target
  /// file says so.
  bool streamKvCopiesUnhinted = false;
  /// The MLP's form (fuse-ffn; withExecution sets GateUp for the stream worker).
  FfnForm ffnForm = FfnForm::Partials;
  /// How waves hand off (tag-hand-offs).
  HandOffs handOffs = HandOffs::Grid;
  /// Stream execution: whether attention's cached K/V rows come through the
  /// weight stream (kFlagStreamKv; ops/AttentionStream.cuh) instead of the
  /// consumers' own loads, which wait for HBM behind the ring's copies
  /// (docs/PERFORMANCE.md, steps 11-14). withExecution turns it on for the
  /// stream worker, above a context of 1,024.
  bool streamKv = false;
  /// With streamKv: the rows stream only at contexts above this (and above the
  /// split context), where a task's chunk is long enough to pay for its two
  /// stage waits (TaskRecord.h: streamsKvAt); 0: in every long-mode step.
  uint32_t streamKvContext = 0;
  /// With streamKv: short-mode steps (chunk 0 takes the whole context) at
  /// contexts above this stream the cached rows too, scored on the tensor
  /// cores (ops/AttentionStreamMma.cuh) rather than one warp a query head
  /// (ops/AttentionShort.cuh); only in plans whose streamed heads all take
  /// that form (WorkerLayout.h: streamedScoresOnTensorCores). 0: never.
  uint32_t shortMmaContext = 0;
  /// The split context (attentionSplitContext) of a plan whose short mode
  /// streams every attention task's rows to the tensor cores (it gets a
  /// shortMmaContext and every attention task streams): that form stays
  /// faster than long mode's chunks and their merge to a longer context than
  /// one warp a query head does. Used where larger than
  /// attentionSplitContext; 0: never (withExecution sets 384 for the stream
  /// worker).
  uint32_t shortMmaSplitContext = 0;
  /// Stream execution: whether the GEMV stages whose rows and columns allow it
  /// store their weights in octet tiles (tile-weights; ti/Plan/WeightTiles.h),
  /// which the stream worker's consumers multiply on the tensor cores.
  bool streamWeightTiles = false;
  /// Whether every weight wave runs on all the workers it can use, with each
  /// worker's bytes balanced over the step (balance-rows, assign-workers),
  /// rather than on the fewest workers at the same largest task. Off in the
  /// built-in targets: on the H200 the 1B's and the 8B's steps were 0.5-1.4%
  /// slower with it, the stream being HBM-bound rather than bound per worker
  /// (docs/PERFORMANCE.md, step 23).
  bool spreadWeightWaves = false;

  plan::WorkerLimits workerLimits() const {
    return plan::WorkerLimits{threadsPerWorker, maxQueryHeadsPerKvHead, headDims,
                              sharedBytesPerWorker, vectorElements};
  }

  /// This target with its worker executing `model`: the model's thread count
  /// and register budget (Execution.h), its balance tolerance, its FFN form and its hand-offs.
  Target withExecution(plan::ExecutionModel model) const;

  /// The weight stream this target's plans run (plan-stream): the stage size,
  /// the ring's depth and the copies in flight from the stream_* values; all
  /// zero for the Plain model.
  plan::StreamConfig streamConfig() const;
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
