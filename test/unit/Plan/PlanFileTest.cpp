//===- PlanFileTest.cpp ---------------------------------------------------===//
//
// The plan file: a round trip keeps every field, and reading refuses or
// accepts (never crashes on) wrong, truncated, flipped and hostile bytes. Run
// under AddressSanitizer, the corrupt-input tests also show that nothing is
// read outside the bytes given: each case reads from a buffer of exactly its
// size.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanTextPrinter.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace ti;
using namespace ti::plan;

namespace {

Plan samplePlan() {
  Plan p;
  p.model = {"tiny", 256, 64, 128, 2, 4, 2, 16, 128, 1, {2, 3}, 1e-5};
  p.target = {"h200", "sm_90", 132, 256, 128, 4800.5, "f00d"};
  p.attention = {64, 1024, 48};
  p.weights = {
      {"embed", 0, 32768, {{"model.embed_tokens.weight", {256, 64}, 0, 256, 0, 64, false}}},
      {"layer0.wqkv",
       32768,
       16384,
       {{"q_proj", {64, 64}, 0, 64, 0, 64, false}, {"k_proj", {64, 64}, 0, 64, 0, 64, true}}},
  };
  p.weightsBytes = 49152;
  p.layoutHash = layoutHash(p.weights, p.weightsBytes);
  p.buffers = {{"x", BufferKind::Activation, 0, 256},
               {"qkv", BufferKind::Activation, 256, 512},
               {"logits", BufferKind::Logits, 768, 1024},
               {"k.0", BufferKind::KCache, 2048, 8192}};
  p.arenaBytes = 10240;
  p.waves = {{"embed", BarrierKind::Grid},
             {"layer0.qkv", BarrierKind::GridIfLong},
             {"end", BarrierKind::None}};
  // opcode, flags, wave, worker, layer, rowBegin, rowEnd, param, weight, weightBytes, norm,
  // in, out, aux, geometry
  // clang-format off
  p.tasks = {
      {uint16_t(Opcode::Embed), 0, 0, 0, kNone32, 0, 64, kNone32, 0, 128, kNone,
       {kNone, kNone, kNone}, {0, kNone}, {64, 256}, {}},
      {uint16_t(Opcode::Gemv), kFlagResidual | kFlagVCache, 1, 0, 0, 0, 32, 0, 32768, 4096, 40000,
       {0, 128, kNone}, {256, 2048}, {64, 16}, {0, 2, 16, 0}},
      {uint16_t(Opcode::Gemv), 0, 1, 1, 0, 32, 64, 0, 36864, 4096, 40000,
       {0, kNone, kNone}, {384, kNone}, {64, 0}},
  };
  // clang-format on
  p.params = {1e-5f, 0.25f, -0.0f, 1.5f};
  return p;
}

void expectSamePlan(const Plan &a, const Plan &b) {
  EXPECT_EQ(a.formatVersion, b.formatVersion);
  const ModelInfo &m = a.model, &n = b.model;
  EXPECT_EQ(m.name, n.name);
  EXPECT_EQ(m.vocab, n.vocab);
  EXPECT_EQ(m.hidden, n.hidden);
  EXPECT_EQ(m.ffn, n.ffn);
  EXPECT_EQ(m.layers, n.layers);
  EXPECT_EQ(m.heads, n.heads);
  EXPECT_EQ(m.kvHeads, n.kvHeads);
  EXPECT_EQ(m.headDim, n.headDim);
  EXPECT_EQ(m.maxContext, n.maxContext);
  EXPECT_EQ(m.bos, n.bos);
  EXPECT_EQ(m.eos, n.eos);
  EXPECT_EQ(m.rmsEps, n.rmsEps);
  const TargetInfo &t = a.target, &u = b.target;
  EXPECT_EQ(t.name, u.name);
  EXPECT_EQ(t.arch, u.arch);
  EXPECT_EQ(t.workers, u.workers);
  EXPECT_EQ(t.threadsPerWorker, u.threadsPerWorker);
  EXPECT_EQ(t.maxRegisters, u.maxRegisters);
  EXPECT_EQ(t.bandwidthGBs, u.bandwidthGBs);
  EXPECT_EQ(t.workerFingerprint, u.workerFingerprint);
  EXPECT_EQ(a.attention.splitContext, b.attention.splitContext);
  EXPECT_EQ(a.attention.streamKvContext, b.attention.streamKvContext);
  EXPECT_EQ(a.attention.shortMmaContext, b.attention.shortMmaContext);
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (size_t i = 0; i < a.weights.size(); ++i) {
    const PackedTensor &x = a.weights[i], &y = b.weights[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.bytes, y.bytes);
    ASSERT_EQ(x.segments.size(), y.segments.size());
    for (size_t j = 0; j < x.segments.size(); ++j) {
      const WeightSegment &s = x.segments[j], &r = y.segments[j];
      EXPECT_EQ(s.checkpoint, r.checkpoint);
      EXPECT_EQ(s.sourceShape, r.sourceShape);
      EXPECT_EQ(s.rowBegin, r.rowBegin);
      EXPECT_EQ(s.rowEnd, r.rowEnd);
      EXPECT_EQ(s.colBegin, r.colBegin);
      EXPECT_EQ(s.colEnd, r.colEnd);
      EXPECT_EQ(s.transposed, r.transposed);
    }
  }
  EXPECT_EQ(a.weightsBytes, b.weightsBytes);
  EXPECT_EQ(a.layoutHash, b.layoutHash);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    EXPECT_EQ(a.buffers[i].name, b.buffers[i].name);
    EXPECT_EQ(a.buffers[i].kind, b.buffers[i].kind);
    EXPECT_EQ(a.buffers[i].offset, b.buffers[i].offset);
    EXPECT_EQ(a.buffers[i].bytes, b.buffers[i].bytes);
  }
  EXPECT_EQ(a.arenaBytes, b.arenaBytes);
  ASSERT_EQ(a.waves.size(), b.waves.size());
  for (size_t i = 0; i < a.waves.size(); ++i) {
    EXPECT_EQ(a.waves[i].name, b.waves[i].name);
    EXPECT_EQ(a.waves[i].barrier, b.waves[i].barrier);
  }
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  if (!a.tasks.empty()) {
    EXPECT_EQ(std::memcmp(a.tasks.data(), b.tasks.data(), a.tasks.size() * sizeof(TaskRecord)), 0);
  }
  // Bits, not values: -0.0 and NaN payloads survive too.
  ASSERT_EQ(a.params.size(), b.params.size());
  if (!a.params.empty()) {
    EXPECT_EQ(std::memcmp(a.params.data(), b.params.data(), a.params.size() * sizeof(float)), 0);
  }
}

