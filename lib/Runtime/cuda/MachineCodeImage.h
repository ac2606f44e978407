//===- MachineCodeImage.h - A hashed image of a worker ----------*- C++ -*-===//
//
// What HashMachineCode.cmake writes for each worker object: one entry per
// cubin and PTX image nvcc embedded in it (WorkerMachineCode.h for the Plain
// worker's Worker.cu.o, StreamWorkerMachineCode.h for the Stream worker's
// StreamWorker.cu.o). CudaExecutor::kernelFingerprint picks the images a
// device runs.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_MACHINECODEIMAGE_H
#define TI_LIB_RUNTIME_CUDA_MACHINECODEIMAGE_H

namespace ti::cuda {

struct MachineCodeImage {
  int arch;           // 90 for sm_90, sm_90a and compute_90.
  bool ptx;           // PTX, which the driver JIT-compiles; else a cubin.
  const char *name;   // "sm_90", "compute_90"
  const char *sha256; // Of the image's code and data.
};

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_MACHINECODEIMAGE_H
