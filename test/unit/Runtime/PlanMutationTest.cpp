//===- PlanMutationTest.cpp - The verifier is sound under mutation --------===//
//
// Issue #16: a valid plan is changed one field at a time (tasks' offsets,
// lengths, rows, waves, workers, operands, counts, flags and geometry;
// buffers, tensors, waves' barriers, the stream's shape, the model's sizes),
// by one of two routes taken in turn:
//   - file: the serialised plan's stored scalars are changed in place through
//     FlatBuffers' generated mutators (flatc --gen-mutable), so the reader
//     sees values no writer produced;
//   - model: the in-memory Plan is changed and serialised, which reaches the
//     fields a file leaves out at their defaults (an untagged buffer, a
//     wave's grid barrier, the stream's uncapped hand-offs).
// Either way the bytes are read back through the plan file's reader and
// verified.
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

#include "plan_generated.h"

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
      switch (pick(7)) {
      case 0: set(s.stages, change(s.stages, 2), "stream stages"); break;
      case 4: set(s.copiesEvictFirst, !s.copiesEvictFirst, "stream copiesEvictFirst"); break;
      case 5: set(s.kvCopiesUnhinted, !s.kvCopiesUnhinted, "stream kvCopiesUnhinted"); break;
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

  /// `v` as a T, noting the change for messages.
  template <typename T> T note(T old, uint64_t v, const std::string &name) {
    const T now = static_cast<T>(v);
    what = "file: " + name + " " + std::to_string(uint64_t(old)) + " -> " + std::to_string(uint64_t(now));
    return now;
  }

  /// Changes one stored scalar of the plan file `bytes` in place; false where
  /// the field picked is not stored (a table field at its default) and
  /// nothing changed.
  bool mutateFile(std::vector<uint8_t> &bytes) {
    fb::Plan *p = fb::GetMutablePlan(bytes.data());
    switch (pick(12) < 6 ? 0 : 1 + pick(6)) { // Tasks most often.
    case 0: { // A task is a struct: every field is stored.
      auto *tasks = p->mutable_tasks();
      const uint32_t i = uint32_t(pick(tasks->size())), j = uint32_t(pick(tasks->size()));
      fb::TaskRecord *t = tasks->GetMutableObject(i);
      const fb::TaskRecord *o = tasks->Get(j);
      const std::string who = "task #" + std::to_string(i) + " ";
      switch (pick(17)) {
      case 0: t->mutate_weight(note(t->weight(), change(t->weight(), o->weight()), who + "weight")); break;
      case 1: t->mutate_weight_bytes(note(t->weight_bytes(), change(t->weight_bytes(), o->weight_bytes()), who + "weightBytes")); break;
      case 2: t->mutate_row_begin(note(t->row_begin(), change(t->row_begin(), o->row_begin()), who + "rowBegin")); break;
      case 3: t->mutate_row_end(note(t->row_end(), change(t->row_end(), o->row_end()), who + "rowEnd")); break;
      case 4: t->mutate_wave(note(t->wave(), change(t->wave(), o->wave()), who + "wave")); break;
      case 5: t->mutate_worker(note(t->worker(), change(t->worker(), o->worker()), who + "worker")); break;
      case 6: t->mutate_norm(note(t->norm(), change(t->norm(), o->norm()), who + "norm")); break;
      case 7: case 8: {
        const uint32_t k = uint32_t(pick(3));
        t->mutable_in()->Mutate(k, note(t->in()->Get(k), change(t->in()->Get(k), o->in()->Get(k)), who + "in[" + std::to_string(k) + "]"));
        break;
      }
      case 9: case 10: {
        const uint32_t k = uint32_t(pick(2));
        t->mutable_out()->Mutate(k, note(t->out()->Get(k), change(t->out()->Get(k), o->out()->Get(k)), who + "out[" + std::to_string(k) + "]"));
        break;
      }
      case 11: {
        const uint32_t k = uint32_t(pick(2));
        t->mutable_aux()->Mutate(k, note(t->aux()->Get(k), change(t->aux()->Get(k), o->aux()->Get(k)), who + "aux[" + std::to_string(k) + "]"));
        break;
      }
      case 12: t->mutate_flags(note(t->flags(), pick(2) ? t->flags() ^ (1u << pick(16)) : o->flags(), who + "flags")); break;
      case 13: t->mutate_param(note(t->param(), change(t->param(), o->param()), who + "param")); break;
      case 14: t->mutate_opcode(note(t->opcode(), pick(2) ? o->opcode() : pick(16), who + "opcode")); break;
      case 15: {
        fb::HeadGeometry &g = t->mutable_geometry();
        const fb::HeadGeometry &h = o->geometry();
        switch (pick(4)) {
        case 0: g.mutate_heads(note(g.heads(), change(g.heads(), h.heads()), who + "geometry heads")); break;
        case 1: g.mutate_kv_heads(note(g.kv_heads(), change(g.kv_heads(), h.kv_heads()), who + "geometry kvHeads")); break;
        case 2: g.mutate_head_dim(note(g.head_dim(), change(g.head_dim(), h.head_dim()), who + "geometry headDim")); break;
        default: g.mutate_chunks(note(g.chunks(), change(g.chunks(), h.chunks()), who + "geometry chunks")); break;
        }
        break;
      }
      default: t->mutate_layer(note(t->layer(), change(t->layer(), o->layer()), who + "layer")); break;
      }
      return true;
    }
    case 1: {
      auto *buffers = p->mutable_buffers();
      fb::Buffer *b = buffers->GetMutableObject(uint32_t(pick(buffers->size())));
      const fb::Buffer *o = buffers->Get(uint32_t(pick(buffers->size())));
      const std::string who = "buffer '" + b->name()->str() + "' ";
      switch (pick(4)) {
      case 0: return b->mutate_offset(note(b->offset(), change(b->offset(), o->offset()), who + "offset"));
      case 1: return b->mutate_bytes(note(b->bytes(), change(b->bytes(), o->bytes()), who + "bytes"));
      case 2: return b->mutate_kind(note(b->kind(), pick(10), who + "kind"));
      default: return b->mutate_tagged(note(b->tagged(), !b->tagged(), who + "tagged"));
      }
    }
    case 2: {
      auto *weights = p->mutable_weights();
      fb::PackedTensor *t = weights->GetMutableObject(uint32_t(pick(weights->size())));
      const fb::PackedTensor *o = weights->Get(uint32_t(pick(weights->size())));
      const std::string who = "tensor '" + t->name()->str() + "' ";
      return pick(2) ? t->mutate_offset(note(t->offset(), change(t->offset(), o->offset()), who + "offset"))
                     : t->mutate_bytes(note(t->bytes(), change(t->bytes(), o->bytes()), who + "bytes"));
    }
    case 3: {
      auto *waves = p->mutable_waves();
      fb::Wave *w = waves->GetMutableObject(uint32_t(pick(waves->size())));
      return w->mutate_barrier(note(w->barrier(), pick(4), "wave '" + w->name()->str() + "' barrier"));
    }
    case 4: {
      fb::StreamConfig *c = p->mutable_stream();
      if (!c)
        return false;
      switch (pick(6)) {
      case 0: return c->mutate_stages(note(c->stages(), change(c->stages(), 2), "stream stages"));
      case 1: return c->mutate_in_flight_stages(note(c->in_flight_stages(), change(c->in_flight_stages(), 1), "stream inFlightStages"));
      case 2: return c->mutate_hand_off_in_flight_stages(note(c->hand_off_in_flight_stages(), change(c->hand_off_in_flight_stages(), 0), "stream handOffInFlightStages"));
      case 3: return c->mutate_stage_bytes(note(c->stage_bytes(), change(c->stage_bytes(), 4096), "stream stageBytes"));
      case 4: return c->mutate_model(note(c->model(), pick(3), "stream model"));
      default: return c->mutate_row_part_bytes(note(c->row_part_bytes(), change(c->row_part_bytes(), 0), "stream rowPartBytes"));
      }
    }
    case 5: {
      fb::ModelInfo *m = p->mutable_model();
      switch (pick(8)) {
      case 0: return m->mutate_max_context(note(m->max_context(), change(m->max_context(), 1), "maxContext"));
      case 1: return m->mutate_hidden(note(m->hidden(), change(m->hidden(), 1), "hidden"));
      case 2: return m->mutate_vocab(note(m->vocab(), change(m->vocab(), 1), "vocab"));
      case 3: return m->mutate_layers(note(m->layers(), change(m->layers(), 1), "layers"));
      case 4: return m->mutate_heads(note(m->heads(), change(m->heads(), 1), "heads"));
      case 5: return m->mutate_kv_heads(note(m->kv_heads(), change(m->kv_heads(), 1), "kvHeads"));
      case 6: return m->mutate_head_dim(note(m->head_dim(), change(m->head_dim(), 1), "headDim"));
      default: return m->mutate_ffn(note(m->ffn(), change(m->ffn(), 1), "ffn"));
      }
    }
    default: {
      switch (pick(6)) {
      case 0: return p->mutable_attention()->mutate_split_context(note(p->attention()->split_context(), change(p->attention()->split_context(), 1), "splitContext"));
      case 1: return p->mutable_attention()->mutate_stream_kv_context(note(p->attention()->stream_kv_context(), change(p->attention()->stream_kv_context(), 1), "streamKvContext"));
      case 2: return p->mutate_arena_bytes(note(p->arena_bytes(), change(p->arena_bytes(), 0), "arenaBytes"));
      case 3: return p->mutate_weights_bytes(note(p->weights_bytes(), change(p->weights_bytes(), 0), "weightsBytes"));
      case 4: return p->mutable_target()->mutate_threads_per_worker(note(p->target()->threads_per_worker(), change(p->target()->threads_per_worker(), 1), "threadsPerWorker"));
      default: return p->mutable_target()->mutate_workers(note(p->target()->workers(), change(p->target()->workers(), 1), "workers"));
      }
    }
    }
  }
};

