//===- Packer.cpp - A checkpoint into a plan's weights layout -------------===//
//
// 1. Collect every checkpoint tensor the plan's segments name, with the shape
//    the plan expects (a rank-1 tensor of n is one row: [0:1] x [0:n]), and
//    check the layout itself: every segment a block of its shape, every
//    tensor aligned, inside the data, its bytes its segments' and overlapping
//    no other, the layout hash right. The buffers below are sized from it.
// 2. Open the checkpoint and check every needed tensor before writing a
//    byte, collecting ALL the problems: missing tensors, wrong shapes,
//    unsupported dtypes, one per line. A missing lm_head.weight is read from
//    model.embed_tokens.weight when config.json says tie_word_embeddings.
// 3. Write the header, then the data in offset order through a bounded chunk
//    buffer, so that memory stays flat for any model:
//    a. cut each segment into pieces of whole output rows (a transposed
//       segment's output row is a source column), small enough to share
//       among threads, and fill the chunk with pieces and zero padding;
//    b. when the chunk is full, read what its pieces need: bf16 blocks that
//       are not transposed straight into the chunk; everything else into a
//       staging buffer, where adjacent column bands of one source (the FFN's
//       transposed down-projection slices, task after task) are merged into
//       one band so that each source row is read once per chunk, not once per
//       task. Reads are pread calls, shared among the threads;
//    c. convert (or, for random weights, generate) the pieces into the chunk
//       in parallel; a transposed piece goes through a small tile, so that
//       both its reads and its writes stay in cache;
//    d. append the chunk to the AtomicFileWriter on a writer thread, while
//       the next chunk fills the other of two chunk buffers (writing costs
//       as much as generating random weights), adding it to the payload's
//       checksum on the way;
//    e. the attachments; then the header again, with the payload's checksum
//       and its own, over the first; commit.
//    The chunk's contents do not depend on the threads, so neither does the
//    file.
//
//===----------------------------------------------------------------------===//
#include "ti/Weights/Packer.h"

#include "ti/Plan/WeightTiles.h"
#include "ti/Support/Bf16.h"
#include "ti/Weights/RandomWeights.h"
#include "ti/Weights/SafeTensors.h"
#include "ti/Weights/WeightsFile.h"
#include "ti/Support/AtomicFile.h"
#include "ti/Support/Checksum.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

using namespace ti;
using plan::PackedTensor;
using plan::WeightSegment;

namespace {

constexpr uint64_t kChunkBytes = 32ull << 20;   // Output bytes per chunk (two chunks).
constexpr uint64_t kStagingBytes = 2 * kChunkBytes; // Staged source bytes: a chunk of f32.
constexpr uint64_t kPieceBytes = 1ull << 20;    // Output bytes per unit of parallel work.
constexpr uint64_t kTile = 64;                  // Transpose tile edge, in elements.
constexpr uint64_t kPackedBytes = plan::kWeightBytes; // An output element.

const char *kTiedFrom = "model.embed_tokens.weight";
const char *kTiedTo = "lm_head.weight";

std::string shapeText(const std::vector<uint64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// A checkpoint tensor the plan reads.
struct Source {
  std::string name; // As the plan names it.
  std::vector<uint64_t> shape;
  uint64_t rows = 1, cols = 0;
  unsigned rank = 0;
  const SafeTensorInfo *info = nullptr; // Checkpoint mode: where it is read from.
  unsigned elementBytes = 2;
  uint64_t randomKey = 0; // Random mode: randomTensorKey.
};

/// A block of a source bound for the chunk: rows [r0, r1) x cols [c0, c1),
/// written at byte `out` of the chunk, row-major or transposed.
struct Piece {
  const Source *src = nullptr;
  uint64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  bool transposed = false;
  bool tiled = false; // In octet tiles (ti/Plan/WeightTiles.h); whole octets.
  uint64_t out = 0;
  bool direct = false;              // Read straight into the chunk (bf16, not transposed).
  const uint8_t *staged = nullptr;  // The block's (r0, c0) in staging.
  uint64_t stride = 0;              // Staged elements per source row.
};

struct ReadOp {
  const SafeTensorInfo *tensor;
  uint64_t offset; // Into the tensor's data.
  uint8_t *dst;
  uint64_t bytes;
};

/// Runs fn(i) for i in [0, n) on up to `threads` threads; the first error wins.
template <typename Fn> std::string parallelFor(size_t n, unsigned threads, Fn fn) {
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::string error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      std::string e = fn(i);
      if (!e.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (error.empty())
          error = std::move(e);
        next.store(n);
      }
    }
  };
  // The calling thread is one of the workers.
  size_t extra = std::min<size_t>(threads, n) - (n ? 1 : 0);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < extra; ++t)
    pool.emplace_back(work);
  if (n)
    work();
  for (std::thread &t : pool)
    t.join();
  return error;
}