/// Reads from a heap buffer of exactly `size` bytes, so that ASan sees any
/// read past the end.
StatusOr<Plan> readExact(const std::string &bytes, size_t size) {
  std::vector<uint8_t> exact(bytes.begin(), bytes.begin() + size);
  return readPlan(exact.data(), exact.size());
}

std::string readError(const std::string &bytes) {
  StatusOr<Plan> plan = readExact(bytes, bytes.size());
  return plan.ok() ? "(read successfully)" : plan.status().message();
}

TEST(PlanFile, RoundTripKeepsEveryField) {
  Plan plan = samplePlan();
  std::string bytes = serializePlan(plan);
  StatusOr<Plan> read = readExact(bytes, bytes.size());
  ASSERT_TRUE(read.ok()) << read.status().message();
  expectSamePlan(plan, *read);
  EXPECT_EQ(serializePlan(*read), bytes);
}

TEST(PlanFile, RoundTripOfAnEmptyPlan) {
  Plan plan;
  StatusOr<Plan> read = readPlan(serializePlan(plan).data(), serializePlan(plan).size());
  ASSERT_TRUE(read.ok()) << read.status().message();
  expectSamePlan(plan, *read);
}

TEST(PlanFile, CarriesTheIdentifier) {
  std::string bytes = serializePlan(samplePlan());
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(4, 4), "TIPL");
}

TEST(PlanFile, ReadsUnalignedBytes) {
  std::string bytes = serializePlan(samplePlan());
  std::vector<char> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  StatusOr<Plan> read = readPlan(shifted.data() + 1, bytes.size());
  ASSERT_TRUE(read.ok()) << read.status().message();
  expectSamePlan(samplePlan(), *read);
}