struct Counts {
  uint64_t tried = 0, unreadable = 0, refused = 0, accepted = 0;
  uint64_t otherWeights = 0; // accepted, but for weights of another size: not run
};

/// The counts of one route, printed.
std::string describe(const char *route, const Counts &c) {
  return std::string(route) + ": " + std::to_string(c.tried) + " tried, " +
         std::to_string(c.unreadable) + " unreadable, " + std::to_string(c.refused) +
         " refused by the verifier, " + std::to_string(c.accepted) + " accepted (" +
         std::to_string(c.otherWeights) + " of them for weights of another size, not run)";
}

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
  const std::string base = plan::serializePlan(lp->plan);
  // The unmutated plan reads back and verifies: otherwise every mutant would
  // count as unreadable or refused and the test would prove nothing.
  {
    StatusOr<Plan> again = plan::readPlan(base.data(), base.size());
    ASSERT_TRUE(again.ok()) << again.status().message();
    ASSERT_TRUE(plan::verifyPlan(*again).ok()) << plan::verifyPlan(*again).message();
  }
  Counts routes[2]; // model, file
  for (uint64_t n = 0; n < mutants; ++n) {
    const bool viaFile = n % 2;
    Counts &c = routes[viaFile];
    std::string bytes;
    if (viaFile) {
      std::vector<uint8_t> file(base.begin(), base.end());
      while (!m.mutateFile(file)) // Until a stored field was picked.
        ;
      bytes.assign(file.begin(), file.end());
    } else {
      Plan mutant = lp->plan;
      m.mutate(mutant);
      bytes = plan::serializePlan(mutant);
    }
    ++c.tried;
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
    if (read->weightsBytes != weights.size()) {
      ++c.otherWeights; // The weights file would be refused against this plan (WeightsFile::checkAgainst).
      continue;
    }
    const std::string finding = test::checkTaskAccesses(*read, weights);
    if (!finding.empty())
      ADD_FAILURE() << "the verifier accepted a mutant (" << m.what << ") whose " << finding;
  }
  std::printf("%s: %llu mutants; %s; %s (each accepted mutant ran two steps touching only what it "
              "declares)\n",
              GetParam(), (unsigned long long)mutants, describe("model", routes[0]).c_str(),
              describe("file", routes[1]).c_str());
  RecordProperty("accepted", std::to_string(routes[0].accepted + routes[1].accepted));
  // Both routes reach the executors: some mutants of each were accepted and run.
  if (mutants >= 100)
    for (const Counts &c : routes)
      EXPECT_GT(c.accepted - c.otherWeights, c.tried / 20);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(TinyPlans, PlanMutationTest,
                         ::testing::Values("--target rtx3050 --max-context 16 --attention-split-context 8",
                                           "--target h200 --max-context 16 --attention-split-context 8"));

} // namespace
} // namespace ti
