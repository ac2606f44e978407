//===- PlanFile.cpp - A plan as a FlatBuffers file ------------------------===//
//
// Writing is a direct transcription of the Plan into schema/plan.fbs. Reading
// treats the bytes as hostile and checks, in order:
//
//   1. the identifier ("TIPL" at bytes 4..8), so that a wrong file gets a
//      plain answer rather than "corrupt";
//   2. alignment: FlatBuffers reads scalars in place, so bytes not aligned to
//      8 (the widest scalar) are copied first. Vectors are copied out as bytes
//      (the verifier does not check their elements' alignment);
//   3. the format version, from the root table alone (verified for just that),
//      so that a plan of another version is named as such even where its
//      fields are laid out differently;
//   4. the FlatBuffers verifier, with bounds on nesting depth and table count:
//      after it every offset, string and vector lies inside the buffer. It
//      checks bounds only;
//   5. while converting, that every table, vector and string the writer
//      always writes is present and every enum value is known, and that the
//      conversion copies no more bytes than the file holds. The verifier lets
//      many offsets point to one table or string (a FlatBuffer is a DAG), so
//      without that budget a small hostile file could make the conversion
//      allocate gigabytes. A file this writer made never shares storage, so
//      its copies add up to less than its size.
//
// Whether the plan makes sense (offsets inside the arena, one writer per byte,
// ...) is the plan verifier's question, asked after this.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanFile.h"

#include "ti/Support/AtomicFile.h"

#include "plan_generated.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ti;
using namespace ti::plan;

// The task array and the params are copied as bytes in both directions, and
// the file is little-endian.
static_assert(FLATBUFFERS_LITTLEENDIAN, "plan files are read by memcpy: little-endian hosts only");
static_assert(sizeof(fb::TaskRecord) == sizeof(TaskRecord));
static_assert(alignof(fb::TaskRecord) == alignof(TaskRecord));
static_assert(std::is_trivially_copyable_v<fb::TaskRecord> &&
              std::is_trivially_copyable_v<TaskRecord>);

// The schema's enums are the Plan's, value for value.
#define TI_SAME_ENUM(Enum, Value)                                                                  \
  static_assert(static_cast<int>(fb::Enum::Value) == static_cast<int>(Enum::Value));
TI_SAME_ENUM(ExecutionModel, Plain)
TI_SAME_ENUM(ExecutionModel, Stream)
TI_SAME_ENUM(BufferKind, Activation)
TI_SAME_ENUM(BufferKind, Logits)
TI_SAME_ENUM(BufferKind, Partials)
TI_SAME_ENUM(BufferKind, KCache)
TI_SAME_ENUM(BufferKind, VCache)
TI_SAME_ENUM(BufferKind, AttentionWorkspace)
TI_SAME_ENUM(BufferKind, Candidates)
TI_SAME_ENUM(BufferKind, TokenSlots)
TI_SAME_ENUM(BufferKind, Prompt)
TI_SAME_ENUM(BufferKind, StepState)
TI_SAME_ENUM(BarrierKind, None)
TI_SAME_ENUM(BarrierKind, Grid)
TI_SAME_ENUM(BarrierKind, GridIfLong)
TI_SAME_ENUM(BarrierKind, Tagged)
#undef TI_SAME_ENUM

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
using FbBuilder = flatbuffers::FlatBufferBuilder;
template <typename T> using Offset = flatbuffers::Offset<T>;

// Every string and vector is created in a statement of its own, in a fixed
// order: as arguments of one call their order would be the compiler's (GCC
// and clang differ), and so would the file's bytes.
Offset<fb::ModelInfo> writeModel(FbBuilder &b, const ModelInfo &m) {
  auto name = b.CreateString(m.name);
  auto eos = b.CreateVector(m.eos);
  return fb::CreateModelInfo(b, name, m.vocab, m.hidden, m.ffn, m.layers, m.heads, m.kvHeads, m.headDim,
                             m.maxContext, m.bos, eos, m.rmsEps);
}

