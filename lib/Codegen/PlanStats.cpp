//===- PlanStats.cpp - What a plan streams, wave by wave ------------------===//
#include "ti/Codegen/PlanStats.h"

#include "ti/Plan/AttentionLayout.h"
#include "ti/Plan/WorkerSupport.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace ti;
using namespace ti::plan;

namespace {

std::string thousands(uint64_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0)
      out += ',';
    out += d[i];
  }
  return out;
}

std::string signedThousands(int64_t n) {
  std::string out(1, n < 0 ? '-' : '+');
  out += thousands(n < 0 ? -n : n);
  return out;
}

} // namespace

void ti::printPlanStats(const Plan &p, std::ostream &os) {
  char line[256];
  std::map<BarrierKind, unsigned> barriers;
  for (const Wave &w : p.waves)
    ++barriers[w.barrier];
  os << "plan " << p.model.name << " for " << p.target.name << ": " << p.target.workers
     << " workers, " << p.waves.size() << " waves, " << thousands(p.tasks.size()) << " tasks\n";
  os << "  barriers: " << barriers[BarrierKind::Grid] << " grid, "
     << barriers[BarrierKind::GridIfLong] << " grid if context > "
     << p.attention.splitContext << ", " << barriers[BarrierKind::None] << " none, "
     << barriers[BarrierKind::Tagged] << " tagged hand-offs\n";
  os << "  attention: " << p.attentionChunks() << " chunks above context "
     << p.attention.splitContext << "; max context " << p.model.maxContext << "\n";
  // The MLP's form, by the layers whose tasks take it (fuse-ffn).
  std::set<uint32_t> gateUpLayers, partialLayers;
  for (const TaskRecord &t : p.tasks) {
    if (t.opcode == uint16_t(Opcode::GateUp))
      gateUpLayers.insert(t.layer);
    if (t.opcode == uint16_t(Opcode::FfnPartial))
      partialLayers.insert(t.layer);
  }
  if (!gateUpLayers.empty() || !partialLayers.empty())
    os << "  mlp: " << gateUpLayers.size()
       << " layers as gate_up (silu(gate)*up, then the down projection), "
       << partialLayers.size() << " as partials (and a reduce wave)\n";
  if (const StreamConfig &st = p.stream; st.model == ExecutionModel::Plain) {
    os << "  execution: plain (each thread loads its own weights)\n";
  } else {
    uint64_t filled = 0;
    for (const TaskRecord &t : p.tasks) {
      for (uint32_t k = 0; k < streamSegmentCount(static_cast<Opcode>(t.opcode)); ++k)
        filled += stagesOf(streamSegment(t, k), st.stageBytes);
    }
    os << "  execution: " << executionModelName(st.model) << ", a ring of " << st.stages
       << " stages of " << thousands(st.stageBytes) << " bytes per worker, "
       << st.inFlightStages << " in flight (" << st.handOffInFlightStages
       << " for a wave not yet begun); " << thousands(filled)
       << " stages filled per token\n";
    if (st.copiesEvictFirst)
      os << "  the copies' lines evicted first from L2 (read once a step; stream_copies_evict_first)"
         << (st.kvCopiesUnhinted ? ", the K/V rows' copies without it (stream_kv_copies_unhinted)"
                                 : "")
         << "\n";
    // The GEMV tasks whose weights are octet tiles (tile-weights).
    const size_t tiled = std::count_if(p.tasks.begin(), p.tasks.end(), [](const TaskRecord &t) {
      return (t.flags & kFlagTiledWeights) != 0;
    });
    if (tiled)
      os << "  weight tiles: " << thousands(tiled)
         << " gemv and gate_up tasks stream octets of 8 rows in 8 x 32 tiles, multiplied on the "
            "tensor cores (stream_weight_tiles)\n";
    if (st.rowPartBytes)
      os << "  streamed rows longer than " << thousands(st.rowPartBytes)
         << " bytes: cut into equal parts of at most that many where the row allows, one warp each\n";
    // The attention tasks whose cached K/V rows come through the stream, and
    // their blocks (kvBlockRows; the smallest where head sizes differ).
    size_t streamedKv = 0;
    uint32_t blockRows = 0;
    for (const TaskRecord &t : p.tasks)
      if (t.flags & kFlagStreamKv) {
        ++streamedKv;
        const uint32_t rows =
            kvBlockRows(st.stageBytes, t.geometry.headDim, taskThreads(ExecutionModel::Stream));
        blockRows = blockRows == 0 || rows < blockRows ? rows : blockRows;
      }
    if (streamedKv) {
      os << "  streamed K/V rows: " << thousands(streamedKv)
         << " attention tasks, a stage of K then one of V for every " << blockRows
         << " positions (stream_kv)";
      if (p.attention.streamKvContext)
        os << ", at contexts above " << thousands(p.attention.streamKvContext);
      os << " in long mode\n";
      if (p.attention.shortMmaContext)
        os << "  and in short mode at contexts above "
           << thousands(p.attention.shortMmaContext)
           << ", scored on the tensor cores (short_mma_context)\n";
    }
  }
  const WorkerSharedBytes shared = workerSharedBytes(p);
  os << "  shared memory per worker: " << thousands(shared.total()) << " bytes (ring "
     << thousands(shared.ring) << ", schedule " << thousands(shared.schedule)
     << ", the largest task's scratch " << thousands(shared.scratch) << ")\n";

  // Where the streamed bytes come from.
  const TokenBytes bytes = tokenBytes(p);
  os << "  weights: " << thousands(p.weightsBytes) << " bytes in " << p.weights.size()
     << " packed tensors; arena " << thousands(p.arenaBytes) << " bytes\n";
  os << "streamed per token: " << thousands(bytes.tasks) << " bytes\n";
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "packed weights, each once", thousands(bytes.packed).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "- tables gathered by row, not streamed",
                signedThousands(-int64_t(bytes.gathered)).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "+ the embedding row", signedThousands(bytes.gatheredRows).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "+ norm scales re-read by fused tasks",
                signedThousands(bytes.normRereads).c_str());
  os << line;
  uint64_t sum = bytes.floorWeights() + bytes.normRereads;
  std::snprintf(line, sizeof line, "  %-34s %18s%s\n", "= streamed per token", thousands(sum).c_str(),
                sum == bytes.tasks ? "" : "  (does not match the tasks: a bug)");
  os << line;
  os << "floor per token: " << thousands(bytes.floorWeights()) << " bytes of weights + "
     << thousands(kvCacheBytes(p, 1)) << " of K/V per position of context\n";

  // Per wave: tasks, active workers, bytes per active worker.
  std::snprintf(line, sizeof line, "%5s  %-24s %-16s %-12s %6s %7s %25s %9s\n", "wave", "name",
                "opcode", "barrier", "tasks", "workers", "bytes/worker min..max", "imbalance");
  os << line;
  double worst = 0;
  for (size_t w = 0; w < p.waves.size(); ++w) {
    std::map<uint16_t, uint64_t> perWorker;
    unsigned tasks = 0;
    uint16_t opcode = 0;
    for (const TaskRecord &t : p.tasks)
      if (t.wave == w) {
        ++tasks;
        perWorker[t.worker] += streamedBytes(t);
        opcode = t.opcode;
      }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (auto &[worker, bytes] : perWorker) {
      lo = std::min(lo, bytes);
      hi = std::max(hi, bytes);
    }
    std::string range = "-", balance = "-";
    if (hi > 0) {
      range = thousands(lo) + ".." + thousands(hi);
      double imbalance = lo ? double(hi) / double(lo) - 1 : 1;
      if (streamsWeightMatrix(opcode))
        worst = std::max(worst, imbalance);
      char b[32];
      std::snprintf(b, sizeof b, "%.2f%%", 100 * imbalance);
      balance = b;
    }
    const char *name = opcodeName(opcode);
    std::snprintf(line, sizeof line, "%5zu  %-24s %-16s %-12s %6u %7zu %25s %9s\n", w,
                  p.waves[w].name.c_str(), name ? name : "?", barrierKindName(p.waves[w].barrier),
                  tasks, perWorker.size(), range.c_str(), balance.c_str());
    os << line;
  }
  std::snprintf(line, sizeof line, "max imbalance over weight waves: %.2f%%\n", 100 * worst);
  os << line;

  // Over the step: a stream worker's rate is capped by its copies in flight
  // and its producer runs ahead across waves, so the busiest worker's bytes
  // set the stream's time.
  std::vector<uint64_t> step(p.target.workers, 0);
  for (const TaskRecord &t : p.tasks)
    if (t.worker < step.size())
      step[t.worker] += streamedBytes(t);
  if (!step.empty()) {
    const auto [lo, hi] = std::minmax_element(step.begin(), step.end());
    const double mean = double(bytes.tasks) / double(step.size());
    std::snprintf(line, sizeof line, "streamed per worker over the step: %s..%s bytes, the busiest %.2f%% above the mean\n",
                  thousands(*lo).c_str(), thousands(*hi).c_str(), mean > 0 ? 100 * (double(*hi) / mean - 1) : 0.0);
    os << line;
    // The ring's cover in time: while every worker streams, the busiest one
    // reads at its bytes' share of the bandwidth, and its full ring lasts
    // this long once its consumers stop at a hand-off (docs/PERFORMANCE.md,
    // step 43: on the H100 a ring of 4 stages instead of 6 made the 1B's
    // step 5% slower).
    if (p.stream.model != ExecutionModel::Plain && *hi > 0 && bytes.tasks > 0 &&
        p.target.bandwidthGBs > 0) {
      const double share = p.target.bandwidthGBs * double(*hi) / double(bytes.tasks);
      std::snprintf(line, sizeof line,
                    "the ring holds %.2f us of the busiest worker's stream (%.1f GB/s of %s): "
                    "a longer stop at a hand-off idles its share of memory\n",
                    double(p.stream.ringBytes()) / share / 1e3, share,
                    thousands(uint64_t(p.target.bandwidthGBs + 0.5)).c_str());
      os << line;
    }
  }
}
