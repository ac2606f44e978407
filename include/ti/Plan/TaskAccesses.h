//===- TaskAccesses.h - What each task reads and writes ---------*- C++ -*-===//
//
// The access model of a plan: for one task record, in one attention mode, the
// memory ranges it reads and writes, derived only from the record (its
// geometry included) and the plan's max context, exactly as TaskRecord.h and
// AttentionLayout.h specify. The
// plan verifier checks bounds and hazards on these; the executors implement the
// same semantics, so a change to either side must change both.
//
// Positions. A step decodes position `pos`, unknown when the plan is made, so
// the K/V caches are described symbolically: a CacheRow access is row `pos` of
// one cache (a column byte range of that row); a CacheHistory access is rows
// < pos, or <= pos when it includes the current row. Within one step the only
// cache writes are CacheRow writes, so history (written by earlier steps) never
// conflicts with them except through the current row.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_TASKACCESSES_H
#define TI_PLAN_TASKACCESSES_H

#include "ti/Plan/Plan.h"

#include <cstdint>
#include <vector>

namespace ti::plan {

/// The attention mode of a step: short (ctx <= splitContext) or long.
enum class StepMode : uint8_t { Short, Long };
const char *stepModeName(StepMode mode);

enum class Space : uint8_t { Weights, Arena };

enum class AccessKind : uint8_t {
  Plain,        // Bytes [begin, end).
  CacheRow,     // Row pos of the cache at cacheBase, bytes [begin, end) of the row.
  CacheHistory, // Rows < pos (or <= pos), bytes [begin, end) of each row.
};

/// The record field an access comes from, for messages.
enum class Operand : uint8_t { Weight, Norm, In0, In1, In2, Out0, Out1 };
const char *operandName(Operand operand); // "weight", "in[0]", ...

struct Access {
  Space space = Space::Arena;
  AccessKind kind = AccessKind::Plain;
  Operand operand = Operand::In0;
  bool write = false;
  /// Plain: absolute offsets in W or A. CacheRow, CacheHistory:
  /// offsets within one row.
  uint64_t begin = 0, end = 0;
  /// CacheRow, CacheHistory: the cache's first row, the bytes of a row, and the
  /// rows it has (maxContext).
  uint64_t cacheBase = 0, rowBytes = 0;
  uint32_t rows = 0;
  bool includesCurrentRow = false; // CacheHistory: rows <= pos.
  /// Arena: the buffer kinds this operand may live in (bit 1 << BufferKind).
  uint32_t expectedKinds = 0;
  /// Plain arena accesses: the operand is tagged f32 (its kFlagTagged* flag);
  /// a tagged read waits for every element's tag of the step.
  bool tagged = false;

  /// The bytes this access may touch at any position: for the cache kinds,
  /// every row of the cache (saturating; a huge range fails bounds checks).
  uint64_t extentBegin() const;
  uint64_t extentEnd() const;
};

constexpr uint32_t kindBit(BufferKind kind) { return 1u << static_cast<unsigned>(kind); }

/// Appends the accesses of `task` in `mode` to `out`. The task must have
/// passed the verifier's structural checks (known opcode, its fields present,
/// its geometry consistent, chunk and head indices in range); offsets are not
/// trusted (sums saturate).
void appendTaskAccesses(const Plan &plan, const TaskRecord &task, StepMode mode,
                        std::vector<Access> &out);

inline std::vector<Access> taskAccesses(const Plan &plan, const TaskRecord &task, StepMode mode) {
  std::vector<Access> out;
  appendTaskAccesses(plan, task, mode, out);
  return out;
}

} // namespace ti::plan

#endif // TI_PLAN_TASKACCESSES_H
