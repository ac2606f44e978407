//===- TokenBytes.h - The bytes one decode step must read -------*- C++ -*-===//
//
// The bandwidth floor of a decode step is the bytes it must read over the
// GPU's streaming-read bandwidth. This file says what those bytes are, from
// the plan alone: every weight the step streams (each packed tensor once; a
// table gathered by row, such as an untied embedding, only for its rows) plus
// the K/V cache of the positions the step attends to. `tic --stats` prints the
// breakdown; `tirun bench` divides it by the bandwidth it measures.
//
// What the floor leaves out on purpose: the norm scales that fused tasks read
// again (a few MB that come from L2), activations, and the K/V row the step
// writes. They are the plan's costs, not the model's.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_TOKENBYTES_H
#define TI_PLAN_TOKENBYTES_H

#include "ti/Plan/Plan.h"

#include <cstdint>

namespace ti::plan {

/// Whether an opcode streams a weight matrix (GEMV, FFN, lm_head), as
/// opposed to gathering rows or reading only a norm scale.
bool streamsWeightMatrix(uint16_t opcode);

/// Bytes of weights a task streams: its weight range plus a fused norm scale.
uint64_t streamedBytes(const TaskRecord &task);

/// One decode step's weight bytes, by where they come from. The tasks stream
/// `packed - gathered + gatheredRows + normRereads` in all (`tasks`).
struct TokenBytes {
  uint64_t packed = 0;       // Every packed tensor, once.
  uint64_t gathered = 0;     // Tables only gathered by row (never streamed whole).
  uint64_t gatheredRows = 0; // The rows those gathers read.
  int64_t normRereads = 0;   // Norm scales read by fused tasks beyond once each.
  uint64_t tasks = 0;        // streamedBytes summed over the plan's tasks.

  /// The weight bytes the floor counts: each streamed tensor once, plus the
  /// gathered rows.
  uint64_t floorWeights() const { return packed - gathered + gatheredRows; }
};

TokenBytes tokenBytes(const Plan &plan);

/// K/V cache bytes of `positions` positions: one row of every K and V cache
/// buffer of the plan each (each layer's kv_heads x head_dim bf16 values; 32
/// KiB per position for Llama 3.2 1B).
uint64_t kvCacheBytes(const Plan &plan, uint64_t positions);

/// The bytes of the floor of one step with `context` positions already in the
/// cache: tokenBytes(plan).floorWeights() + kvCacheBytes(plan, context).
uint64_t floorBytes(const Plan &plan, uint64_t context);

/// Seconds to read `bytes` at `gigabytesPerSecond` (1 GB = 1e9 bytes).
double floorSeconds(uint64_t bytes, double gigabytesPerSecond);

} // namespace ti::plan

#endif // TI_PLAN_TOKENBYTES_H
