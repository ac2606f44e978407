//===- Target.cpp - What the compiler knows about a GPU -------------------===//
#include "ti/Target/Target.h"
#include "ti/Plan/WeightTiles.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace ti;
using json = nlohmann::json;

const char *ti::ffnFormName(FfnForm form) {
  switch (form) {
  case FfnForm::Partials: return "partials";
  case FfnForm::GateUp: return "gate_up";
  }
  return "?";
}

const char *ti::handOffsName(HandOffs handOffs) {
  switch (handOffs) {
  case HandOffs::Grid: return "grid";
  case HandOffs::Tags: return "tags";
  }
  return "unknown";
}

bool ti::parseHandOffs(const std::string &name, HandOffs &handOffs) {
  for (HandOffs h : {HandOffs::Grid, HandOffs::Tags})
    if (name == handOffsName(h)) {
      handOffs = h;
      return true;
    }
  return false;
}

bool ti::parseFfnForm(const std::string &name, FfnForm &form) {
  for (FfnForm f : {FfnForm::Partials, FfnForm::GateUp})
    if (name == ffnFormName(f)) {
      form = f;
      return true;
    }
  return false;
}

std::string Target::describe() const {
  std::ostringstream os;
  os << name << " (" << (gpu.empty() ? "?" : gpu) << ", " << arch << ", " << workers
     << " workers x " << threadsPerWorker << " threads, " << bandwidthGBs << " GB/s)";
  return os.str();
}

plan::StreamConfig Target::streamConfig() const {
  plan::StreamConfig st;
  if (execution == plan::ExecutionModel::Plain || streamStageBytes == 0)
    return st;
  st.model = execution;
  st.stageBytes = streamStageBytes;
  st.stages = std::min(plan::kMaxStreamStages, streamRingBytes / streamStageBytes);
  st.inFlightStages = std::max(1u, std::min(st.stages, streamInFlightBytes / st.stageBytes));
  st.handOffInFlightStages = std::min(st.inFlightStages, streamHandOffInFlightBytes / st.stageBytes);
  st.rowPartBytes = streamRowPartBytes;
  st.copiesEvictFirst = streamCopiesEvictFirst;
  st.kvCopiesUnhinted = streamCopiesEvictFirst && streamKvCopiesUnhinted;
  return st;
}