void convertRow(SafeDType dtype, const uint8_t *src, uint64_t n, uint16_t *dst) {
  switch (dtype) {
  case SafeDType::BF16:
    std::memcpy(dst, src, 2 * n);
    return;
  case SafeDType::F16:
    for (uint64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      dst[i] = floatToBf16(halfToFloat(h));
    }
    return;
  case SafeDType::F32:
    for (uint64_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, src + 4 * i, 4);
      dst[i] = floatToBf16(f);
    }
    return;
  case SafeDType::Other:
    return; // Refused in step 2.
  }
}

class Packer {
public:
  Packer(const plan::Plan &plan, const PackOptions &opts) : plan(plan), opts(opts) {
    threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
    if (opts.chunkBytes) {
      chunkCap = std::max<uint64_t>(2, opts.chunkBytes + opts.chunkBytes % 2); // Whole bf16s.
      stagingCap = 2 * chunkCap;
    }
  }
  Status run(const std::string &outPath, PackReport &report);

private:
  Status collect();
  Status checkCheckpoint(PackReport &report);
  bool tiedInConfig() const;
  Status addSegment(const WeightSegment &seg);
  Status addZeros(uint64_t bytes);
  Status flush();
  std::string stage();
  void emitRow(const Piece &p, uint64_t j, uint64_t u0, uint64_t count, uint16_t *dst) const;
  void convert(const Piece &p) const;

  const plan::Plan &plan;
  const PackOptions &opts;
  unsigned threads;
  std::unique_ptr<SafeTensorsCheckpoint> ckpt;
  std::map<std::string, Source> sources;
  AtomicFileWriter writer;
  Checksum payload; // Of every byte after the header, in the order written.

  std::unique_ptr<uint16_t[]> chunks[2]; // Output; accessed as bytes for padding and reads.
  unsigned current = 0;                  // The chunk being filled; the other may be writing.
  std::unique_ptr<uint8_t[]> staging;
  uint64_t chunkCap = kChunkBytes, stagingCap = kStagingBytes;
  uint64_t chunkUsed = 0, stagingUsed = 0; // stagingUsed: reserved by pieces.
  std::vector<Piece> pieces;
  /// The write of the other chunk. Declared last: destroyed (waited for)
  /// before the buffers and the writer it uses.
  std::future<std::string> pendingWrite;

  uint16_t *chunk() { return chunks[current].get(); }
  uint8_t *chunkBytes() { return reinterpret_cast<uint8_t *>(chunk()); }
  std::string finishWrite() { return pendingWrite.valid() ? pendingWrite.get() : std::string(); }
};