TEST(PlanFile, RefusesAWrongIdentifier) {
  std::string bytes = serializePlan(samplePlan());
  bytes.replace(4, 4, "TIPX");
  EXPECT_EQ(readError(bytes), "not a plan file: missing the TIPL identifier");
  EXPECT_EQ(readError(""), "not a plan file: missing the TIPL identifier");
  EXPECT_EQ(readError("1234TIP"), "not a plan file: missing the TIPL identifier");
  EXPECT_EQ(readError("graph tiny {\n}\n"), "not a plan file: missing the TIPL identifier");
}

TEST(PlanFile, RefusesEveryTruncation) {
  std::string bytes = serializePlan(samplePlan());
  for (size_t size = 0; size < bytes.size(); ++size) {
    StatusOr<Plan> read = readExact(bytes, size);
    EXPECT_FALSE(read.ok()) << "truncated to " << size << " of " << bytes.size() << " bytes";
  }
  EXPECT_TRUE(readExact(bytes, bytes.size()).ok());
}

TEST(PlanFile, SurvivesFlippedBytes) {
  std::string bytes = serializePlan(samplePlan());
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<size_t> position(0, bytes.size() - 1);
  std::uniform_int_distribution<int> mask(1, 255), count(2, 8);
  int refused = 0, accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string flipped = bytes;
    int flips = i % 2 == 0 ? 1 : count(rng);
    for (int f = 0; f < flips; ++f)
      flipped[position(rng)] ^= static_cast<char>(mask(rng));
    StatusOr<Plan> read = readExact(flipped, flipped.size());
    if (!read.ok()) {
      ++refused;
      EXPECT_FALSE(read.status().message().empty());
      continue;
    }
    // A plan read from damaged bytes must still print and write back.
    ++accepted;
    std::ostringstream text;
    printPlanText(*read, text);
    EXPECT_FALSE(serializePlan(*read).empty());
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0); // Flips inside scalars are not the file's to catch.
}

TEST(PlanFile, RefusesRandomBytesWithTheIdentifier) {
  // Random bytes that carry the identifier get past step 1 of the reader; a
  // quarter also carry a small root offset, so the FlatBuffers verifier and,
  // now and then, the field checks get to look at them. None of them is a
  // plan: each must be refused with one line, and the verifier must have been
  // the one to refuse some (else these bytes tested only the identifier).
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), length(8, 1024);
  int byVerifier = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string garbage(length(rng), '\0');
    for (char &c : garbage)
      c = static_cast<char>(byte(rng));
    garbage.replace(4, 4, "TIPL");
    if (i % 4 == 0)
      std::memcpy(garbage.data(), "\x10\0\0\0", 4);
    StatusOr<Plan> read = readExact(garbage, garbage.size());
    ASSERT_FALSE(read.ok()) << "case " << i << " read as a plan";
    const std::string &message = read.status().message();
    EXPECT_FALSE(message.empty()) << "case " << i;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "case " << i << ": " << message;
    byVerifier += message == "plan file is corrupt: the FlatBuffers verifier rejected it";
  }
  EXPECT_GT(byVerifier, 100);
}

TEST(PlanFile, RefusesAnotherFormatVersion) {
  Plan plan = samplePlan();
  plan.formatVersion = kFormatVersion + 1;
  EXPECT_EQ(readError(serializePlan(plan)), "plan format version 6, this build reads 5: compile "
                                            "the plan again with this build's tic");
  plan.formatVersion = 0;
  EXPECT_EQ(readError(serializePlan(plan)), "plan format version 0, this build reads 5: compile "
                                            "the plan again with this build's tic");
}

TEST(PlanFile, NamesTheVersionOfAPlanWhoseTasksAreLaidOutDifferently) {
  // Version 1's task records were 96 bytes. A plan of that version has fewer
  // task bytes than this build's 104-byte records need, which the FlatBuffers
  // verifier would call corrupt: the version is read first, from the root
  // table alone. Simulated: a version-1 plan whose task vector claims as many
  // records as its bytes hold at 96 each.
  Plan plan = samplePlan();
  plan.formatVersion = 1;
  std::string bytes = serializePlan(plan);
  const auto *root = flatbuffers::GetRoot<flatbuffers::Table>(bytes.data());
  // Plan.tasks is field 10 of schema/plan.fbs: its vtable entry is at 4 + 2 * 10.
  const uint8_t *tasks = root->GetPointer<const uint8_t *>(24);
  ASSERT_NE(tasks, nullptr);
  uint32_t count = plan.tasks.size() * sizeof(TaskRecord) / 96;
  std::memcpy(bytes.data() + (tasks - reinterpret_cast<const uint8_t *>(bytes.data())), &count, 4);
  EXPECT_EQ(readError(bytes), "plan format version 1, this build reads 5: compile the plan again "
                              "with this build's tic");
}

