//===- AccessCheck.cpp - Does each task touch only what it declares? ------===//
#include "AccessCheck.h"

#include "CpuOps.h"
#include "ti/Plan/Tagged.h"
#include "ti/Plan/TaskAccesses.h"

#include <algorithm>
#include <cstring>

namespace ti::test {

namespace {

using plan::Access;
using plan::Space;

constexpr uint8_t kPoison = 0xFF;

void runTask(const cpu::TaskContext &c, const plan::TaskRecord &t) {
  switch (static_cast<plan::Opcode>(t.opcode)) {
#define TI_OPCODE(Name, Value, Spelling, Kind)                                                     \
  case plan::Opcode::Name:                                                                         \
    cpu::run##Name(c, t);                                                                          \
    break;
#include "ti/Plan/Opcodes.def"
  }
}

/// [begin, end) clipped to [0, size).
void copyRange(std::vector<uint8_t> &to, const std::vector<uint8_t> &from, uint64_t begin, uint64_t end) {
  end = std::min<uint64_t>(end, from.size());
  if (begin < end)
    std::memcpy(to.data() + begin, from.data() + begin, end - begin);
}

/// `ranges` clipped to [0, size), sorted and joined where they touch.
std::vector<std::pair<uint64_t, uint64_t>> merged(std::vector<std::pair<uint64_t, uint64_t>> ranges,
                                                  uint64_t size) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (auto [b, e] : ranges) {
    e = std::min(e, size);
    if (b >= e)
      continue;
    if (!out.empty() && b <= out.back().second)
      out.back().second = std::max(out.back().second, e);
    else
      out.emplace_back(b, e);
  }
  return out;
}

/// The first k in [begin, end) where a[k] != b[k], or -1.
int64_t firstDifference(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b, uint64_t begin,
                        uint64_t end) {
  if (begin >= end || std::memcmp(a.data() + begin, b.data() + begin, end - begin) == 0)
    return -1;
  for (uint64_t k = begin;; ++k)
    if (a[k] != b[k])
      return int64_t(k);
}

struct Declared {
  std::vector<std::pair<uint64_t, uint64_t>> weightReads, arenaReads, arenaWrites;
};

Declared declared(const plan::Plan &p, const plan::TaskRecord &t, plan::StepMode mode) {
  Declared d;
  for (const Access &a : plan::taskAccesses(p, t, mode)) {
    std::pair<uint64_t, uint64_t> r{a.extentBegin(), a.extentEnd()};
    if (a.space == Space::Weights)
      d.weightReads.push_back(r);
    else
      (a.write ? d.arenaWrites : d.arenaReads).push_back(r);
  }
  return d;
}

std::string describe(const plan::Plan &p, size_t i, const char *what) {
  const plan::TaskRecord &t = p.tasks[i];
  return "task #" + std::to_string(i) + " (" + plan::opcodeName(t.opcode) + " on worker " +
         std::to_string(t.worker) + ", wave " + std::to_string(t.wave) + ") " + what;
}

} // namespace

std::string checkTaskAccesses(const plan::Plan &p, const std::vector<uint8_t> &weights) {
  std::vector<uint8_t> arena(p.arenaBytes, 0);
  cpu::TagCheck tags;
  // Every worker's token slot holds token 1, as the SelectToken wave leaves it.
  if (const plan::Buffer *slots = p.findBuffer(plan::BufferKind::TokenSlots))
    for (uint64_t at = slots->offset; at + 4 <= slots->offset + slots->bytes; at += 4) {
      const int32_t token = 1;
      std::memcpy(arena.data() + at, &token, 4);
    }
  std::vector<uint8_t> shadowWeights(weights.size(), kPoison);
  std::vector<size_t> order(p.tasks.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.tasks[a].wave < p.tasks[b].wave; });

  const int32_t positions[2] = {0, int32_t(std::min<uint32_t>(p.attention.splitContext, p.model.maxContext - 1))};
  for (int s = 0; s < 2; ++s) {
    const int32_t pos = positions[s];
    const bool longMode = uint32_t(pos + 1) > p.attention.splitContext;
    const plan::StepMode mode = longMode ? plan::StepMode::Long : plan::StepMode::Short;
    const uint32_t tag = plan::stepTag(1, s);
    for (size_t i : order) {
      const plan::TaskRecord &t = p.tasks[i];
      if (static_cast<plan::Opcode>(t.opcode) == plan::Opcode::SelectToken)
        continue; // The executor's own selection, not a task's arithmetic.
      const Declared d = declared(p, t, mode);

      // The poisoned copies: only the declared bytes are real. The weights'
      // copy is kept poisoned between tasks (only the declared ranges are
      // copied in and poisoned again): it is the largest.
      std::vector<uint8_t> shadow(arena.size(), kPoison);
      for (auto [b, e] : d.arenaReads)
        copyRange(shadow, arena, b, e);
      for (auto [b, e] : d.arenaWrites)
        copyRange(shadow, arena, b, e);
      for (auto [b, e] : d.weightReads)
        copyRange(shadowWeights, weights, b, e);
      const std::vector<uint8_t> before = shadow;

      cpu::TaskContext real{&p, weights.data(), arena.data(), pos, longMode, tag, &tags};
      runTask(real, t);
      cpu::TaskContext poisoned{&p, shadowWeights.data(), shadow.data(), pos, longMode, tag, &tags};
      runTask(poisoned, t);
      for (auto [b, e] : d.weightReads)
        if (b < shadowWeights.size())
          std::memset(shadowWeights.data() + b, kPoison, std::min<uint64_t>(e, shadowWeights.size()) - b);

      // Undeclared bytes as they were before the task; declared writes as
      // the real run left them. Compared a run at a time (memcmp), byte by
      // byte only to name the first difference.
      const std::vector<std::pair<uint64_t, uint64_t>> writes = merged(d.arenaWrites, arena.size());
      uint64_t at = 0;
      for (size_t w = 0; w <= writes.size(); ++w) {
        const uint64_t gapEnd = w < writes.size() ? writes[w].first : arena.size();
        if (const int64_t k = firstDifference(shadow, before, at, gapEnd); k >= 0)
          return describe(p, i, "wrote A[+") + std::to_string(k) + "], which it does not declare";
        if (w == writes.size())
          break;
        if (const int64_t k = firstDifference(shadow, arena, writes[w].first, writes[w].second); k >= 0)
          return describe(p, i, "read what it does not declare: A[+") + std::to_string(k) +
                 "] differs when undeclared bytes are poisoned";
        at = writes[w].second;
      }
    }
  }
  return {};
}

} // namespace ti::test