/// Step 1.
Status Packer::collect() {
  std::vector<const PackedTensor *> order;
  for (const PackedTensor &t : plan.weights) {
    std::string who = "the plan's tensor '" + t.name + "'";
    if (t.offset % plan::kWeightAlignment || t.offset > plan.weightsBytes ||
        t.bytes > plan.weightsBytes - t.offset)
      return Status::error(who + " is misplaced: [" + std::to_string(t.offset) + ", +" +
                           std::to_string(t.bytes) + ") in " + std::to_string(plan.weightsBytes) +
                           " bytes");
    uint64_t bytes = 0;
    for (const WeightSegment &s : t.segments) {
      Source src;
      src.name = s.checkpoint;
      src.shape = s.sourceShape;
      src.rank = static_cast<unsigned>(s.sourceShape.size());
      src.rows = src.rank == 2 ? s.sourceShape[0] : 1;
      src.cols = src.rank >= 1 ? s.sourceShape[src.rank - 1] : 0;
      src.randomKey = randomTensorKey(opts.seed, s.checkpoint);
      // Bounded so that no byte count below can overflow.
      bool huge = src.cols && src.rows > (1ull << 62) / src.cols;
      if (src.rank < 1 || src.rank > 2 || huge || s.rowBegin >= s.rowEnd ||
          s.rowEnd > src.rows || s.colBegin >= s.colEnd || s.colEnd > src.cols)
        return Status::error(who + " has a segment of '" + s.checkpoint +
                             "' that is not a block of its shape " + shapeText(s.sourceShape));
      if (__builtin_add_overflow(bytes, kPackedBytes * s.elements(), &bytes))
        return Status::error(who + " has more bytes than a file can hold");
      auto [it, added] = sources.emplace(s.checkpoint, src);
      if (!added && it->second.shape != src.shape)
        return Status::error("the plan reads '" + s.checkpoint + "' as " +
                             shapeText(it->second.shape) + " and as " + shapeText(src.shape));
      if (s.tiled && (s.transposed || !plan::tileable(s.rowEnd - s.rowBegin, s.colEnd - s.colBegin)))
        return Status::error(who + " has a tiled segment of '" + s.checkpoint +
                             "' that is not whole octets of " + std::to_string(plan::kTileCols) +
                             "-column tiles (rows [" + std::to_string(s.rowBegin) + ", " +
                             std::to_string(s.rowEnd) + ") x cols [" + std::to_string(s.colBegin) +
                             ", " + std::to_string(s.colEnd) + "))");
      // A piece holds whole rows, of a tiled segment whole octets.
      uint64_t rowBytes = kPackedBytes * (s.transposed ? s.rowEnd - s.rowBegin : s.colEnd - s.colBegin) *
                          (s.tiled ? plan::kTileRows : 1);
      chunkCap = std::max(chunkCap, rowBytes);
      stagingCap = std::max(stagingCap, 2 * rowBytes); // Up to 4-byte sources.
    }
    if (bytes != t.bytes)
      return Status::error(who + " has " + std::to_string(t.bytes) +
                           " bytes, its segments hold " + std::to_string(bytes));
    order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->offset - order[i - 1]->offset < order[i - 1]->bytes)
      return Status::error("the plan's tensors '" + order[i - 1]->name + "' and '" +
                           order[i]->name + "' overlap");
  if (plan::layoutHash(plan.weights, plan.weightsBytes) != plan.layoutHash)
    return Status::error("the plan's layout hash does not match its weights layout");
  return Status();
}

bool Packer::tiedInConfig() const {
  std::ifstream in(ckpt->directory() + "/config.json");
  if (!in)
    return false;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json config = nlohmann::json::parse(text.str(), nullptr, false);
  if (config.is_discarded() || !config.is_object())
    return false;
  auto tie = config.find("tie_word_embeddings");
  return tie != config.end() && tie->is_boolean() && tie->get<bool>();
}

/// Step 2.
Status Packer::checkCheckpoint(PackReport &report) {
  auto opened = SafeTensorsCheckpoint::open(opts.checkpoint);
  if (!opened)
    return opened.status();
  ckpt = std::move(*opened);
  std::vector<std::string> problems;
  for (auto &[name, src] : sources) {
    const SafeTensorInfo *t = ckpt->find(name);
    std::string who = "'" + name + "'";
    if (!t && name == kTiedTo && ckpt->find(kTiedFrom) && tiedInConfig()) {
      t = ckpt->find(kTiedFrom);
      who += " (tied: read from '" + std::string(kTiedFrom) + "')";
      report.notes.push_back(std::string(kTiedTo) + " is tied (config.json: " +
                             "tie_word_embeddings): packed from " + kTiedFrom);
    }
    if (!t) {
      problems.push_back(who + " is missing (the plan needs " + shapeText(src.shape) + ")");
      continue;
    }
    if (t->shape != src.shape) {
      problems.push_back(who + " has shape " + shapeText(t->shape) +
                         " in the checkpoint, the plan needs " + shapeText(src.shape));
      continue;
    }
    if (t->dtype == SafeDType::Other) {
      problems.push_back(who + " has dtype " + t->dtypeName +
                         "; only BF16, F16 and F32 are converted");
      continue;
    }
    src.info = t;
    src.elementBytes = safeDTypeBytes(t->dtypeName);
  }
  if (problems.empty())
    return Status();
  std::string message = "the checkpoint '" + opts.checkpoint + "' does not fit the plan (" +
                        std::to_string(problems.size()) +
                        (problems.size() == 1 ? " problem):" : " problems):");
  for (const std::string &p : problems)
    message += "\n  " + p;
  return Status::error(message);
}

