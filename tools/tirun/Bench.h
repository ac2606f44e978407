//===- Bench.h - tirun bench: time per token against the floor --*- C++ -*-===//
#ifndef TI_TOOLS_TIRUN_BENCH_H
#define TI_TOOLS_TIRUN_BENCH_H

namespace ti::tirun {

/// `tirun bench ...`: argv[0] is "bench". Returns the exit status (0 or 1).
int runBench(int argc, char **argv);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_BENCH_H