Target Target::withExecution(plan::ExecutionModel model) const {
  Target t = *this;
  t.execution = model;
  t.threadsPerWorker = plan::taskThreads(model);
  const bool stream = model == plan::ExecutionModel::Stream;
  t.maxRegisters = stream ? plan::kStreamWorkerRegisters : plan::kPlainWorkerRegisters;
  // A stream worker's SM that streams nothing is bandwidth lost (each SM's rate
  // is capped by its copies in flight), so its waves take the smallest largest
  // task; half of a GPU's SMs saturate HBM with plain loads, so a plain worker
  // takes 1% more for fewer tasks (balance-rows).
  t.balanceTolerance = stream ? 0.0 : 0.01;
  // The stream worker: the MLP as a GateUp wave and the down projection
  // where it fits (fuse-ffn): on the H200 the 1B's step and the 3B's 1-2%
  // faster than partials (docs/PERFORMANCE.md, step 3); one copy in flight
  // for a wave the consumers have not begun (step 6). The Plain worker keeps
  // the post's partials.
  t.ffnForm = stream ? FfnForm::GateUp : FfnForm::Partials;
  t.streamHandOffInFlightBytes = stream ? t.streamStageBytes : 0;
  // fuse-ffn may narrow the ring to 4 stages for a GateUp down projection
  // that fits beside them: on the H200 the 8B's step 7.7% faster at context 1
  // and 7.7% at 4,096 than partials beside 5 stages; the 1B, which fit beside
  // 5, kept them (4 cost it 3%; docs/PERFORMANCE.md, step 21). Since its task
  // records left the worker's shared memory (step 31), the 8B fits beside 5
  // of the default 6 (on an H100 1.5% faster at context 1 and 2.2% at 4,096
  // than beside 4).
  t.streamMinRingBytes = stream ? std::min(t.streamRingBytes, 4 * t.streamStageBytes) : 0;
  // Tagged hand-offs: the 1B's step 3.2% faster than grid barriers at
  // context 1 (docs/PERFORMANCE.md, step 8). The Plain worker keeps the
  // post's grid barriers.
  t.handOffs = stream ? HandOffs::Tags : HandOffs::Grid;
  // Attention's cached K/V rows through the weight stream above 640
  // positions: on the H200 the 1B 5.5% faster at 2,048 and 4,096 than with
  // plain loads, the 8B 4.8% and 7.2% (docs/PERFORMANCE.md, steps 13 and
  // 14). Below, a chunk task's two stage waits cost more than its own loads,
  // which the task asks of L2 at its start (ops/Attention.cuh): on an H100,
  // against streaming above 1,024, the 1B 0.4-0.8% faster at 640 cached
  // positions, 1.3-1.8% at 768 and 2.6-2.8% at 896, the 8B 1.0-1.3% at 768
  // and 0.9-1.1% at 896; streaming from 512 instead cost the 8B 0.4-0.8% at
  // 512 (docs/PERFORMANCE.md, step 35).
  t.streamKv = stream;
  t.streamKvContext = stream ? 640 : 0;
  // Short mode's rows streamed to the tensor cores above 64 positions: below,
  // those passes' fixed cost (one block of tiles, the warps' states merged)
  // outweighs one warp a query head (AttentionShort.cuh). On an H100, with the rows read from the
  // caches, the 1B's step was 2.5% slower at context 33 and 1.3% at 49, 0.4%
  // faster at 65, the 8B's the same about 60; streamed, the 1B's is 1.9%
  // faster at 65, 4.5% at 97 and 5.7% at 113, the 8B's 3-4% at 97 and 4-5% at
  // 113 (docs/PERFORMANCE.md, step 33).
  t.shortMmaContext = stream ? 64 : 0;
  // With short mode on the tensor cores, the split above 384 positions
  // rather than 128: on an H100 the 1B's step 2.1-2.3% faster at 128-256
  // cached positions and 0.9% at 320, the 8B's 2.7% at 128, 2.1% at 256 and
  // 1.6% at 320, the same at 1 and from 384 on (long mode there either way;
  // docs/PERFORMANCE.md, step 34).
  t.shortMmaSplitContext = stream ? 384 : 0;
  // The GEMV weights in octet tiles, multiplied on the tensor cores: on the
  // H200 the 1B 1.5-2% faster at contexts 1 and 128 and 4.5% at 4,096 than
  // its parent, the 8B the same (docs/PERFORMANCE.md, step 15).
  t.streamWeightTiles = stream;
  // The ring's copies read weights and K/V rows that no one reads again in
  // the step: marked evict-first, L2 keeps the hand-offs' values and the
  // caches' rows instead. On an H100 the 1B's step 2.0% faster at context 1,
  // 2.8% at 128, 1.2% at 512 and 2.2% at 4,096, stream-only mode the same
  // (docs/PERFORMANCE.md, step 24); not yet measured on the H200.
  t.streamCopiesEvictFirst = stream;
  return t;
}

static Target rtx3050() {
  // The TileInfer post's GPU: 20 SMs, one 1,024-thread block each at 64
  // registers per thread, 212.9 GB/s measured streaming read.
  Target t;
  t.name = "rtx3050";
  t.gpu = "NVIDIA GeForce RTX 3050";
  t.arch = "sm_86";
  t.workers = 20;
  t.threadsPerWorker = 1024;
  t.maxRegisters = 64;
  t.bandwidthGBs = 212.9;
  t.attentionSplitContext = 384;
  // sm_86's 99 KiB of opt-in shared memory per block, less the worker's 1 KiB
  // of static shared memory.
  t.sharedBytesPerWorker = 99 * 1024 - 1024;
  return t;
}