/// Step 3a: padding.
Status Packer::addZeros(uint64_t bytes) {
  while (bytes > 0) {
    if (chunkUsed == chunkCap)
      if (Status s = flush(); !s.ok())
        return s;
    uint64_t n = std::min(bytes, chunkCap - chunkUsed);
    std::memset(chunkBytes() + chunkUsed, 0, n);
    chunkUsed += n;
    bytes -= n;
  }
  return Status();
}

/// Step 3a: a segment, cut into pieces of whole output rows.
Status Packer::addSegment(const WeightSegment &seg) {
  const Source &src = sources.at(seg.checkpoint);
  uint64_t outRows = seg.transposed ? seg.colEnd - seg.colBegin : seg.rowEnd - seg.rowBegin;
  uint64_t rowElements = seg.transposed ? seg.rowEnd - seg.rowBegin : seg.colEnd - seg.colBegin;
  uint64_t rowBytes = kPackedBytes * rowElements;
  bool direct = src.info && src.info->dtype == SafeDType::BF16 && !seg.transposed && !seg.tiled;
  uint64_t stagedRowBytes = src.info && !direct ? rowElements * src.elementBytes : 0;
  // Rows go in whole octets when tiled (collect() checked the segment).
  const uint64_t grain = seg.tiled ? plan::kTileRows : 1;
  for (uint64_t k = 0; k < outRows;) {
    if (chunkCap - chunkUsed < grain * rowBytes || stagingCap - stagingUsed < grain * stagedRowBytes)
      if (Status s = flush(); !s.ok())
        return s;
    uint64_t n = std::min({outRows - k, (chunkCap - chunkUsed) / rowBytes,
                           std::max<uint64_t>(grain, kPieceBytes / rowBytes)});
    if (stagedRowBytes)
      n = std::min(n, (stagingCap - stagingUsed) / stagedRowBytes);
    n -= n % grain;
    Piece p;
    p.src = &src;
    p.transposed = seg.transposed;
    p.tiled = seg.tiled;
    p.direct = direct;
    p.out = chunkUsed;
    if (seg.transposed) {
      p.r0 = seg.rowBegin, p.r1 = seg.rowEnd;
      p.c0 = seg.colBegin + k, p.c1 = seg.colBegin + k + n;
    } else {
      p.r0 = seg.rowBegin + k, p.r1 = seg.rowBegin + k + n;
      p.c0 = seg.colBegin, p.c1 = seg.colEnd;
    }
    pieces.push_back(p);
    chunkUsed += n * rowBytes;
    stagingUsed += n * stagedRowBytes;
    k += n;
  }
  return Status();
}