//===----------------------------------------------------------------------===//
// Missing fields, by editing a good file's vtables. A FlatBuffers table finds
// field `id` through the 16-bit entry at vtable + 4 + 2 * id; zero means
// absent. Field ids are the order of the fields in schema/plan.fbs.
//===----------------------------------------------------------------------===//

template <typename T> T load(const std::string &b, size_t at) {
  T value;
  std::memcpy(&value, b.data() + at, sizeof value);
  return value;
}

size_t root(const std::string &b) { return load<uint32_t>(b, 0); }

/// Where field `id` of the table at `table` is stored (0: absent).
size_t fieldEntry(const std::string &b, size_t table, int id) {
  return table - load<int32_t>(b, table) + 4 + 2 * id;
}

/// The table, vector or string field `id` of the table at `table` points to.
size_t follow(const std::string &b, size_t table, int id) {
  size_t field = table + load<uint16_t>(b, fieldEntry(b, table, id));
  return field + load<uint32_t>(b, field);
}

/// Element `i` of the vector of tables at `vector`.
size_t element(const std::string &b, size_t vector, size_t i) {
  size_t slot = vector + 4 + 4 * i;
  return slot + load<uint32_t>(b, slot);
}

std::string withoutField(std::string b, size_t table, int id) {
  std::memset(b.data() + fieldEntry(b, table, id), 0, 2);
  return b;
}

std::string withByte(std::string b, size_t table, int id, uint8_t value) {
  b[table + load<uint16_t>(b, fieldEntry(b, table, id))] = static_cast<char>(value);
  return b;
}

enum PlanField {
  Version,
  Model,
  Target,
  Attention,
  Weights,
  Buffers = 7,
  Waves = 9,
  Tasks,
  Params,
  Stream
};

TEST(PlanFile, NamesEachMissingField) {
  const std::string b = serializePlan(samplePlan());
  const size_t plan = root(b);
  EXPECT_EQ(readError(withoutField(b, plan, Version)),
            "plan format version 0, this build reads 5: compile the plan again with this "
            "build's tic");
  EXPECT_EQ(readError(withoutField(b, plan, Model)), "plan has no model info");
  EXPECT_EQ(readError(withoutField(b, plan, Target)), "plan has no target info");
  EXPECT_EQ(readError(withoutField(b, plan, Attention)), "plan has no attention config");
  EXPECT_EQ(readError(withoutField(b, plan, Weights)), "plan has no weights list");
  EXPECT_EQ(readError(withoutField(b, plan, Buffers)), "plan has no buffers list");
  EXPECT_EQ(readError(withoutField(b, plan, Waves)), "plan has no waves list");
  EXPECT_EQ(readError(withoutField(b, plan, Tasks)), "plan has no tasks list");
  EXPECT_EQ(readError(withoutField(b, plan, Params)), "plan has no params list");

  size_t model = follow(b, plan, Model);
  EXPECT_EQ(readError(withoutField(b, model, 0)), "model info has no name");
  EXPECT_EQ(readError(withoutField(b, model, 10)), "model info has no eos list");
  size_t target = follow(b, plan, Target);
  EXPECT_EQ(readError(withoutField(b, target, 0)), "target info has no name");
  EXPECT_EQ(readError(withoutField(b, target, 1)), "target info has no arch");

  size_t tensor = element(b, follow(b, plan, Weights), 1);
  EXPECT_EQ(readError(withoutField(b, tensor, 0)), "packed tensor 1 has no name");
  EXPECT_EQ(readError(withoutField(b, tensor, 3)), "packed tensor 1 has no segments list");

  // Tables of one layout share a vtable, so these drop the field from all of
  // them; the first one is named (tensor 1's segment shares tensor 0's).
  size_t segment = element(b, follow(b, tensor, 3), 0);
  EXPECT_EQ(readError(withoutField(b, segment, 0)),
            "segment 0 of packed tensor 0 has no checkpoint");
  EXPECT_EQ(readError(withoutField(b, segment, 1)),
            "segment 0 of packed tensor 0 has no source shape");
  size_t buffer = element(b, follow(b, plan, Buffers), 0);
  EXPECT_EQ(readError(withoutField(b, buffer, 0)), "buffer 0 has no name");
  size_t wave = element(b, follow(b, plan, Waves), 0);
  EXPECT_EQ(readError(withoutField(b, wave, 0)), "wave 0 has no name");
}

