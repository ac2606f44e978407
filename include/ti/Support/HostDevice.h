//===- HostDevice.h - Code both the host and the CUDA worker run -*- C++ -*-===//
//
// TI_HOST_DEVICE marks a function that the host compiler compiles for the CPU
// and nvcc compiles for both sides: the layouts and rules the compiler, the
// CPU executor and the kernel must agree on bit for bit (ti/Plan's task
// geometry, the worker's shared-memory layout, greedy selection) are written
// once with it.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_HOSTDEVICE_H
#define TI_SUPPORT_HOSTDEVICE_H

#ifdef __CUDACC__
#define TI_HOST_DEVICE __host__ __device__
#else
#define TI_HOST_DEVICE
#endif

#endif // TI_SUPPORT_HOSTDEVICE_H
