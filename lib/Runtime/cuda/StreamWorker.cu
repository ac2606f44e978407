//===- StreamWorker.cu - The worker of the Stream execution model -*- CUDA -*-===//
//
// Worker.cu compiled with TI_WORKER_STREAM = 1 (lib/Runtime/cuda/CMakeLists.txt),
// for sm_90 only: the bulk-copy engine and its mbarriers are Hopper's (its
// machine code is sm_90a's, for setmaxnreg). Its
// symbols live in the inline namespace stream_model (Config.cuh), the Plain
// worker's in plain_model, so one binary holds both.
//
//===----------------------------------------------------------------------===//
#include "Worker.cu"
