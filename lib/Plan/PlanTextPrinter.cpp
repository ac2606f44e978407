//===- PlanTextPrinter.cpp - A plan as text, for FileCheck ----------------===//
//
// The format is described in PlanTextPrinter.h. Two things need care: offsets
// are printed by the name of the buffer or tensor that holds them (a sorted
// range table, so a plan of 10^5 tasks prints quickly), and every value a
// broken plan can hold (unknown opcode, a wave index past the waves, NaN) still
// prints as something readable, because the printer is how bad plans are read.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanTextPrinter.h"

#include "ti/Support/Hex.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

using namespace ti::plan;

namespace {

/// Names offsets by the named range [begin, begin + bytes) that holds them.
/// Ranges may overlap in a broken plan: the one with the largest begin wins,
/// and among equal begins the first added.
class RangeNames {
public:
  void add(const std::string &name, uint64_t begin, uint64_t bytes) {
    uint64_t end = bytes > std::numeric_limits<uint64_t>::max() - begin
                       ? std::numeric_limits<uint64_t>::max()
                       : begin + bytes;
    if (end > begin)
      ranges.push_back({begin, end, &name, ranges.size()});
  }

  void finish() {
    // Ascending begin; within one begin the first added sorts last, so the
    // backward search below meets it first.
    std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) {
      return a.begin != b.begin ? a.begin < b.begin : a.order > b.order;
    });
    maxEnd.resize(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i)
      maxEnd[i] = std::max(ranges[i].end, i ? maxEnd[i - 1] : 0);
  }

  /// "NAME+off", or "@0x..." when no range holds `offset`.
  std::string name(uint64_t offset) const {
    auto it = std::upper_bound(ranges.begin(), ranges.end(), offset,
                               [](uint64_t o, const Range &r) { return o < r.begin; });
    // Walk back while some earlier range still reaches past `offset`.
    for (size_t i = it - ranges.begin(); i-- > 0 && maxEnd[i] > offset;)
      if (offset < ranges[i].end)
        return *ranges[i].name + '+' + std::to_string(offset - ranges[i].begin);
    char raw[32];
    std::snprintf(raw, sizeof raw, "@0x%llx", static_cast<unsigned long long>(offset));
    return raw;
  }

private:
  struct Range {
    uint64_t begin, end;
    const std::string *name;
    size_t order;
  };
  std::vector<Range> ranges;
  std::vector<uint64_t> maxEnd; // maxEnd[i] = max end of ranges[0..i].
};

/// The shortest text that reads back as the same value; locale-independent.
template <typename T> std::string number(T value) {
  char text[64];
  auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

/// A name as printed: an empty one as "" so the line keeps its shape.
std::string name(const std::string &s) { return s.empty() ? "\"\"" : s; }

std::string bufferKind(BufferKind kind) {
  std::string text = bufferKindName(kind);
  return text == "unknown" ? "unknown(" + std::to_string(unsigned(kind)) + ")" : text;
}

std::string barrierKind(BarrierKind kind) {
  std::string text = barrierKindName(kind);
  return text == "unknown" ? "unknown(" + std::to_string(unsigned(kind)) + ")" : text;
}

std::string flagsText(uint16_t flags) {
  static const struct {
    uint16_t bit;
    const char *name;
  } known[] = {
#define TI_TASK_FLAG(Name, Bit, Spelling) {kFlag##Name, Spelling},
#include "ti/Plan/TaskFlags.def"
  };
  std::string text;
  auto append = [&](const char *part) {
    if (!text.empty())
      text += '|';
    text += part;
  };
  for (const auto &k : known)
    if (flags & k.bit)
      append(k.name);
  if (uint16_t unknown = flags & ~kKnownFlags) {
    append(("0x" + ti::hexDigits(unknown, 1)).c_str());
  }
  return text;
}

/// " label=a,b": unused (kNone) slots at the end left out, inner ones as "-".
template <size_t N>
void printOffsets(std::ostream &os, const char *label, const uint64_t (&offsets)[N],
                  const RangeNames &arena) {
  size_t used = N;
  while (used > 0 && offsets[used - 1] == kNone)
    --used;
  if (used == 0)
    return;
  os << ' ' << label << '=';
  for (size_t i = 0; i < used; ++i)
    os << (i ? "," : "") << (offsets[i] == kNone ? "-" : arena.name(offsets[i]));
}

void printTask(std::ostream &os, const TaskRecord &t, unsigned index, const RangeNames &arena,
               const RangeNames &weights) {
  os << "  task " << t.worker << '.' << index << ' ';
  if (const char *op = opcodeName(t.opcode))
    os << op;
  else
    os << "opcode(" << t.opcode << ')';
  if (t.rowBegin != 0 || t.rowEnd != 0)
    os << " rows=[" << t.rowBegin << ", " << t.rowEnd << ')';
  if (t.layer != kNone32)
    os << " layer=" << t.layer;
  if (t.weight != kNone)
    os << " weight=" << weights.name(t.weight) << '/' << t.weightBytes;
  else if (t.weightBytes != 0)
    os << " weight=none/" << t.weightBytes;
  if (t.norm != kNone)
    os << " norm=" << weights.name(t.norm);
  printOffsets(os, "in", t.in, arena);
  printOffsets(os, "out", t.out, arena);
  if (t.aux[0] != 0 || t.aux[1] != 0)
    os << " aux=" << t.aux[0] << ',' << t.aux[1];
  const HeadGeometry &g = t.geometry;
  for (auto [name, value] : {std::pair{"heads", g.heads}, std::pair{"kv_heads", g.kvHeads},
                             std::pair{"head_dim", g.headDim}, std::pair{"chunks", g.chunks}})
    if (value)
      os << ' ' << name << '=' << value;
  if (t.param != kNone32)
    os << " param=" << t.param;
  if (t.flags != 0)
    os << " flags=" << flagsText(t.flags);
  os << '\n';
}

void printHeader(const Plan &plan, std::ostream &os) {
  const ModelInfo &m = plan.model;
  os << "plan format_version=" << plan.formatVersion << '\n';
  os << "model " << name(m.name) << " vocab=" << m.vocab << " hidden=" << m.hidden
     << " ffn=" << m.ffn << " layers=" << m.layers << " heads=" << m.heads
     << " kv_heads=" << m.kvHeads << " head_dim=" << m.headDim << " max_context=" << m.maxContext
     << " bos=" << m.bos << " eos=[";
  for (size_t i = 0; i < m.eos.size(); ++i)
    os << (i ? ", " : "") << m.eos[i];
  os << "] rms_eps=" << number(m.rmsEps) << '\n';

  const TargetInfo &t = plan.target;
  os << "target " << name(t.name) << " arch=" << name(t.arch) << " workers=" << t.workers
     << " threads_per_worker=" << t.threadsPerWorker << " max_registers=" << t.maxRegisters
     << " bandwidth_gbs=" << number(t.bandwidthGBs);
  // A plan made for no particular worker binary (a built-in target that was
  // not probed) says so.
  os << " fingerprint=" << (t.workerFingerprint.empty() ? "none" : t.workerFingerprint) << '\n';

  os << "attention split_context=" << plan.attention.splitContext;
  // Only a plan whose attention streams K/V rows has a use for the second.
  if (plan.attention.streamKvContext)
    os << " stream_kv_context=" << plan.attention.streamKvContext;
  if (plan.attention.shortMmaContext)
    os << " short_mma_context=" << plan.attention.shortMmaContext;
  os << '\n';
  // A Plain plan (the default) has no stream, and no line for it.
  if (const StreamConfig &st = plan.stream; st.model != ExecutionModel::Plain)
    os << "execution " << name(executionModelName(st.model)) << " stage_bytes=" << st.stageBytes
       << " stages=" << st.stages << " in_flight_stages=" << st.inFlightStages
       << " hand_off_in_flight_stages=" << st.handOffInFlightStages
       << " row_part_bytes=" << st.rowPartBytes
       << " copies_evict_first=" << (st.copiesEvictFirst ? "true" : "false")
       << " kv_copies_unhinted=" << (st.kvCopiesUnhinted ? "true" : "false") << '\n';
  os << "weights bytes=" << plan.weightsBytes << " layout_hash=" << ti::hexDigits(plan.layoutHash)
     << " tensors=" << plan.weights.size() << '\n';
  os << "arena bytes=" << plan.arenaBytes << " buffers=" << plan.buffers.size() << '\n';
  os << "params [";
  for (size_t i = 0; i < plan.params.size(); ++i)
    os << (i ? ", " : "") << number(plan.params[i]);
  os << "]\n";
}

} // namespace

