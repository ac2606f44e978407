//===- Probe.h - tirun probe: measure a GPU, write its target ---*- C++ -*-===//
#ifndef TI_TOOLS_TIRUN_PROBE_H
#define TI_TOOLS_TIRUN_PROBE_H

namespace ti::tirun {

/// `tirun probe ...`: argv[0] is "probe". Returns the exit status (0 or 1).
int runProbe(int argc, char **argv);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_PROBE_H
