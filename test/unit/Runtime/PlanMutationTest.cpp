//===- PlanMutationTest.cpp - The verifier is sound under mutation --------===//
//
// Issue #16: a valid plan is changed one field at a time (tasks' offsets,
// lengths, rows, waves, workers, operands, counts, flags and geometry;
// buffers, tensors, waves' barriers, the stream's shape, the model's sizes),
// serialised and read back through the plan file's reader, and verified.
// Whenever the verifier accepts a mutant, every task of two steps (short and
// long mode) must touch only what TaskAccesses declares (AccessCheck.h) and
// finish. TI_MUTANTS sets the mutants per plan (default 300; the figure in
// docs/RELIABILITY.md comes from a run with 50,000).
//
//===----------------------------------------------------------------------===//
#include "AccessCheck.h"

#include "ModelPlan.h"
#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanVerifier.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Weights/WeightsFile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

namespace ti {
namespace {

namespace fs = std::filesystem;
using plan::Plan;
using plan::TaskRecord;

/// One field of one object, changed; `what` says which and how, for messages.
struct Mutator {
  std::mt19937_64 rng;
  std::string what;

  uint64_t pick(uint64_t n) { return n ? rng() % n : 0; }

  /// A new value near or far from `v`: the offsets that slip by a row or an
  /// element, the counts that grow or shrink, and the values that say "none".
  uint64_t change(uint64_t v, uint64_t other) {
    switch (pick(10)) {
    case 0: return v + 1;
    case 1: return v - 1;
    case 2: return v + 4;
    case 3: return v - 4;
    case 4: return v + 64 * (1 + pick(64));
    case 5: return v > 64 ? v - 64 * (1 + pick(v / 64 < 64 ? v / 64 : 64)) : v + 2;
    case 6: return v * 2;
    case 7: return v / 2;
    case 8: return other; // The same field of another object.
    default: return pick(2) ? plan::kNone : rng();
    }
  }

  template <typename T> void set(T &field, uint64_t v, const std::string &name) {
    const T old = field;
    field = static_cast<T>(v);
    what = name + " " + std::to_string(uint64_t(old)) + " -> " + std::to_string(uint64_t(field));
  }

