//===- HttpServe.h - tirun serve: the OpenAI HTTP API -----------*- C++ -*-===//
#ifndef TI_TOOLS_TIRUN_HTTPSERVE_H
#define TI_TOOLS_TIRUN_HTTPSERVE_H

namespace ti::tirun {

/// tirun serve plan.fb weights.bin [--host] [--port] [--api-key] ...; the
/// exit status (it runs until SIGINT or SIGTERM).
int runServe(int argc, char **argv);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_HTTPSERVE_H
