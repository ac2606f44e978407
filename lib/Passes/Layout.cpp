//===- Layout.cpp - Arena offsets and packed weights (layout) -------------===//
//
// 1. Size the buffers whose size depends on the tasks: one Candidate per
//    lm_head task, one partial row per FFN task, one token slot per worker.
// 2. Drop the buffers no stage touches any more (the outputs of fused ops) and
//    give the others arena offsets, each aligned to plan::kArenaAlignment.
// 3. Pack the weights in the order the step streams them, so that every task
//    reads ONE contiguous byte range: stacked matrices (Q|K|V, read by row
//    ranges) as one tensor; the FFN per task as its gate rows, its up rows, and
//    its columns of the down projection transposed; a GateUp (the SiLU*up
//    GEMV) per task as its gate rows, then its up rows; weights used whole (the
//    embedding, tied to the lm_head; the norm scales) once each. A tiled
//    stage's (tile-weights) rows go in octet tiles (ti/Plan/WeightTiles.h),
//    in a tensor of its own. Every tensor starts at a multiple of
//    plan::kWeightAlignment.
// 4. Record each task's stream: its packed tensor, offset and length.
//
//===----------------------------------------------------------------------===//
#include "ti/Passes/Passes.h"

#include <algorithm>

using namespace ti;
using namespace ti::tir;

namespace {

uint64_t alignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

constexpr uint64_t kW = plan::kWeightBytes, kA = plan::kActivationBytes;

class Layout : public Pass {
public:
  Layout() : Pass(PassId::Layout) {}

  bool run(Module &m, DiagnosticEngine &diags) override {
    sizeBuffers(m);
    placeBuffers(m);
    packWeights(m);
    return true;
  }

private:
  void sizeBuffers(Module &m) {
    for (const Stage &s : m.stages) {
      if (s.kind == StageKind::LmHead) {
        Buffer &c = m.buffers[s.output2.buffer];
        c.bytes += s.tasks.size() * sizeof(plan::Candidate);
      }
      if (s.kind == StageKind::FfnPartial) {
        Buffer &p = m.buffers[s.output.buffer];
        p.bytes = std::max<uint64_t>(p.bytes, s.tasks.size() * s.cols * kA);
      }
    }
  }

  void placeBuffers(Module &m) {
    std::vector<bool> used(m.buffers.size());
    for (const Stage &s : m.stages)
      for (const Slice *sl : {&s.input, &s.input2, &s.input3, &s.residual, &s.output,
                              &s.output2, &s.output3})
        if (sl->valid())
          used[sl->buffer] = true;
    std::vector<int> remap(m.buffers.size(), kNoBuffer);
    std::vector<Buffer> kept;
    uint64_t offset = 0;
    for (size_t i = 0; i < m.buffers.size(); ++i) {
      if (!used[i] || m.buffers[i].bytes == 0)
        continue;
      remap[i] = kept.size();
      Buffer b = m.buffers[i];
      b.offset = offset;
      offset = alignUp(offset + b.bytes, plan::kArenaAlignment);
      kept.push_back(b);
    }
    count("buffers-dropped", m.buffers.size() - kept.size());
    m.buffers = std::move(kept);
    m.arenaBytes = offset;
    for (Stage &s : m.stages)
      for (Slice *sl : {&s.input, &s.input2, &s.input3, &s.residual, &s.output, &s.output2,
                        &s.output3})
        if (sl->valid())
          sl->buffer = remap[sl->buffer];
  }

  plan::WeightSegment segment(const Module &m, unsigned weight, uint64_t r0, uint64_t r1,
                              uint64_t c0, uint64_t c1, bool transposed = false) {
    const Weight &w = m.graph->weights[weight];
    plan::WeightSegment s;
    s.checkpoint = w.checkpoint;
    for (int64_t d : w.type.shape)
      s.sourceShape.push_back(d);
    s.rowBegin = r0;
    s.rowEnd = r1;
    s.colBegin = c0;
    s.colEnd = c1;
    s.transposed = transposed;
    return s;
  }

  /// Appends a packed tensor made of `segments`; returns its index.
  int addPacked(Module &m, std::string name, std::vector<plan::WeightSegment> segments) {
    plan::PackedTensor t;
    t.name = std::move(name);
    t.offset = m.weightsBytes;
    for (const plan::WeightSegment &s : segments)
      t.bytes += s.elements() * kW;
    t.segments = std::move(segments);
    m.weightsBytes = alignUp(t.offset + t.bytes, plan::kWeightAlignment);
    m.packed.push_back(std::move(t));
    return m.packed.size() - 1;
  }