void ti::plan::printPlanText(const Plan &plan, std::ostream &os) {
  printHeader(plan, os);

  RangeNames weights;
  for (const PackedTensor &t : plan.weights) {
    weights.add(t.name, t.offset, t.bytes);
    os << "weight " << name(t.name) << " offset=" << t.offset << " bytes=" << t.bytes;
    for (size_t i = 0; i < t.segments.size(); ++i) {
      const WeightSegment &s = t.segments[i];
      os << (i ? " + " : " <- ") << name(s.checkpoint) << '[' << s.rowBegin << ':' << s.rowEnd
         << ", " << s.colBegin << ':' << s.colEnd << ']' << (s.transposed ? "T" : "")
         << (s.tiled ? " tiled" : "");
    }
    os << '\n';
  }
  weights.finish();

  RangeNames arena;
  for (const Buffer &b : plan.buffers) {
    arena.add(b.name, b.offset, b.bytes);
    os << "buffer " << name(b.name) << " kind=" << bufferKind(b.kind) << (b.tagged ? " tagged" : "")
       << " offset=" << b.offset << " bytes=" << b.bytes << '\n';
  }
  arena.finish();

  // Tasks by wave, each wave's by worker then plan order. A task whose wave is
  // past the plan's waves gets a wave line of its own.
  size_t waveCount = plan.waves.size();
  for (const TaskRecord &t : plan.tasks)
    waveCount = std::max<size_t>(waveCount, size_t(t.wave) + 1);
  std::vector<std::vector<const TaskRecord *>> byWave(waveCount);
  for (const TaskRecord &t : plan.tasks)
    byWave[t.wave].push_back(&t);
  for (size_t w = 0; w < waveCount; ++w) {
    std::vector<const TaskRecord *> &tasks = byWave[w];
    if (w >= plan.waves.size() && tasks.empty())
      continue;
    std::stable_sort(tasks.begin(), tasks.end(), [](const TaskRecord *a, const TaskRecord *b) {
      return a->worker < b->worker;
    });
    os << "wave " << w << ' ';
    if (w < plan.waves.size())
      os << name(plan.waves[w].name) << " barrier=" << barrierKind(plan.waves[w].barrier);
    else
      os << "(missing)";
    os << " tasks=" << tasks.size() << '\n';
    unsigned index = 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
      index = i > 0 && tasks[i - 1]->worker == tasks[i]->worker ? index + 1 : 0;
      printTask(os, *tasks[i], index, arena, weights);
    }
  }
}
