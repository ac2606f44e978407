//===- PlanStats.h - What a plan streams, wave by wave ----------*- C++ -*-===//
//
// `tic --stats`: the plan's shape (waves, barriers, tasks), the bytes a token
// streams and where they come from, and per wave the bytes each active worker
// streams and their balance. Computed from the plan alone, so it describes
// exactly what the runtime will execute.
//
//===----------------------------------------------------------------------===//
#ifndef TI_CODEGEN_PLANSTATS_H
#define TI_CODEGEN_PLANSTATS_H

#include "ti/Plan/Plan.h"
#include "ti/Plan/TokenBytes.h"

#include <ostream>

namespace ti {

void printPlanStats(const plan::Plan &plan, std::ostream &os);

} // namespace ti

#endif // TI_CODEGEN_PLANSTATS_H