/// Step 3b: the chunk's reads, planned and run; "" or the error.
std::string Packer::stage() {
  std::vector<ReadOp> ops;
  auto readBlock = [&](const Source &s, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1,
                       uint8_t *dst) {
    uint64_t es = s.elementBytes, rowBytes = (c1 - c0) * es;
    if (c0 == 0 && c1 == s.cols) {
      ops.push_back({s.info, r0 * s.cols * es, dst, (r1 - r0) * rowBytes});
      return;
    }
    for (uint64_t r = r0; r < r1; ++r)
      ops.push_back({s.info, (r * s.cols + c0) * es, dst + (r - r0) * rowBytes, rowBytes});
  };
  std::vector<Piece *> staged;
  for (Piece &p : pieces) {
    if (p.direct)
      readBlock(*p.src, p.r0, p.r1, p.c0, p.c1, chunkBytes() + p.out);
    else
      staged.push_back(&p);
  }
  // Merge column-adjacent blocks of the same rows of one source into bands.
  std::sort(staged.begin(), staged.end(), [](const Piece *a, const Piece *b) {
    return std::tie(a->src, a->r0, a->r1, a->c0) < std::tie(b->src, b->r0, b->r1, b->c0);
  });
  uint64_t at = 0;
  for (size_t i = 0; i < staged.size();) {
    size_t j = i + 1;
    while (j < staged.size() && staged[j]->src == staged[i]->src &&
           staged[j]->r0 == staged[i]->r0 && staged[j]->r1 == staged[i]->r1 &&
           staged[j]->c0 == staged[j - 1]->c1)
      ++j;
    const Source &s = *staged[i]->src;
    uint64_t r0 = staged[i]->r0, r1 = staged[i]->r1, c0 = staged[i]->c0, c1 = staged[j - 1]->c1;
    uint8_t *band = staging.get() + at;
    readBlock(s, r0, r1, c0, c1, band);
    for (size_t k = i; k < j; ++k) {
      staged[k]->staged = band + (staged[k]->c0 - c0) * s.elementBytes;
      staged[k]->stride = c1 - c0;
    }
    at += (r1 - r0) * (c1 - c0) * s.elementBytes;
    i = j;
  }
  return parallelFor(ops.size(), threads, [&](size_t i) {
    const ReadOp &op = ops[i];
    Status s = ckpt->read(*op.tensor, op.offset, op.dst, op.bytes);
    return s.ok() ? std::string() : s.message();
  });
}

/// Source row `j` of the piece (row r0 + j), columns [c0 + u0, c0 + u0 + count), as bf16.
void Packer::emitRow(const Piece &p, uint64_t j, uint64_t u0, uint64_t count,
                     uint16_t *dst) const {
  const Source &s = *p.src;
  if (s.info) {
    convertRow(s.info->dtype, p.staged + (j * p.stride + u0) * s.elementBytes, count, dst);
    return;
  }
  float values[256];
  uint64_t first = (p.r0 + j) * s.cols + p.c0 + u0;
  for (uint64_t done = 0; done < count;) {
    uint64_t n = std::min<uint64_t>(count - done, 256);
    randomWeightsKeyed(s.randomKey, s.rank, first + done, n, values);
    for (uint64_t i = 0; i < n; ++i)
      dst[done + i] = floatToBf16(values[i]);
    done += n;
  }
}

/// Step 3c.
void Packer::convert(const Piece &p) const {
  uint16_t *out = chunks[current].get() + p.out / 2;
  uint64_t rows = p.r1 - p.r0, cols = p.c1 - p.c0;
  if (p.tiled) {
    // Each row's 32-column pieces to their tiles (the piece starts at an octet).
    std::vector<uint16_t> row(cols);
    for (uint64_t j = 0; j < rows; ++j) {
      emitRow(p, j, 0, cols, row.data());
      for (uint64_t c = 0; c < cols; c += plan::kTileCols)
        std::memcpy(out + plan::tiledElement(j, c, cols), row.data() + c,
                    plan::kTileCols * sizeof(uint16_t));
    }
    return;
  }
  if (!p.transposed) {
    for (uint64_t j = 0; j < rows; ++j)
      emitRow(p, j, 0, cols, out + j * cols);
    return;
  }
  // out[u][j] = source[r0 + j][c0 + u]: a tile of source rows in, its
  // transpose out.
  uint16_t tile[kTile][kTile];
  for (uint64_t j0 = 0; j0 < rows; j0 += kTile) {
    uint64_t jn = std::min(kTile, rows - j0);
    for (uint64_t u0 = 0; u0 < cols; u0 += kTile) {
      uint64_t un = std::min(kTile, cols - u0);
      for (uint64_t j = 0; j < jn; ++j)
        emitRow(p, j0 + j, u0, un, tile[j]);
      for (uint64_t u = 0; u < un; ++u)
        for (uint64_t j = 0; j < jn; ++j)
          out[(u0 + u) * rows + j0 + j] = tile[j][u];
    }
  }
}