static Target h200() {
  // The lent H200: 132 SMs; 4,471-4,605 GB/s streaming read measured over
  // three machine starts (docs/PERFORMANCE.md; the low end is used for planning).
  Target t;
  t.name = "h200";
  t.gpu = "NVIDIA H200";
  t.arch = "sm_90";
  t.workers = 132;
  t.threadsPerWorker = 1024;
  t.maxRegisters = 64;
  t.bandwidthGBs = 4471;
  // Below the split a layer's attention is one task a kv head (8 of the 1B's
  // 132 workers busy, the rest at the grid barrier after it). Splitting
  // above 128 positions rather than 384 made the 1B 3.7% faster with 128
  // positions cached and 9-11% with 256-320, the same with 1 and 4,096; a
  // split at 64 measured as 128 (docs/PERFORMANCE.md, step 11).
  t.attentionSplitContext = 128;
  // sm_90's 227 KiB of opt-in shared memory per block, less the worker's 1 KiB
  // of static shared memory.
  t.sharedBytesPerWorker = 227 * 1024 - 1024;
  // The stream worker: faster than the plain one on the 1B, 3B and 8B at
  // contexts 1 and 4,096 (docs/PERFORMANCE.md); tic --execution plain keeps
  // the post's design reachable.
  return t.withExecution(plan::ExecutionModel::Stream);
}

std::vector<std::string> ti::builtinTargetNames() { return {"h200", "rtx3050"}; }

StatusOr<Target> ti::builtinTarget(const std::string &name) {
  if (name == "rtx3050")
    return rtx3050();
  if (name == "h200")
    return h200();
  return Status::error("unknown target '" + name + "' (built-in: h200, rtx3050; or use --target-file)");
}

namespace {
/// Checks a target's values; every field a pass divides by must be sane.
Status validate(const Target &t, const std::string &source) {
  auto bad = [&](const std::string &what) { return Status::error(source + ": " + what); };
  if (t.name.empty())
    return bad("\"name\" is empty");
  if (t.workers == 0 || t.workers > 65535)
    return bad("\"workers\" must be between 1 and 65535");
  if (t.threadsPerWorker == 0 || t.threadsPerWorker % 32 != 0 || t.threadsPerWorker > 1024)
    return bad("\"threads_per_worker\" must be a multiple of 32 up to 1024");
  if (t.maxRegisters == 0 || t.maxRegisters > 255)
    return bad("\"max_registers\" must be between 1 and 255");
  if (!(t.bandwidthGBs > 0) || !std::isfinite(t.bandwidthGBs))
    return bad("\"bandwidth_gbs\" must be positive");
  if (t.attentionSplitContext == 0)
    return bad("\"attention_split_context\" must be positive");
  if (!(t.balanceTolerance >= 0 && t.balanceTolerance < 1))
    return bad("\"balance_tolerance\" must be in [0, 1)");
  if (t.maxQueryHeadsPerKvHead == 0)
    return bad("\"max_query_heads_per_kv_head\" must be positive");
  if (t.headDims.empty())
    return bad("\"head_dims\" must name at least one head_dim");
  for (uint32_t d : t.headDims)
    if (d == 0 || d % 2)
      return bad("\"head_dims\" holds " + std::to_string(d) +
                 "; a head_dim is positive and even");
  if (t.vectorElements == 0)
    return bad("\"vector_elements\" must be positive");
  if (t.execution == plan::ExecutionModel::Stream) {
    if (t.arch != plan::kStreamArch)
      return bad(std::string("the stream execution model needs ") + plan::kStreamArch +
                 " (the bulk-copy engine); \"arch\" is \"" + t.arch + "\"");
    if (t.threadsPerWorker != plan::kStreamConsumerThreads)
      return bad("\"threads_per_worker\" of the stream worker is " +
                 std::to_string(plan::kStreamConsumerThreads));
  }
  if (t.streamStageBytes == 0 || t.streamStageBytes % 16)
    return bad("\"stream_stage_bytes\" must be a positive multiple of 16");
  if (t.streamRingBytes < 2 * uint64_t(t.streamStageBytes))
    return bad("\"stream_ring_bytes\" must hold at least two stages");
  if (t.streamMinRingBytes &&
      (t.streamMinRingBytes < 2 * uint64_t(t.streamStageBytes) || t.streamMinRingBytes > t.streamRingBytes))
    return bad("\"stream_min_ring_bytes\" must be 0 or from two stages to \"stream_ring_bytes\"");
  if (t.streamInFlightBytes < t.streamStageBytes || t.streamInFlightBytes > t.streamRingBytes)
    return bad("\"stream_in_flight_bytes\" must be between a stage and the ring");
  if (t.streamRowPartBytes % 16)
    return bad("\"stream_row_part_bytes\" must be a multiple of 16");
  if (t.streamWeightTiles && t.streamStageBytes % plan::kTileBytes)
    return bad("\"stream_stage_bytes\" must be a multiple of " + std::to_string(plan::kTileBytes) +
               " (a weight tile) with \"stream_weight_tiles\"");
  if (t.streamHandOffInFlightBytes > t.streamInFlightBytes)
    return bad("\"stream_hand_off_in_flight_bytes\" must be at most \"stream_in_flight_bytes\"");
  return Status();
}
} // namespace