TEST(PlanFile, AWorkerFingerprintIsOptional) {
  const std::string b = serializePlan(samplePlan());
  StatusOr<Plan> read = readExact(withoutField(b, follow(b, root(b), Target), 6), b.size());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->target.workerFingerprint, "");
}

TEST(PlanFile, RefusesUnknownEnumValues) {
  const std::string b = serializePlan(samplePlan());
  // Only values other than the default are stored: logits (buffer 2) and the
  // barrier "none" (wave 2).
  size_t logits = element(b, follow(b, root(b), Buffers), 2);
  EXPECT_EQ(readError(withByte(b, logits, 1, 42)), "buffer 2 has unknown kind 42");
  size_t end = element(b, follow(b, root(b), Waves), 2);
  EXPECT_EQ(readError(withByte(b, end, 1, 7)), "wave 2 has unknown barrier kind 7");
}

TEST(PlanFile, AStreamConfigRoundTripsAndAPlainPlanHasNone) {
  Plan p = samplePlan();
  p.stream = StreamConfig{ExecutionModel::Stream, 64, 4, 2, 1};
  const std::string b = serializePlan(p);
  StatusOr<Plan> read = readExact(b, b.size());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->stream.model, ExecutionModel::Stream);
  EXPECT_EQ(read->stream.stageBytes, 64u);
  EXPECT_EQ(read->stream.stages, 4u);
  EXPECT_EQ(read->stream.inFlightStages, 2u);
  EXPECT_EQ(read->stream.handOffInFlightStages, 1u);
  EXPECT_EQ(read->stream.rowPartBytes, 0u); // Absent: whole rows.
  p.stream.rowPartBytes = 4096;
  const std::string parts = serializePlan(p);
  StatusOr<Plan> readParts = readExact(parts, parts.size());
  ASSERT_TRUE(readParts.ok()) << readParts.status().message();
  EXPECT_EQ(readParts->stream.rowPartBytes, 4096u);
  p.stream.rowPartBytes = 0;
  EXPECT_FALSE(read->stream.copiesEvictFirst); // Absent: copies without a hint.
  p.stream.copiesEvictFirst = true;
  const std::string hinted = serializePlan(p);
  StatusOr<Plan> readHinted = readExact(hinted, hinted.size());
  ASSERT_TRUE(readHinted.ok()) << readHinted.status().message();
  EXPECT_TRUE(readHinted->stream.copiesEvictFirst);
  EXPECT_FALSE(readHinted->stream.kvCopiesUnhinted); // Absent: the weights' hint.
  p.stream.kvCopiesUnhinted = true;
  const std::string kvUnhinted = serializePlan(p);
  StatusOr<Plan> readKv = readExact(kvUnhinted, kvUnhinted.size());
  ASSERT_TRUE(readKv.ok()) << readKv.status().message();
  EXPECT_TRUE(readKv->stream.copiesEvictFirst);
  EXPECT_TRUE(readKv->stream.kvCopiesUnhinted);
  p.stream.kvCopiesUnhinted = false;
  p.stream.copiesEvictFirst = false;
  // None during a barrier is stored too (a plan without the field, written
  // before it existed, reads as in flight: it never paused).
  p.stream.handOffInFlightStages = 0;
  const std::string none = serializePlan(p);
  StatusOr<Plan> readNone = readExact(none, none.size());
  ASSERT_TRUE(readNone.ok()) << readNone.status().message();
  EXPECT_EQ(readNone->stream.handOffInFlightStages, 0u);
  // The field's default value is not stored, so writing it makes the table of
  // such a plan.
  p.stream.handOffInFlightStages = ~0u;
  const std::string old = serializePlan(p);
  StatusOr<Plan> readOld = readExact(old, old.size());
  ASSERT_TRUE(readOld.ok()) << readOld.status().message();
  EXPECT_EQ(readOld->stream.handOffInFlightStages, 2u);
  // The model is the table's field 0.
  EXPECT_EQ(readError(withByte(b, follow(b, root(b), Stream), 0, 9)),
            "plan has unknown execution model 9");
  // A plain plan writes no stream table: it reads as every plan before it.
  const std::string plain = serializePlan(samplePlan());
  const size_t table = root(plain), vtable = table - load<int32_t>(plain, table);
  const bool present = 4 + 2 * Stream < load<uint16_t>(plain, vtable) &&
                       load<uint16_t>(plain, fieldEntry(plain, table, Stream)) != 0;
  EXPECT_FALSE(present);
  StatusOr<Plan> plainRead = readExact(plain, plain.size());
  ASSERT_TRUE(plainRead.ok()) << plainRead.status().message();
  EXPECT_EQ(plainRead->stream.model, ExecutionModel::Plain);
}