/// Steps 3b-3d for the current chunk.
Status Packer::flush() {
  if (chunkUsed == 0)
    return Status();
  if (ckpt)
    if (std::string e = stage(); !e.empty())
      return Status::error(e);
  std::string e = parallelFor(pieces.size(), threads, [&](size_t i) {
    if (!pieces[i].direct)
      convert(pieces[i]);
    return std::string();
  });
  // The other chunk's write must end before this one's starts (one writer)
  // and before the other chunk is filled again (right after this returns).
  std::string written = finishWrite();
  if (e.empty())
    e = std::move(written);
  if (!e.empty())
    return Status::error(e);
  pendingWrite = std::async(std::launch::async, [this, data = chunk(), bytes = chunkUsed] {
    payload.update(data, bytes);
    return writer.write(data, bytes);
  });
  current ^= 1;
  pieces.clear();
  chunkUsed = stagingUsed = 0;
  return Status();
}

Status Packer::run(const std::string &outPath, PackReport &report) {
  auto start = std::chrono::steady_clock::now();
  if (Status s = collect(); !s.ok())
    return s;
  if (!opts.random)
    if (Status s = checkCheckpoint(report); !s.ok())
      return s;
  for (auto &c : chunks)
    c.reset(new uint16_t[chunkCap / 2 + 1]);
  if (ckpt)
    staging.reset(new uint8_t[stagingCap]);

  WeightsHeader header = weightsHeaderFor(plan);
  if (opts.attachments.size() > kMaxAttachments)
    return Status::error("more than " + std::to_string(kMaxAttachments) + " attachments");
  for (const auto &[name, contents] : opts.attachments) {
    bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c <= 0x7E; });
    if (!printable || name.empty() || name.size() > kMaxAttachmentNameBytes || contents.size() > kMaxAttachmentBytes)
      return Status::error("an attachment needs a printable ASCII name of 1 to " + std::to_string(kMaxAttachmentNameBytes) +
                           " bytes and contents up to " + std::to_string(kMaxAttachmentBytes) + " bytes");
    header.attachments.push_back({name, 0, contents.size()});
  }
  std::string headerBytes = serializeWeightsHeader(header);
  if (std::string e = writer.open(outPath); !e.empty())
    return Status::error(e);
  if (std::string e = writer.write(headerBytes.data(), headerBytes.size()); !e.empty())
    return Status::error(e);
  std::vector<const PackedTensor *> order;
  for (const PackedTensor &t : plan.weights)
    order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto *a, auto *b) { return a->offset < b->offset; });
  uint64_t pos = 0; // In the data section.
  for (const PackedTensor *t : order) {
    if (Status s = addZeros(t->offset - pos); !s.ok())
      return s;
    for (const WeightSegment &seg : t->segments)
      if (Status s = addSegment(seg); !s.ok())
        return s;
    pos = t->offset + t->bytes;
  }
  if (Status s = addZeros(plan.weightsBytes - pos); !s.ok())
    return s;
  if (Status s = flush(); !s.ok())
    return s;
  if (std::string e = finishWrite(); !e.empty())
    return Status::error(e);
  for (const auto &[name, contents] : opts.attachments) {
    payload.update(contents.data(), contents.size());
    if (std::string e = writer.write(contents.data(), contents.size()); !e.empty())
      return Status::error(e);
  }
  // The header again, now with the payload's checksum (and its own).
  header.payloadChecksum = payload.value();
  headerBytes = serializeWeightsHeader(header);
  if (std::string e = writer.writeAt(0, headerBytes.data(), headerBytes.size()); !e.empty())
    return Status::error(e);
  if (std::string e = writer.commit(); !e.empty())
    return Status::error(e);
  report.tensors = plan.weights.size();
  report.bytes = writer.bytesWritten();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status();
}

} // namespace

Status ti::packWeights(const plan::Plan &plan, const PackOptions &opts, const std::string &outPath,
                       PackReport *report) {
  PackReport local;
  Packer packer(plan, opts);
  return packer.run(outPath, report ? *report : local);
}