Offset<fb::TargetInfo> writeTarget(FbBuilder &b, const TargetInfo &t) {
  auto name = b.CreateString(t.name);
  auto arch = b.CreateString(t.arch);
  auto fingerprint = b.CreateString(t.workerFingerprint);
  return fb::CreateTargetInfo(b, name, arch, t.workers, t.threadsPerWorker, t.maxRegisters,
                              t.bandwidthGBs, fingerprint);
}

Offset<fb::PackedTensor> writeTensor(FbBuilder &b, const PackedTensor &t) {
  std::vector<Offset<fb::WeightSegment>> segments;
  for (const WeightSegment &s : t.segments) {
    auto checkpoint = b.CreateString(s.checkpoint);
    auto shape = b.CreateVector(s.sourceShape);
    segments.push_back(fb::CreateWeightSegment(b, checkpoint, shape, s.rowBegin, s.rowEnd, s.colBegin,
                                               s.colEnd, s.transposed, s.tiled));
  }
  auto name = b.CreateString(t.name);
  auto list = b.CreateVector(segments);
  return fb::CreatePackedTensor(b, name, t.offset, t.bytes, list);
}
} // namespace

std::string ti::plan::serializePlan(const Plan &plan) {
  FbBuilder b(16 * 1024);
  // The task array goes first, so it ends the file (a FlatBuffer is built back
  // to front) and its last byte is the file's: then every truncation cuts into
  // an object the verifier checks, and no truncated file reads as whole. The
  // bytes are TaskRecord.h's, which the schema's struct mirrors.
  const size_t taskCount = plan.tasks.size();
  b.StartVector(taskCount * sizeof(TaskRecord) / alignof(fb::TaskRecord), alignof(fb::TaskRecord));
  if (taskCount)
    b.PushBytes(reinterpret_cast<const uint8_t *>(plan.tasks.data()),
                taskCount * sizeof(TaskRecord));
  Offset<flatbuffers::Vector<const fb::TaskRecord *>> tasks(b.EndVector(taskCount));
  auto params = b.CreateVector(plan.params);

  auto model = writeModel(b, plan.model);
  auto target = writeTarget(b, plan.target);
  auto attention = fb::CreateAttentionConfig(b, plan.attention.splitContext,
                                             plan.attention.streamKvContext,
                                             plan.attention.shortMmaContext);
  std::vector<Offset<fb::PackedTensor>> weights;
  for (const PackedTensor &t : plan.weights)
    weights.push_back(writeTensor(b, t));
  std::vector<Offset<fb::Buffer>> buffers;
  for (const Buffer &buf : plan.buffers) {
    auto name = b.CreateString(buf.name);
    buffers.push_back(fb::CreateBuffer(b, name, static_cast<fb::BufferKind>(buf.kind), buf.offset,
                                       buf.bytes, buf.tagged));
  }
  std::vector<Offset<fb::Wave>> waves;
  for (const Wave &w : plan.waves) {
    auto name = b.CreateString(w.name);
    waves.push_back(fb::CreateWave(b, name, static_cast<fb::BarrierKind>(w.barrier)));
  }

  // A Plain plan carries no stream table: it reads as every plan before it.
  Offset<fb::StreamConfig> stream;
  if (plan.stream.model != ExecutionModel::Plain)
    stream = fb::CreateStreamConfig(b, static_cast<fb::ExecutionModel>(plan.stream.model),
                                    plan.stream.stageBytes, plan.stream.stages,
                                    plan.stream.inFlightStages, plan.stream.handOffInFlightStages,
                                    plan.stream.rowPartBytes,
                                    plan.stream.copiesEvictFirst, plan.stream.kvCopiesUnhinted);
  auto weightList = b.CreateVector(weights);
  auto bufferList = b.CreateVector(buffers);
  auto waveList = b.CreateVector(waves);
  auto root = fb::CreatePlan(b, plan.formatVersion, model, target, attention, weightList, plan.weightsBytes,
                             plan.layoutHash, bufferList, plan.arenaBytes, waveList, tasks, params, stream);
  fb::FinishPlanBuffer(b, root);
  return std::string(reinterpret_cast<const char *>(b.GetBufferPointer()), b.GetSize());
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

#define TI_RETURN_IF_ERROR(expr)                                                                   \
  do {                                                                                             \
    Status status_ = (expr);                                                                       \
    if (!status_.ok())                                                                             \
      return status_;                                                                              \
  } while (0)

namespace {
/// Converts a verified FlatBuffer into a Plan (step 5 of the file comment).
class PlanReader {
public:
  explicit PlanReader(size_t fileBytes) : budget(fileBytes) {}

  Status read(const fb::Plan &in, Plan &out);

private:
  Status readModel(const fb::ModelInfo &in, ModelInfo &out);
  Status readTarget(const fb::TargetInfo &in, TargetInfo &out);
  Status readTensor(size_t index, const fb::PackedTensor &in, PackedTensor &out);
  Status readBuffer(size_t index, const fb::Buffer &in, Buffer &out);
  Status readWave(size_t index, const fb::Wave &in, Wave &out);

  /// Takes `bytes` from the budget, or says the file shares storage.
  Status charge(uint64_t bytes) {
    if (bytes > budget)
      return Status::error("plan file is corrupt: its fields share storage (there is more "
                           "to read than the file holds)");
    budget -= bytes;
    return {};
  }
  /// A table costs at least its 4-byte vtable offset.
  Status chargeTable() { return charge(sizeof(flatbuffers::soffset_t)); }

  Status copyString(const flatbuffers::String *s, std::string &out, const std::string &missing) {
    if (!s)
      return Status::error(missing);
    TI_RETURN_IF_ERROR(charge(s->size()));
    out.assign(s->c_str(), s->size());
    return {};
  }

  /// Copies a vector of scalars as bytes: the verifier (2.0.8) checks that a
  /// vector's length is aligned but not its elements, and a ulong vector at
  /// 4 mod 8 would make a typed read misaligned.
  template <typename T>
  Status copyVector(const flatbuffers::Vector<T> *v, std::vector<T> &out,
                    const std::string &missing) {
    static_assert(std::is_arithmetic_v<T>);
    if (!v)
      return Status::error(missing);
    TI_RETURN_IF_ERROR(charge(uint64_t(v->size()) * sizeof(T)));
    out.resize(v->size());
    if (!out.empty())
      std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
    return {};
  }

  /// Reads a vector of tables, each element by `readOne`.
  template <typename Table, typename T>
  Status readTables(const flatbuffers::Vector<flatbuffers::Offset<Table>> *in, std::vector<T> &out,
                    const char *missing,
                    Status (PlanReader::*readOne)(size_t, const Table &, T &)) {
    if (!in)
      return Status::error(missing);
    TI_RETURN_IF_ERROR(charge(uint64_t(in->size()) * sizeof(flatbuffers::uoffset_t)));
    out.resize(in->size());
    for (flatbuffers::uoffset_t i = 0; i < in->size(); ++i)
      TI_RETURN_IF_ERROR((this->*readOne)(i, *in->Get(i), out[i]));
    return {};
  }

  uint64_t budget;
};
} // namespace

Status PlanReader::readModel(const fb::ModelInfo &in, ModelInfo &out) {
  TI_RETURN_IF_ERROR(chargeTable());
  TI_RETURN_IF_ERROR(copyString(in.name(), out.name, "model info has no name"));
  out.vocab = in.vocab();
  out.hidden = in.hidden();
  out.ffn = in.ffn();
  out.layers = in.layers();
  out.heads = in.heads();
  out.kvHeads = in.kv_heads();
  out.headDim = in.head_dim();
  out.maxContext = in.max_context();
  out.bos = in.bos();
  TI_RETURN_IF_ERROR(copyVector(in.eos(), out.eos, "model info has no eos list"));
  out.rmsEps = in.rms_eps();
  return {};
}

Status PlanReader::readTarget(const fb::TargetInfo &in, TargetInfo &out) {
  TI_RETURN_IF_ERROR(chargeTable());
  TI_RETURN_IF_ERROR(copyString(in.name(), out.name, "target info has no name"));
  TI_RETURN_IF_ERROR(copyString(in.arch(), out.arch, "target info has no arch"));
  out.workers = in.workers();
  out.threadsPerWorker = in.threads_per_worker();
  out.maxRegisters = in.max_registers();
  out.bandwidthGBs = in.bandwidth_gbs();
  // Optional: absent means the plan was made for no particular binary.
  if (in.worker_fingerprint())
    TI_RETURN_IF_ERROR(copyString(in.worker_fingerprint(), out.workerFingerprint, ""));
  return {};
}

Status PlanReader::readTensor(size_t index, const fb::PackedTensor &in, PackedTensor &out) {
  TI_RETURN_IF_ERROR(chargeTable());
  std::string what = "packed tensor " + std::to_string(index);
  TI_RETURN_IF_ERROR(copyString(in.name(), out.name, what + " has no name"));
  out.offset = in.offset();
  out.bytes = in.bytes();
  const auto *segments = in.segments();
  if (!segments)
    return Status::error(what + " has no segments list");
  TI_RETURN_IF_ERROR(charge(uint64_t(segments->size()) * sizeof(flatbuffers::uoffset_t)));
  out.segments.resize(segments->size());
  for (flatbuffers::uoffset_t i = 0; i < segments->size(); ++i) {
    const fb::WeightSegment &s = *segments->Get(i);
    WeightSegment &o = out.segments[i];
    std::string segment = "segment " + std::to_string(i) + " of " + what;
    TI_RETURN_IF_ERROR(chargeTable());
    TI_RETURN_IF_ERROR(copyString(s.checkpoint(), o.checkpoint, segment + " has no checkpoint"));
    TI_RETURN_IF_ERROR(
        copyVector(s.source_shape(), o.sourceShape, segment + " has no source shape"));
    o.rowBegin = s.row_begin();
    o.rowEnd = s.row_end();
    o.colBegin = s.col_begin();
    o.colEnd = s.col_end();
    o.transposed = s.transposed();
    o.tiled = s.tiled();
  }
  return {};
}

Status PlanReader::readBuffer(size_t index, const fb::Buffer &in, Buffer &out) {
  TI_RETURN_IF_ERROR(chargeTable());
  std::string what = "buffer " + std::to_string(index);
  TI_RETURN_IF_ERROR(copyString(in.name(), out.name, what + " has no name"));
  auto kind = static_cast<unsigned>(in.kind());
  if (kind > static_cast<unsigned>(fb::BufferKind::MAX))
    return Status::error(what + " has unknown kind " + std::to_string(kind));
  out.kind = static_cast<BufferKind>(kind);
  out.offset = in.offset();
  out.bytes = in.bytes();
  out.tagged = in.tagged();
  return {};
}

Status PlanReader::readWave(size_t index, const fb::Wave &in, Wave &out) {
  TI_RETURN_IF_ERROR(chargeTable());
  std::string what = "wave " + std::to_string(index);
  TI_RETURN_IF_ERROR(copyString(in.name(), out.name, what + " has no name"));
  auto barrier = static_cast<unsigned>(in.barrier());
  if (barrier > static_cast<unsigned>(fb::BarrierKind::MAX))
    return Status::error(what + " has unknown barrier kind " + std::to_string(barrier));
  out.barrier = static_cast<BarrierKind>(barrier);
  return {};
}

Status PlanReader::read(const fb::Plan &in, Plan &out) {
  TI_RETURN_IF_ERROR(chargeTable());
  out.formatVersion = in.format_version();
  if (!in.model())
    return Status::error("plan has no model info");
  TI_RETURN_IF_ERROR(readModel(*in.model(), out.model));
  if (!in.target())
    return Status::error("plan has no target info");
  TI_RETURN_IF_ERROR(readTarget(*in.target(), out.target));
  if (!in.attention())
    return Status::error("plan has no attention config");
  TI_RETURN_IF_ERROR(chargeTable());
  out.attention.splitContext = in.attention()->split_context();
  out.attention.streamKvContext = in.attention()->stream_kv_context();
  out.attention.shortMmaContext = in.attention()->short_mma_context();
  if (const fb::StreamConfig *stream = in.stream()) {
    TI_RETURN_IF_ERROR(chargeTable());
    auto model = static_cast<unsigned>(stream->model());
    if (model > static_cast<unsigned>(fb::ExecutionModel::MAX))
      return Status::error("plan has unknown execution model " + std::to_string(model));
    out.stream.model = static_cast<ExecutionModel>(model);
    out.stream.stageBytes = stream->stage_bytes();
    out.stream.stages = stream->stages();
    out.stream.inFlightStages = stream->in_flight_stages();
    // Absent: the field's default, ~0, is "as in flight".
    out.stream.handOffInFlightStages = stream->hand_off_in_flight_stages() == ~0u
                                           ? out.stream.inFlightStages
                                           : stream->hand_off_in_flight_stages();
    out.stream.rowPartBytes = stream->row_part_bytes();
    out.stream.copiesEvictFirst = stream->copies_evict_first();
    out.stream.kvCopiesUnhinted = stream->kv_copies_unhinted();
  }

  TI_RETURN_IF_ERROR(
      readTables(in.weights(), out.weights, "plan has no weights list", &PlanReader::readTensor));
  out.weightsBytes = in.weights_bytes();
  out.layoutHash = in.layout_hash();
  TI_RETURN_IF_ERROR(
      readTables(in.buffers(), out.buffers, "plan has no buffers list", &PlanReader::readBuffer));
  out.arenaBytes = in.arena_bytes();
  TI_RETURN_IF_ERROR(
      readTables(in.waves(), out.waves, "plan has no waves list", &PlanReader::readWave));

  const auto *tasks = in.tasks();
  if (!tasks)
    return Status::error("plan has no tasks list");
  TI_RETURN_IF_ERROR(charge(uint64_t(tasks->size()) * sizeof(TaskRecord)));
  out.tasks.resize(tasks->size());
  if (!out.tasks.empty())
    std::memcpy(out.tasks.data(), tasks->Data(), out.tasks.size() * sizeof(TaskRecord));
  return copyVector(in.params(), out.params, "plan has no params list");
}

/// Whether the schema's TaskRecord puts each field where TaskRecord.h does:
/// equal sizes (asserted above) would not catch two fields swapped.
static bool taskLayoutMatchesSchema() {
  TaskRecord r = {1,  2,  3,  4,        5,        6,        7,           8,
                  9,  10, 11, {12, 13, 14}, {15, 16}, {17, 18}, {19, 20, 21, 22}};
  fb::TaskRecord f;
  std::memcpy(static_cast<void *>(&f), &r, sizeof r);
  const fb::HeadGeometry &g = f.geometry();
  return f.opcode() == 1 && f.flags() == 2 && f.wave() == 3 && f.worker() == 4 && f.layer() == 5 &&
         f.row_begin() == 6 && f.row_end() == 7 && f.param() == 8 && f.weight() == 9 &&
         f.weight_bytes() == 10 && f.norm() == 11 && f.in()->Get(0) == 12 && f.in()->Get(1) == 13 &&
         f.in()->Get(2) == 14 && f.out()->Get(0) == 15 && f.out()->Get(1) == 16 &&
         f.aux()->Get(0) == 17 && f.aux()->Get(1) == 18 && g.heads() == 19 && g.kv_heads() == 20 &&
         g.head_dim() == 21 && g.chunks() == 22;
}

StatusOr<Plan> ti::plan::readPlan(const void *data, size_t size) {
  // 1. The identifier follows the 4-byte root offset.
  const auto *bytes = static_cast<const uint8_t *>(data);
  if (size < sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength ||
      std::memcmp(bytes + sizeof(flatbuffers::uoffset_t), kFileIdentifier,
                  flatbuffers::kFileIdentifierLength) != 0)
    return Status::error(std::string("not a plan file: missing the ") + kFileIdentifier +
                         " identifier");
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return Status::error("plan file is too large: " + std::to_string(size) +
                         " bytes, a FlatBuffer holds less than 2 GiB");

  // 2. Alignment.
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(bytes) % alignof(uint64_t) != 0) {
    aligned.resize((size + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(aligned.data(), bytes, size);
    bytes = reinterpret_cast<const uint8_t *>(aligned.data());
  }

  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 1u << 20;
  options.check_alignment = true;

  // 3. The version, verified and read from the root table alone: another
  // version may lay its fields out differently (version 1's tasks were 96
  // bytes), so that the full verifier would call its file corrupt.
  {
    flatbuffers::Verifier rootOnly(bytes, size, options);
    const flatbuffers::uoffset_t at = rootOnly.VerifyOffset(0);
    const auto *table = at ? reinterpret_cast<const flatbuffers::Table *>(bytes + at) : nullptr;
    if (!table || !table->VerifyTableStart(rootOnly) ||
        !table->VerifyField<uint32_t>(rootOnly, fb::Plan::VT_FORMAT_VERSION, 4))
      return Status::error("plan file is corrupt: the FlatBuffers verifier rejected it");
    const uint32_t version = table->GetField<uint32_t>(fb::Plan::VT_FORMAT_VERSION, 0);
    if (version != kFormatVersion)
      return Status::error("plan format version " + std::to_string(version) +
                           ", this build reads " + std::to_string(kFormatVersion) +
                           ": compile the plan again with this build's tic");
  }

  // 4. Bounds. A plan nests 6 deep (plan, weights, tensor, segments, segment,
  // shape) and holds a few thousand tables; anything far past that is garbage.
  flatbuffers::Verifier verifier(bytes, size, options);
  if (!fb::VerifyPlanBuffer(verifier))
    return Status::error("plan file is corrupt: the FlatBuffers verifier rejected it");
  const fb::Plan &root = *fb::GetPlan(bytes);

  // 5. The fields.
  static const bool layoutMatches = taskLayoutMatchesSchema();
  if (!layoutMatches)
    return Status::error("this build is broken: schema/plan.fbs's TaskRecord does not "
                         "match TaskRecord.h");
  Plan plan;
  TI_RETURN_IF_ERROR(PlanReader(size).read(root, plan));
  return plan;
}

StatusOr<Plan> ti::plan::readPlanFile(const std::string &path) {
  auto cannotRead = [&](int error) {
    return Status::error("cannot read '" + path + "': " + std::strerror(error));
  };
  // O_NONBLOCK: a FIFO must not block the open; anything but a regular file
  // is refused before it is read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return cannotRead(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int error = errno;
    ::close(fd);
    return cannotRead(error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode))
      return cannotRead(EISDIR);
    return Status::error("cannot read '" + path + "': not a regular file");
  }
  std::string bytes;
  char chunk[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      return cannotRead(error);
    }
    if (n == 0)
      break;
    bytes.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return readPlan(bytes.data(), bytes.size());
}

Status ti::plan::writePlanFile(const Plan &plan, const std::string &path) {
  std::string error = writeFileAtomically(path, serializePlan(plan));
  if (!error.empty())
    return Status::error(error);
  return {};
}
