//===- Serve.h - tirun bench --serve: the worker protocol -------*- C++ -*-===//
#ifndef TI_TOOLS_TIRUN_SERVE_H
#define TI_TOOLS_TIRUN_SERVE_H

#include "BenchTarget.h"

namespace ti::tirun {

/// Answers the worker protocol of docs/benchmarking.md on standard input and
/// output until 'quit' or the end of input. Returns the exit status: 0, or 1
/// when a failed 'reload' has left no executor to go on with.
int serve(BenchTarget &target);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_SERVE_H
