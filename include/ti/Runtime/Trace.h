//===- Trace.h - A traced step as Chrome/Perfetto trace JSON ----*- C++ -*-===//
//
// Turns the events a traced launch recorded (TraceEvent.h, one list per
// worker) into the Trace Event Format that chrome://tracing and Perfetto open:
// one process, one thread per worker ("worker N"), a complete event ("ph":
// "X") per task, grid barrier and selection, timestamps in microseconds from
// the step's first event. Each event's args name the wave, the opcode, the
// task and its rows, so a script can do the accounting from the JSON alone;
// a task that marked its inputs' arrival (TraceKind::TaskInputs) also has
// args.inputs_us, the microseconds from its start to that mark.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_TRACE_H
#define TI_RUNTIME_TRACE_H

#include "ti/Plan/Plan.h"
#include "ti/Runtime/TraceEvent.h"

#include <string>
#include <vector>

namespace ti {

std::string traceToChromeJson(const plan::Plan &plan,
                              const std::vector<std::vector<TraceEvent>> &workers);

} // namespace ti

#endif // TI_RUNTIME_TRACE_H