  /// The packed tensor holding graph weight `w` whole (made on first use).
  int whole(Module &m, unsigned w) {
    if (m.wholePacked[w] >= 0)
      return m.wholePacked[w];
    const Weight &weight = m.graph->weights[w];
    uint64_t rows = weight.type.rank() == 2 ? weight.type.shape[0] : 1;
    uint64_t cols = weight.type.shape[weight.type.rank() - 1];
    m.wholePacked[w] = addPacked(m, weight.name, {segment(m, w, 0, rows, 0, cols)});
    return m.wholePacked[w];
  }

  void packWeights(Module &m) {
    m.packed.clear();
    m.weightsBytes = 0;
    m.wholePacked.assign(m.graph->weights.size(), -1);
    for (Stage &s : m.stages) {
      // Norm scales are read first by the task, so they come first.
      if (s.norm >= 0)
        whole(m, s.norm);
      switch (s.kind) {
      case StageKind::Embed: {
        int p = whole(m, s.matrix[0].weight);
        for (Task &t : s.tasks) {
          t.packed = p;
          t.weightOffset = m.packed[p].offset; // The row depends on the token.
          t.weightBytes = t.rows() * kW;
        }
        break;
      }
      case StageKind::Gemv:
        if (s.siluMul) {
          packMlpPerTask(m, s);
          break;
        }
        [[fallthrough]];
      case StageKind::LmHead: {
        const Weight &first = m.graph->weights[s.matrix[0].weight];
        int p;
        // A tiled stage's tensor is its own: a weight packed whole may be
        // read row-major elsewhere (the embedding tied to the lm_head).
        if (!s.tiled && s.matrix.size() == 1 && s.matrix[0].rowBegin == 0 &&
            s.matrix[0].rowEnd == static_cast<uint64_t>(first.type.shape[0])) {
          p = whole(m, s.matrix[0].weight);
        } else {
          std::vector<plan::WeightSegment> segs;
          for (const WeightRows &w : s.matrix) {
            segs.push_back(segment(m, w.weight, w.rowBegin, w.rowEnd, 0, s.cols));
            segs.back().tiled = s.tiled;
          }
          p = addPacked(m, s.name, std::move(segs));
        }
        for (Task &t : s.tasks) {
          t.packed = p;
          t.weightOffset = m.packed[p].offset + t.rowBegin * s.cols * kW;
          t.weightBytes = t.rows() * s.cols * kW;
        }
        break;
      }
      case StageKind::FfnPartial:
        packMlpPerTask(m, s);
        break;
      default:
        break;
      }
    }
    count("packed-tensors", m.packed.size());
  }

  /// The MLP task by task: its units' gate rows, then their up rows, and for
  /// an FfnPartial its columns of the down projection transposed
  /// (TaskRecord.h: GateUp, FfnPartial).
  void packMlpPerTask(Module &m, Stage &s) {
    const bool down = s.kind == StageKind::FfnPartial;
    const WeightRows &gate = s.matrix[0], &up = s.matrix[1];
    std::vector<plan::WeightSegment> segs;
    for (const Task &t : s.tasks) {
      segs.push_back(segment(m, gate.weight, gate.rowBegin + t.rowBegin, gate.rowBegin + t.rowEnd,
                             0, s.cols));
      segs.back().tiled = s.tiled;
      segs.push_back(
          segment(m, up.weight, up.rowBegin + t.rowBegin, up.rowBegin + t.rowEnd, 0, s.cols));
      segs.back().tiled = s.tiled;
      if (down)
        segs.push_back(segment(m, s.matrix[2].weight, 0, s.cols, t.rowBegin, t.rowEnd,
                               /*transposed=*/true));
    }
    int p = addPacked(m, s.name, std::move(segs));
    uint64_t offset = m.packed[p].offset;
    for (Task &t : s.tasks) {
      t.packed = p;
      t.weightOffset = offset;
      t.weightBytes = (down ? 3 : 2) * t.rows() * s.cols * kW;
      offset += t.weightBytes;
    }
  }
};

} // namespace

std::unique_ptr<Pass> ti::createLayoutPass() { return std::make_unique<Layout>(); }