//===----------------------------------------------------------------------===//
// Hand-built FlatBuffers, for what serializePlan never writes.
//===----------------------------------------------------------------------===//

using flatbuffers::FlatBufferBuilder;
using flatbuffers::uoffset_t;

/// A table whose fields `id` point to `offsets`.
uoffset_t table(FlatBufferBuilder &b, std::initializer_list<std::pair<int, uoffset_t>> fields) {
  uoffset_t start = b.StartTable();
  for (auto [id, offset] : fields)
    b.AddOffset(flatbuffers::voffset_t(4 + 2 * id), flatbuffers::Offset<void>(offset));
  return b.EndTable(start);
}

/// A vector of ulong whose elements sit at 4 mod 8, which the builder never
/// writes but the verifier lets through (it checks the length's alignment).
uoffset_t misalignedUlongs(FlatBufferBuilder &b, const std::vector<uint64_t> &values) {
  b.Align(8);
  const uint32_t padding = 0;
  b.PushBytes(reinterpret_cast<const uint8_t *>(&padding), sizeof padding);
  for (auto it = values.rbegin(); it != values.rend(); ++it)
    b.PushBytes(reinterpret_cast<const uint8_t *>(&*it), sizeof *it);
  return b.PushElement<uint32_t>(static_cast<uint32_t>(values.size()));
}

/// A plan whose buffers list holds `copies` references to one buffer table
/// named by `nameBytes` bytes, and whose one packed tensor has a segment with
/// a misaligned source shape [256, 64].
std::string handBuiltPlan(size_t copies, size_t nameBytes) {
  FlatBufferBuilder b;
  uoffset_t shape = misalignedUlongs(b, {256, 64});
  uoffset_t empty = b.CreateString("").o;
  uoffset_t noTables = b.CreateVector(std::vector<flatbuffers::Offset<void>>{}).o;
  uoffset_t noInts = b.CreateVector(std::vector<int32_t>{}).o;
  uoffset_t noFloats = b.CreateVector(std::vector<float>{}).o;
  uoffset_t noTasks = b.CreateVector(std::vector<uint64_t>{}).o;
  uoffset_t segment = table(b, {{0, empty}, {1, shape}});
  uoffset_t segments = b.CreateVector(std::vector<flatbuffers::Offset<void>>{segment}).o;
  uoffset_t tensor = table(b, {{0, empty}, {3, segments}});
  uoffset_t weights = b.CreateVector(std::vector<flatbuffers::Offset<void>>{tensor}).o;
  uoffset_t buffer = table(b, {{0, b.CreateString(std::string(nameBytes, 'x')).o}});
  uoffset_t buffers = b.CreateVector(std::vector<flatbuffers::Offset<void>>(copies, buffer)).o;
  uoffset_t model = table(b, {{0, empty}, {10, noInts}});
  uoffset_t target = table(b, {{0, empty}, {1, empty}});
  uoffset_t attention = table(b, {});
  uoffset_t start = b.StartTable();
  b.AddElement<uint32_t>(4 + 2 * Version, kFormatVersion, 0);
  for (auto [id, offset] : {std::pair{Model, model},
                            {Target, target},
                            {Attention, attention},
                            {Weights, weights},
                            {Buffers, buffers},
                            {Waves, noTables},
                            {Tasks, noTasks},
                            {Params, noFloats}})
    b.AddOffset(flatbuffers::voffset_t(4 + 2 * id), flatbuffers::Offset<void>(offset));
  b.Finish(flatbuffers::Offset<void>(b.EndTable(start)), kFileIdentifier);
  return std::string(reinterpret_cast<const char *>(b.GetBufferPointer()), b.GetSize());
}

