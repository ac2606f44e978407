//===- TokenBytes.cpp - The bytes one decode step must read ---------------===//
#include "ti/Plan/TokenBytes.h"

#include "ti/Plan/TaskRecord.h"

#include <set>

namespace ti::plan {

namespace {

/// The packed tensor holding weights-data byte `offset`, or -1.
int tensorAt(const Plan &p, uint64_t offset) {
  for (size_t i = 0; i < p.weights.size(); ++i)
    if (offset >= p.weights[i].offset && offset < p.weights[i].offset + p.weights[i].bytes)
      return static_cast<int>(i);
  return -1;
}

} // namespace

bool streamsWeightMatrix(uint16_t opcode) {
  return opcodeName(opcode) && opcodeKind(Opcode(opcode)) == OpcodeKind::Stream;
}

uint64_t streamedBytes(const TaskRecord &t) {
  uint64_t bytes = t.weight != kNone ? t.weightBytes : 0;
  if (t.norm != kNone)
    bytes += t.aux[0] * kWeightBytes;
  return bytes;
}

TokenBytes tokenBytes(const Plan &p) {
  TokenBytes b;
  for (const PackedTensor &t : p.weights)
    b.packed += t.bytes;
  std::set<int> streamed, gathered, norms;
  uint64_t normReads = 0;
  for (const TaskRecord &t : p.tasks) {
    b.tasks += streamedBytes(t);
    if (t.norm != kNone) {
      norms.insert(tensorAt(p, t.norm));
      normReads += t.aux[0] * kWeightBytes;
    }
    if (t.weight == kNone)
      continue;
    if (streamsWeightMatrix(t.opcode))
      streamed.insert(tensorAt(p, t.weight));
    if (t.opcode == uint16_t(Opcode::Embed)) {
      gathered.insert(tensorAt(p, t.weight));
      b.gatheredRows += t.weightBytes;
    }
  }
  for (int i : gathered)
    if (i >= 0 && !streamed.count(i))
      b.gathered += p.weights[i].bytes;
  uint64_t normBytes = 0;
  for (int i : norms)
    if (i >= 0)
      normBytes += p.weights[i].bytes;
  b.normRereads = int64_t(normReads) - int64_t(normBytes);
  return b;
}

uint64_t kvCacheBytes(const Plan &p, uint64_t positions) {
  // Every cache holds maxContext positions of its kv heads' rows (head-major:
  // AttentionLayout.h, KvCacheLayout); a position is kvRows values of each.
  uint64_t cacheBytes = 0;
  for (const Buffer &b : p.buffers)
    if (b.kind == BufferKind::KCache || b.kind == BufferKind::VCache)
      cacheBytes += b.bytes;
  return p.model.maxContext ? positions * (cacheBytes / p.model.maxContext) : 0;
}

uint64_t floorBytes(const Plan &plan, uint64_t context) {
  return tokenBytes(plan).floorWeights() + kvCacheBytes(plan, context);
}

double floorSeconds(uint64_t bytes, double gigabytesPerSecond) {
  return gigabytesPerSecond > 0 ? double(bytes) / (gigabytesPerSecond * 1e9) : 0;
}

} // namespace ti::plan
