//===- PlanStats.cpp - What a plan streams, wave by wave ------------------===//
#include "ti/Codegen/PlanStats.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

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

bool streamsMatrix(uint16_t opcode) {
  return opcode == uint16_t(Opcode::Gemv) || opcode == uint16_t(Opcode::LmHead) ||
         opcode == uint16_t(Opcode::FfnPartial);
}

} // namespace

uint64_t ti::streamedBytes(const TaskRecord &t) {
  uint64_t bytes = t.weight != kNone ? t.weightBytes : 0;
  if (t.norm != kNone)
    bytes += uint64_t(t.aux[0]) * 2;
  return bytes;
}

void ti::printPlanStats(const Plan &p, std::ostream &os) {
  char line[256];
  std::map<BarrierKind, unsigned> barriers;
  for (const Wave &w : p.waves)
    ++barriers[w.barrier];
  os << "plan " << p.model.name << " for " << p.target.name << ": " << p.target.workers
     << " workers, " << p.waves.size() << " waves, " << thousands(p.tasks.size()) << " tasks\n";
  os << "  barriers: " << barriers[BarrierKind::Grid] << " grid, "
     << barriers[BarrierKind::GridIfLong] << " grid if context > "
     << p.attention.splitContext << ", " << barriers[BarrierKind::None] << " none\n";
  os << "  attention: " << p.attention.chunks << " chunks above context "
     << p.attention.splitContext << "; max context " << p.model.maxContext << "\n";

  // Where the streamed bytes come from.
  uint64_t packed = 0;
  for (const PackedTensor &t : p.weights)
    packed += t.bytes;
  auto tensorOf = [&](uint64_t offset) -> int {
    for (size_t i = 0; i < p.weights.size(); ++i)
      if (offset >= p.weights[i].offset && offset < p.weights[i].offset + p.weights[i].bytes)
        return i;
    return -1;
  };
  std::set<int> streamed, gathered, norms;
  uint64_t total = 0, rows = 0, normReads = 0;
  for (const TaskRecord &t : p.tasks) {
    total += streamedBytes(t);
    if (t.norm != kNone) {
      norms.insert(tensorOf(t.norm));
      normReads += uint64_t(t.aux[0]) * 2;
    }
    if (t.weight == kNone)
      continue;
    if (streamsMatrix(t.opcode))
      streamed.insert(tensorOf(t.weight));
    if (t.opcode == uint16_t(Opcode::Embed)) {
      gathered.insert(tensorOf(t.weight));
      rows += t.weightBytes;
    }
  }
  uint64_t gatheredBytes = 0, normBytes = 0;
  for (int i : gathered)
    if (i >= 0 && !streamed.count(i))
      gatheredBytes += p.weights[i].bytes;
  for (int i : norms)
    if (i >= 0)
      normBytes += p.weights[i].bytes;

  os << "  weights: " << thousands(p.weightsBytes) << " bytes in " << p.weights.size()
     << " packed tensors; arena " << thousands(p.arenaBytes) << " bytes\n";
  os << "streamed per token: " << thousands(total) << " bytes\n";
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "packed weights, each once", thousands(packed).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "- tables gathered by row, not streamed",
                signedThousands(-int64_t(gatheredBytes)).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "+ the embedding row", signedThousands(rows).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-34s %18s\n", "+ norm scales re-read by fused tasks",
                signedThousands(int64_t(normReads) - int64_t(normBytes)).c_str());
  os << line;
  uint64_t sum = packed - gatheredBytes + rows + normReads - normBytes;
  std::snprintf(line, sizeof line, "  %-34s %18s%s\n", "= streamed per token", thousands(sum).c_str(),
                sum == total ? "" : "  (does not match the tasks: a bug)");
  os << line;

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
      if (streamsMatrix(opcode))
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
}
