//===- CudaCheck.h - CUDA runtime errors as one-line Statuses ---*- C++ -*-===//
//
// TI_CUDA_CHECK(call) evaluates a CUDA runtime call and, on failure, returns
// from the enclosing function a Status of one line that names the file, the
// line, the call and CUDA's description of the error:
//   "CudaExecutor.cu:123: cudaMalloc(...): out of memory".
// selectDevice(device) makes a GPU current or says why it cannot.
// Host code of the CUDA backend only.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_CUDACHECK_H
#define TI_LIB_RUNTIME_CUDA_CUDACHECK_H

#include "ti/Support/Status.h"

#include <cuda_runtime.h>

#include <cstring>
#include <string>

namespace ti::cuda {

inline Status cudaFailure(cudaError_t error, const char *expr, const char *file, int line) {
  const char *base = std::strrchr(file, '/');
  return Status::error(std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": " +
                       expr + ": " + cudaGetErrorString(error));
}

} // namespace ti::cuda

#define TI_CUDA_CHECK(expr)                                                                        \
  do {                                                                                             \
    cudaError_t tiCudaError_ = (expr);                                                             \
    if (tiCudaError_ != cudaSuccess)                                                               \
      return ::ti::cuda::cudaFailure(tiCudaError_, #expr, __FILE__, __LINE__);                     \
  } while (0)

namespace ti::cuda {

/// Makes GPU `device` the current one, or says in one line why not: no CUDA
/// GPU at all (the driver's reason), or none of that number. The
/// measurements of `tirun probe` (Bandwidth.cu, HandOff.cu) begin with it.
inline Status selectDevice(int device) {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    cudaGetLastError(); // Not sticky; clear it for later calls.
    return Status::error(std::string("no CUDA GPU: ") + cudaGetErrorString(e));
  }
  if (device < 0 || device >= count)
    return Status::error("no CUDA GPU " + std::to_string(device) + " (" + std::to_string(count) +
                         " visible)");
  TI_CUDA_CHECK(cudaSetDevice(device));
  return Status();
}

/// cudaMalloc of a large buffer on the current GPU `device`, or one line
/// that says which measurement (`what`) could not have it and why; the
/// failure is cleared for later calls. The measurements' buffers, chosen
/// larger than L2, are the allocations a small GPU may refuse.
inline Status allocateOnDevice(void **at, size_t bytes, int device, const std::string &what) {
  if (cudaError_t e = cudaMalloc(at, bytes); e != cudaSuccess) {
    cudaGetLastError();
    return Status::error(what + ": cannot allocate " + std::to_string(bytes) + " bytes on GPU " +
                         std::to_string(device) + ": " + cudaGetErrorString(e));
  }
  return Status();
}

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_CUDACHECK_H