StatusOr<Target> ti::parseTargetJson(const std::string &text, const std::string &source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Status::error(source + ": not a JSON object");
  Target t;
  t.threadsPerWorker = 1024;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string &key = it.key();
    const json &v = it.value();
    auto wantString = [&](std::string &field) -> Status {
      if (!v.is_string())
        return Status::error(source + ": \"" + key + "\" must be a string");
      field = v.get<std::string>();
      return Status();
    };
    auto wantUInt = [&](uint32_t &field) -> Status {
      if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
        return Status::error(source + ": \"" + key + "\" must be a non-negative integer");
      field = v.get<uint32_t>();
      return Status();
    };
    auto wantUIntList = [&](std::vector<uint32_t> &field) -> Status {
      if (!v.is_array())
        return Status::error(source + ": \"" + key + "\" must be a list of integers");
      field.clear();
      for (const json &item : v) {
        if (!item.is_number_unsigned() || item.get<uint64_t>() > UINT32_MAX)
          return Status::error(source + ": \"" + key + "\" must be a list of non-negative integers");
        field.push_back(item.get<uint32_t>());
      }
      return Status();
    };
    auto wantBool = [&](bool &field) -> Status {
      if (!v.is_boolean())
        return Status::error(source + ": \"" + key + "\" must be true or false");
      field = v.get<bool>();
      return Status();
    };
    auto wantNumber = [&](double &field) -> Status {
      if (!v.is_number())
        return Status::error(source + ": \"" + key + "\" must be a number");
      field = v.get<double>();
      return Status();
    };
    Status s;
    if (key == "name") s = wantString(t.name);
    else if (key == "gpu") s = wantString(t.gpu);
    else if (key == "arch") s = wantString(t.arch);
    else if (key == "workers") s = wantUInt(t.workers);
    else if (key == "threads_per_worker") s = wantUInt(t.threadsPerWorker);
    else if (key == "max_registers") s = wantUInt(t.maxRegisters);
    else if (key == "bandwidth_gbs") s = wantNumber(t.bandwidthGBs);
    else if (key == "attention_split_context") s = wantUInt(t.attentionSplitContext);
    else if (key == "balance_tolerance") s = wantNumber(t.balanceTolerance);
    else if (key == "worker_fingerprint") s = wantString(t.workerFingerprint);
    else if (key == "max_query_heads_per_kv_head") s = wantUInt(t.maxQueryHeadsPerKvHead);
    else if (key == "head_dims") s = wantUIntList(t.headDims);
    else if (key == "shared_bytes_per_worker") s = wantUInt(t.sharedBytesPerWorker);
    else if (key == "vector_elements") s = wantUInt(t.vectorElements);
    else if (key == "execution") {
      std::string name;
      s = wantString(name);
      if (s.ok() && name == "stream")
        t.execution = plan::ExecutionModel::Stream;
      else if (s.ok() && name != "plain")
        s = Status::error(source + ": \"execution\" is \"plain\" or \"stream\", not \"" + name +
                          "\"");
    }
    else if (key == "stream_stage_bytes") s = wantUInt(t.streamStageBytes);
    else if (key == "stream_ring_bytes") s = wantUInt(t.streamRingBytes);
    else if (key == "stream_min_ring_bytes") s = wantUInt(t.streamMinRingBytes);
    else if (key == "stream_in_flight_bytes") s = wantUInt(t.streamInFlightBytes);
    else if (key == "stream_hand_off_in_flight_bytes") s = wantUInt(t.streamHandOffInFlightBytes);
    else if (key == "stream_row_part_bytes") s = wantUInt(t.streamRowPartBytes);
    else if (key == "stream_copies_evict_first") s = wantBool(t.streamCopiesEvictFirst);
    else if (key == "stream_kv_copies_unhinted") s = wantBool(t.streamKvCopiesUnhinted);
    else if (key == "ffn_form") {
      std::string name;
      s = wantString(name);
      if (s.ok() && !parseFfnForm(name, t.ffnForm))
        s = Status::error(source + ": \"ffn_form\" is \"partials\" or \"gate_up\", not \"" +
                          name + "\"");
    }
    else if (key == "hand_offs") {
      std::string name;
      s = wantString(name);
      if (s.ok() && !parseHandOffs(name, t.handOffs))
        s = Status::error(source + ": \"hand_offs\" is \"grid\" or \"tags\", not \"" + name +
                          "\"");
    }
    else if (key == "tag_chunked_attention") {
      // Retired: the hand-offs decide. With tags a chunked attention's
      // workspace is tagged, with grid barriers it is not (tag-hand-offs), so
      // either value of a file written before asks for nothing: read, ignored.
      bool ignored = false;
      s = wantBool(ignored);
    }
    else if (key == "stream_kv") s = wantBool(t.streamKv);
    else if (key == "stream_kv_context") s = wantUInt(t.streamKvContext);
    else if (key == "short_mma_context") s = wantUInt(t.shortMmaContext);
    else if (key == "short_mma_split_context") s = wantUInt(t.shortMmaSplitContext);
    else if (key == "stream_weight_tiles") s = wantBool(t.streamWeightTiles);
    else if (key == "spread_weight_waves") s = wantBool(t.spreadWeightWaves);
    else s = Status::error(source + ": unknown key \"" + key + "\"");
    if (!s.ok())
      return s;
  }
  if (Status s = validate(t, source); !s.ok())
    return s;
  return t;
}

