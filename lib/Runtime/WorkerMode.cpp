//===- WorkerMode.cpp - What the worker does of each step -----------------===//
#include "ti/Runtime/WorkerMode.h"

const char *ti::workerModeName(WorkerMode mode) {
  switch (mode) {
  case WorkerMode::Full: return "full";
  case WorkerMode::NoDependencies: return "no-dependencies";
  case WorkerMode::StreamOnly: return "stream-only";
  case WorkerMode::ComputeOnly: return "compute-only";
  }
  return "unknown";
}