TEST(PlanFile, ReadsAHandBuiltPlan) {
  std::string bytes = handBuiltPlan(1, 100);
  size_t segment =
      element(bytes, follow(bytes, element(bytes, follow(bytes, root(bytes), Weights), 0), 3), 0);
  ASSERT_EQ((follow(bytes, segment, 1) + 4) % 8, 4u); // The premise: a misaligned shape.
  StatusOr<Plan> read = readExact(bytes, bytes.size());
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->buffers.size(), 1u);
  EXPECT_EQ(read->buffers[0].name, std::string(100, 'x'));
  ASSERT_EQ(read->weights.size(), 1u);
  ASSERT_EQ(read->weights[0].segments.size(), 1u);
  EXPECT_EQ(read->weights[0].segments[0].sourceShape, (std::vector<uint64_t>{256, 64}));
}

TEST(PlanFile, RefusesFieldsThatShareStorage) {
  // 4096 references to one 1 MiB name: 4 GiB to copy out of a 1 MiB file.
  EXPECT_EQ(readError(handBuiltPlan(4096, 1 << 20)),
            "plan file is corrupt: its fields share storage (there is more to read than the "
            "file holds)");
}

TEST(PlanFile, RefusesAPlanOfOnlyAVersion) {
  FlatBufferBuilder b;
  uoffset_t start = b.StartTable();
  b.AddElement<uint32_t>(4 + 2 * Version, kFormatVersion, 0);
  b.Finish(flatbuffers::Offset<void>(b.EndTable(start)), kFileIdentifier);
  std::string bytes(reinterpret_cast<const char *>(b.GetBufferPointer()), b.GetSize());
  EXPECT_EQ(readError(bytes), "plan has no model info");
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

namespace fs = std::filesystem;

/// A fresh empty directory, removed at the end of the test.
class PlanFileOnDisk : public testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::path(testing::TempDir()) / "ti-plan-file-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override { fs::remove_all(dir); }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir;
};

TEST_F(PlanFileOnDisk, WritesAndReadsBack) {
  std::string path = (dir / "plan.fb").string();
  ASSERT_TRUE(writePlanFile(samplePlan(), path).ok());
  Plan other = samplePlan();
  other.model.name = "other";
  Status overwrite = writePlanFile(other, path);
  ASSERT_TRUE(overwrite.ok()) << overwrite.message();
  EXPECT_EQ(entries(), std::vector<std::string>{"plan.fb"}); // No temporary left behind.
  StatusOr<Plan> read = readPlanFile(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  expectSamePlan(other, *read);
}

TEST_F(PlanFileOnDisk, ReportsAnUnwritablePath) {
  std::string path = (dir / "missing" / "plan.fb").string();
  Status status = writePlanFile(samplePlan(), path);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'" + path + "'"), std::string::npos) << status.message();
  EXPECT_TRUE(entries().empty());
}

TEST_F(PlanFileOnDisk, ReportsAnUnreadablePath) {
  std::string missing = (dir / "missing.fb").string();
  EXPECT_EQ(readPlanFile(missing).status().message(),
            "cannot read '" + missing + "': No such file or directory");
  EXPECT_EQ(readPlanFile(dir.string()).status().message(),
            "cannot read '" + dir.string() + "': Is a directory");
}

TEST_F(PlanFileOnDisk, ReportsAFileThatIsNoPlan) {
  std::string path = (dir / "model.graph").string();
  { std::ofstream(path) << "graph tiny {\n}\n"; }
  EXPECT_EQ(readPlanFile(path).status().message(), "not a plan file: missing the TIPL identifier");
}

} // namespace