StatusOr<Target> ti::readTargetFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parseTargetJson(text.str(), path);
}

std::string ti::targetToJson(const Target &t) {
  json j = {{"name", t.name},
            {"gpu", t.gpu},
            {"arch", t.arch},
            {"workers", t.workers},
            {"threads_per_worker", t.threadsPerWorker},
            {"max_registers", t.maxRegisters},
            {"bandwidth_gbs", t.bandwidthGBs},
            {"attention_split_context", t.attentionSplitContext},
            {"balance_tolerance", t.balanceTolerance},
            {"worker_fingerprint", t.workerFingerprint},
            {"max_query_heads_per_kv_head", t.maxQueryHeadsPerKvHead},
            {"head_dims", t.headDims},
            {"shared_bytes_per_worker", t.sharedBytesPerWorker},
            {"vector_elements", t.vectorElements},
            {"execution", plan::executionModelName(t.execution)},
            {"stream_stage_bytes", t.streamStageBytes},
            {"stream_ring_bytes", t.streamRingBytes},
            {"stream_min_ring_bytes", t.streamMinRingBytes},
            {"stream_in_flight_bytes", t.streamInFlightBytes},
            {"stream_hand_off_in_flight_bytes", t.streamHandOffInFlightBytes},
            {"stream_row_part_bytes", t.streamRowPartBytes},
            {"stream_copies_evict_first", t.streamCopiesEvictFirst},
            {"stream_kv_copies_unhinted", t.streamKvCopiesUnhinted},
            {"ffn_form", ffnFormName(t.ffnForm)},
            {"hand_offs", handOffsName(t.handOffs)},
            {"stream_kv", t.streamKv},
            {"stream_kv_context", t.streamKvContext},
            {"short_mma_context", t.shortMmaContext},
            {"short_mma_split_context", t.shortMmaSplitContext},
            {"stream_weight_tiles", t.streamWeightTiles},
            {"spread_weight_waves", t.spreadWeightWaves}};
  return j.dump(2) + "\n";
}
