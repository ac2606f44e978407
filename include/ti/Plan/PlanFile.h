//===- PlanFile.h - A plan as a FlatBuffers file ----------------*- C++ -*-===//
//
// Writes a Plan as a FlatBuffer of schema/plan.fbs (identifier "TIPL") and reads
// one back. Reading checks, in this order: the identifier, the FlatBuffers
// verifier (bounds only), the format version, then the presence and form of
// every field, each failure with one line naming what is wrong. A plan read
// successfully is well formed, not yet valid: offsets in range, single writers
// and the rest are the plan verifier's job (PlanVerifier.h), run afterwards.
//
// Reading never trusts its input: any bytes at all give a Plan or a Status,
// never a crash or a read outside [data, data + size).
//
// All functions are thread-safe; they share no state.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_PLANFILE_H
#define TI_PLAN_PLANFILE_H

#include "ti/Plan/Plan.h"
#include "ti/Support/Status.h"

#include <cstddef>
#include <string>

namespace ti::plan {

/// The bytes of a plan file for `plan` (its formatVersion written as it is).
/// Deterministic: the same plan gives the same bytes.
std::string serializePlan(const Plan &plan);

/// Reads a plan file's bytes. `data` needs no particular alignment; nothing is
/// kept pointing into it.
StatusOr<Plan> readPlan(const void *data, size_t size);

/// Reads the whole file at `path`, then readPlan.
StatusOr<Plan> readPlanFile(const std::string &path);

/// Writes the plan file atomically: a temporary file beside `path`, renamed over
/// it once complete; "-" writes to standard output.
Status writePlanFile(const Plan &plan, const std::string &path);

} // namespace ti::plan

#endif // TI_PLAN_PLANFILE_H