  void mutate(Plan &p) {
    const size_t kinds = 6;
    switch (pick(kinds + 6) < 6 ? 0 : pick(kinds)) { // Tasks most often.
    case 0: {
      const size_t i = pick(p.tasks.size()), j = pick(p.tasks.size());
      TaskRecord &t = p.tasks[i];
      const TaskRecord &o = p.tasks[j];
      const std::string who = "task #" + std::to_string(i) + " ";
      switch (pick(19)) {
      case 0: set(t.weight, change(t.weight, o.weight), who + "weight"); break;
      case 1: set(t.weightBytes, change(t.weightBytes, o.weightBytes), who + "weightBytes"); break;
      case 2: set(t.rowBegin, change(t.rowBegin, o.rowBegin), who + "rowBegin"); break;
      case 3: set(t.rowEnd, change(t.rowEnd, o.rowEnd), who + "rowEnd"); break;
      case 4: set(t.wave, change(t.wave, o.wave), who + "wave"); break;
      case 5: set(t.worker, change(t.worker, o.worker), who + "worker"); break;
      case 6: set(t.norm, change(t.norm, o.norm), who + "norm"); break;
      case 7: case 8: case 9: {
        const size_t k = pick(3);
        set(t.in[k], change(t.in[k], o.in[k]), who + "in[" + std::to_string(k) + "]");
        break;
      }
      case 10: case 11: {
        const size_t k = pick(2);
        set(t.out[k], change(t.out[k], o.out[k]), who + "out[" + std::to_string(k) + "]");
        break;
      }
      case 12: case 13: {
        const size_t k = pick(2);
        set(t.aux[k], change(t.aux[k], o.aux[k]), who + "aux[" + std::to_string(k) + "]");
        break;
      }
      case 14: set(t.flags, pick(2) ? t.flags ^ (1u << pick(16)) : o.flags, who + "flags"); break;
      case 15: set(t.param, change(t.param, o.param), who + "param"); break;
      case 16: set(t.opcode, pick(2) ? o.opcode : pick(16), who + "opcode"); break;
      case 17: {
        uint16_t *g[4] = {&t.geometry.heads, &t.geometry.kvHeads, &t.geometry.headDim, &t.geometry.chunks};
        const uint16_t *h[4] = {&o.geometry.heads, &o.geometry.kvHeads, &o.geometry.headDim, &o.geometry.chunks};
        const size_t k = pick(4);
        set(*g[k], change(*g[k], *h[k]), who + "geometry field " + std::to_string(k));
        break;
      }
      default: set(t.layer, change(t.layer, o.layer), who + "layer"); break;
      }
      break;
    }
    case 1: {
      const size_t i = pick(p.buffers.size()), j = pick(p.buffers.size());
      plan::Buffer &b = p.buffers[i];
      const std::string who = "buffer '" + b.name + "' ";
      switch (pick(4)) {
      case 0: set(b.offset, change(b.offset, p.buffers[j].offset), who + "offset"); break;
      case 1: set(b.bytes, change(b.bytes, p.buffers[j].bytes), who + "bytes"); break;
      case 2: set(b.kind, pick(10), who + "kind"); break;
      default: set(b.tagged, !b.tagged, who + "tagged"); break;
      }
      break;
    }
    case 2: {
      const size_t i = pick(p.weights.size()), j = pick(p.weights.size());
      plan::PackedTensor &t = p.weights[i];
      if (pick(2))
        set(t.offset, change(t.offset, p.weights[j].offset), "tensor '" + t.name + "' offset");
      else
        set(t.bytes, change(t.bytes, p.weights[j].bytes), "tensor '" + t.name + "' bytes");
      break;
    }
    case 3: {
      plan::Wave &w = p.waves[pick(p.waves.size())];
      set(w.barrier, pick(4), "wave '" + w.name + "' barrier");
      break;
    }
    case 4: {
      plan::StreamConfig &s = p.stream;
      switch (pick(5)) {
      case 0: set(s.stages, change(s.stages, 2), "stream stages"); break;
      case 1: set(s.inFlightStages, change(s.inFlightStages, 1), "stream inFlightStages"); break;
      case 2: set(s.handOffInFlightStages, change(s.handOffInFlightStages, 0), "stream handOffInFlightStages"); break;
      case 3: set(s.stageBytes, change(s.stageBytes, 4096), "stream stageBytes"); break;
      default: set(s.rowPartBytes, change(s.rowPartBytes, 0), "stream rowPartBytes"); break;
      }
      break;
    }
    default: {
      switch (pick(6)) {
      case 0: set(p.attention.splitContext, change(p.attention.splitContext, 1), "splitContext"); break;
      case 1: set(p.model.maxContext, change(p.model.maxContext, 1), "maxContext"); break;
      case 2: set(p.model.hidden, change(p.model.hidden, 1), "hidden"); break;
      case 3: set(p.model.vocab, change(p.model.vocab, 1), "vocab"); break;
      case 4: set(p.arenaBytes, change(p.arenaBytes, 0), "arenaBytes"); break;
      default: set(p.target.workers, change(p.target.workers, 1), "workers"); break;
      }
      break;
    }
    }
  }
};

struct Counts {
  uint64_t tried = 0, unreadable = 0, refused = 0, accepted = 0;
};

class PlanMutationTest : public ::testing::TestWithParam<const char *> {};

TEST_P(PlanMutationTest, AcceptedMutantsTouchOnlyWhatTheyDeclare) {
  const fs::path dir = fs::temp_directory_path() / ("ti-mutants-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto lp = test::compileTinyPlan(dir / "base", GetParam(), 7);
  ASSERT_TRUE(lp);
  const std::vector<uint8_t> weights(lp->weights->data(), lp->weights->data() + lp->weights->dataBytes());
  ASSERT_EQ(test::checkTaskAccesses(lp->plan, weights), "") << "the unmutated plan";

  const char *env = std::getenv("TI_MUTANTS");
  const uint64_t mutants = env ? std::strtoull(env, nullptr, 10) : 300;
  Mutator m{std::mt19937_64(20261205), {}};
  Counts c;
  for (uint64_t n = 0; n < mutants; ++n) {
    Plan mutant = lp->plan;
    m.mutate(mutant);
    ++c.tried;
    const std::string bytes = plan::serializePlan(mutant);
    StatusOr<Plan> read = plan::readPlan(bytes.data(), bytes.size());
    if (!read) {
      ++c.unreadable;
      continue;
    }
    if (!plan::verifyPlan(*read).ok()) {
      ++c.refused;
      continue;
    }
    ++c.accepted;
    if (read->weightsBytes != weights.size())
      continue; // The weights file would be refused against this plan (WeightsFile::checkAgainst).
    const std::string finding = test::checkTaskAccesses(*read, weights);
    if (!finding.empty())
      ADD_FAILURE() << "the verifier accepted a mutant (" << m.what << ") whose " << finding;
  }
  std::printf("%s: %llu mutants tried, %llu unreadable, %llu refused by the verifier, %llu accepted "
              "(each ran two steps touching only what it declares)\n",
              GetParam(), (unsigned long long)c.tried, (unsigned long long)c.unreadable,
              (unsigned long long)c.refused, (unsigned long long)c.accepted);
  RecordProperty("accepted", std::to_string(c.accepted));
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(TinyPlans, PlanMutationTest,
                         ::testing::Values("--target rtx3050 --max-context 16 --attention-split-context 8",
                                           "--target h200 --max-context 16 --attention-split-context 8"));

} // namespace
} // namespace ti
