//===- PackerTest.cpp -----------------------------------------------------===//
//
// The packer, end to end on plans from the real compiler (tic on
// models/tiny.graph, which is tied, and on an untied variant written here):
// checkpoints of one file and of shards, in bf16, f16 and f32, checked element
// by element against the plan's segments (the transposed FFN blocks
// explicitly); random weights byte-identical to a bf16 checkpoint of the same
// values; every refusal; and the output's atomicity. Also the conversions of
// Bf16.h on chosen bit patterns and the synthetic weights' function.
//
//===----------------------------------------------------------------------===//
#include "ti/Weights/Packer.h"

#include "ti/Support/Fnv1a.h"

#include "ti/Plan/PlanFile.h"
#include "ti/Support/Bf16.h"
#include "ti/Weights/RandomWeights.h"
#include "ti/Weights/SafeTensors.h"
#include "ti/Weights/WeightsFile.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sys/resource.h>
#include <sys/wait.h>

using namespace ti;
using namespace ti::plan;
namespace fs = std::filesystem;

namespace {

// --- Helpers ----------------------------------------------------------------//

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

int run(const std::string &command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string makeTempDir(const char *what) {
  std::string t = (fs::temp_directory_path() / (std::string(what) + "-XXXXXX")).string();
  return mkdtemp(t.data()) ? t : "";
}

/// Every checkpoint tensor the plan reads, with its shape.
std::map<std::string, std::vector<uint64_t>> neededTensors(const Plan &plan) {
  std::map<std::string, std::vector<uint64_t>> needed;
  for (const PackedTensor &t : plan.weights)
    for (const WeightSegment &s : t.segments)
      needed[s.checkpoint] = s.sourceShape;
  return needed;
}

uint64_t elementsOf(const std::vector<uint64_t> &shape) {
  uint64_t n = 1;
  for (uint64_t d : shape)
    n *= d;
  return n;
}

/// A test checkpoint's values, chosen so that conversion matters: f32 values
/// with full mantissas, f16 values with random mantissas over a wide range.
float f32Value(const std::string &name, uint64_t i, unsigned rank) {
  return randomWeight(99, name, i, rank);
}
uint16_t f16Bits(const std::string &name, uint64_t i) {
  uint64_t z = splitmix64(fnv1a64(name) + i);
  uint16_t exponent = 8 + (z >> 1) % 14, mantissa = (z >> 8) & 0x3ff;
  return static_cast<uint16_t>(((z & 1) << 15) | (exponent << 10) | mantissa);
}

/// The bf16 the packer must make of element `i` of a test tensor in `dtype`.
uint16_t expectedBf16(const std::string &dtype, const std::string &name, uint64_t i,
                      unsigned rank) {
  if (dtype == "F16")
    return floatToBf16(halfToFloat(f16Bits(name, i)));
  return floatToBf16(f32Value(name, i, rank));
}

std::string tensorBytes(const std::string &dtype, const std::string &name,
                        const std::vector<uint64_t> &shape) {
  uint64_t n = elementsOf(shape);
  unsigned rank = static_cast<unsigned>(shape.size());
  std::string bytes;
  for (uint64_t i = 0; i < n; ++i) {
    if (dtype == "F32") {
      float f = f32Value(name, i, rank);
      bytes.append(reinterpret_cast<const char *>(&f), 4);
    } else {
      uint16_t b = dtype == "F16" ? f16Bits(name, i) : floatToBf16(f32Value(name, i, rank));
      bytes.append(reinterpret_cast<const char *>(&b), 2);
    }
  }
  return bytes;
}

using DTypeOf = std::function<std::string(const std::string &)>;

std::vector<SafeTensorData> checkpointOf(const Plan &plan, const DTypeOf &dtypeOf) {
  std::vector<SafeTensorData> tensors;
  for (const auto &[name, shape] : neededTensors(plan)) {
    std::string dtype = dtypeOf(name);
    tensors.push_back({{name, dtype, shape}, tensorBytes(dtype, name, shape)});
  }
  return tensors;
}

/// Writes `tensors` into `dir`: model.safetensors, or `shards` shards and an index.
void writeCheckpoint(const std::string &dir, const std::vector<SafeTensorData> &tensors,
                     int shards = 1) {
  fs::create_directories(dir);
  if (shards == 1) {
    ASSERT_TRUE(writeSafeTensors(dir + "/model.safetensors", tensors).ok());
    return;
  }
  std::map<std::string, std::string> map;
  uint64_t total = 0;
  for (int s = 0; s < shards; ++s) {
    std::string file = "model-0000" + std::to_string(s + 1) + "-of-0000" +
                       std::to_string(shards) + ".safetensors";
    std::vector<SafeTensorData> part;
    for (size_t i = s; i < tensors.size(); i += shards) {
      part.push_back(tensors[i]);
      map[tensors[i].header.name] = file;
      total += tensors[i].bytes.size();
    }
    ASSERT_TRUE(writeSafeTensors(dir + "/" + file, part).ok());
  }
  ASSERT_TRUE(writeSafeTensorsIndex(dir + "/model.safetensors.index.json", map, total).ok());
}

using Expected = std::function<uint16_t(const std::string &name, uint64_t index, unsigned rank)>;

/// Checks every element of every segment of `weights` against `expected`
/// (by checkpoint name and flat checkpoint index) and the padding for zeros.
void expectPacked(const Plan &plan, const std::string &weights, const Expected &expected) {
  auto w = WeightsFile::open(weights);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE((*w)->checkAgainst(plan).ok()) << (*w)->checkAgainst(plan).message();
  const uint8_t *data = (*w)->data();
  std::vector<bool> covered(plan.weightsBytes);
  int wrong = 0;
  for (const PackedTensor &t : plan.weights) {
    uint64_t at = t.offset;
    for (const WeightSegment &s : t.segments) {
      uint64_t cols = s.sourceShape.back(), rows = s.rowEnd - s.rowBegin;
      uint64_t width = s.colEnd - s.colBegin;
      for (uint64_t e = 0; e < s.elements(); ++e, at += 2) {
        // Row-major: e = j * width + u; transposed: e = u * rows + j.
        uint64_t j = s.transposed ? e % rows : e / width, u = s.transposed ? e / rows : e % width;
        uint64_t index = (s.rowBegin + j) * cols + s.colBegin + u;
        uint16_t got;
        std::memcpy(&got, data + at, 2);
        uint16_t want = expected(s.checkpoint, index, s.sourceShape.size());
        if (got != want && ++wrong <= 5)
          ADD_FAILURE() << t.name << ": '" << s.checkpoint << "' element " << index << " is 0x"
                        << std::hex << got << ", expected 0x" << want;
        covered[at] = covered[at + 1] = true;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
  for (uint64_t i = 0; i < plan.weightsBytes; ++i)
    if (!covered[i]) {
      ASSERT_EQ(data[i], 0) << "padding byte " << i;
    }
}

// --- The fixture: plans from tic --------------------------------------------//

class PackerTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    suiteDir = makeTempDir("ti-packer-plans");
    std::string tic = TI_TOOLS_DIR "/tic";
    std::string graph = readAll(TI_SOURCE_DIR "/models/tiny.graph");
    std::string norm = "weight final_norm: bf16[hidden] = \"model.norm.weight\"";
    std::string logits = "logits = matmul(xf, embed)";
    size_t n = graph.find(norm), l = graph.find(logits);
    if (suiteDir.empty() || n == std::string::npos || l == std::string::npos)
      return;
    std::string untied = graph;
    untied.replace(l, logits.size(), "logits = matmul(xf, lm_head)");
    untied.insert(n + norm.size(),
                  "\n  weight lm_head: bf16[vocab, hidden] = \"lm_head.weight\"");
    std::ofstream(suiteDir + "/untied.graph") << untied;
    for (const char *name : {"tied", "untied"}) {
      std::string source = std::string(name) == "tied" ? TI_SOURCE_DIR "/models/tiny.graph"
                                                       : suiteDir + "/untied.graph";
      std::string fb = suiteDir + "/" + name + ".fb";
      if (run("'" + tic + "' '" + source + "' --target rtx3050 -o '" + fb + "'") != 0)
        return;
      auto plan = readPlanFile(fb);
      if (!plan)
        return;
      (std::string(name) == "tied" ? tied : untiedPlan) = *plan;
    }
    compiled = true;
  }
  static void TearDownTestSuite() {
    if (!suiteDir.empty())
      fs::remove_all(suiteDir);
  }

  void SetUp() override {
    ASSERT_TRUE(compiled) << "tic could not compile the test plans in " << suiteDir;
    dir = makeTempDir("ti-packer");
    ASSERT_FALSE(dir.empty());
    out = dir + "/out/weights.bin";
    fs::create_directories(dir + "/out");
  }
  void TearDown() override { fs::remove_all(dir); }

  Status pack(const Plan &plan, const std::string &checkpoint, PackReport *report = nullptr,
              unsigned threads = 2, uint64_t chunkBytes = 0) {
    PackOptions opts;
    opts.checkpoint = checkpoint;
    opts.threads = threads;
    opts.chunkBytes = chunkBytes;
    return packWeights(plan, opts, out, report);
  }
  Status packRandom(const Plan &plan, uint64_t seed, const std::string &path,
                    unsigned threads = 2, uint64_t chunkBytes = 0) {
    PackOptions opts;
    opts.random = true;
    opts.seed = seed;
    opts.threads = threads;
    opts.chunkBytes = chunkBytes;
    return packWeights(plan, opts, path, nullptr);
  }
  /// Nothing but `keep` (if given) is left in the output directory.
  void expectNoOutput(const std::string &keep = "") {
    for (const auto &entry : fs::directory_iterator(dir + "/out"))
      EXPECT_EQ(entry.path().filename().string(), keep) << "left behind";
  }

  static inline std::string suiteDir;
  static inline Plan tied, untiedPlan;
  static inline bool compiled = false;
  std::string dir, out;
};

Expected fromDType(const DTypeOf &dtypeOf) {
  return [dtypeOf](const std::string &name, uint64_t i, unsigned rank) {
    return expectedBf16(dtypeOf(name), name, i, rank);
  };
}

// --- Packing checkpoints ----------------------------------------------------//

TEST_F(PackerTest, TiedModelFromOneBf16File) {
  auto needed = neededTensors(tied);
  EXPECT_EQ(needed.count("lm_head.weight"), 0u) << "tiny is tied: the logits read the embedding";
  EXPECT_EQ(needed.count("model.embed_tokens.weight"), 1u);
  DTypeOf bf16 = [](const std::string &) { return "BF16"; };
  writeCheckpoint(dir + "/ckpt", checkpointOf(tied, bf16));
  PackReport report;
  Status s = pack(tied, dir + "/ckpt", &report);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(report.tensors, tied.weights.size());
  EXPECT_EQ(report.bytes, fs::file_size(out));
  EXPECT_TRUE(report.notes.empty());
  expectPacked(tied, out, fromDType(bf16));
}

TEST_F(PackerTest, UntiedModelFromF32Shards) {
  EXPECT_EQ(neededTensors(untiedPlan).count("lm_head.weight"), 1u);
  DTypeOf f32 = [](const std::string &) { return "F32"; };
  writeCheckpoint(dir + "/ckpt", checkpointOf(untiedPlan, f32), /*shards=*/3);
  Status s = pack(untiedPlan, dir + "/ckpt");
  ASSERT_TRUE(s.ok()) << s.message();
  expectPacked(untiedPlan, out, fromDType(f32));
}

TEST_F(PackerTest, MixedDTypesFromOneFile) {
  DTypeOf mixed = [](const std::string &name) {
    const char *dtypes[] = {"BF16", "F16", "F32"};
    return dtypes[fnv1a64(name) % 3];
  };
  writeCheckpoint(dir + "/ckpt", checkpointOf(untiedPlan, mixed));
  Status s = pack(untiedPlan, dir + "/ckpt/model.safetensors");
  ASSERT_TRUE(s.ok()) << s.message();
  expectPacked(untiedPlan, out, fromDType(mixed));
}

TEST_F(PackerTest, TransposedFfnSegmentsElementByElement) {
  DTypeOf f32 = [](const std::string &) { return "F32"; };
  writeCheckpoint(dir + "/ckpt", checkpointOf(tied, f32), 2);
  ASSERT_TRUE(pack(tied, dir + "/ckpt").ok());
  std::string bytes = readAll(out);
  uint64_t header = bytes.size() - tied.weightsBytes;
  int checked = 0, offsetColumns = 0;
  for (const PackedTensor &t : tied.weights) {
    uint64_t at = header + t.offset;
    for (const WeightSegment &s : t.segments) {
      if (s.transposed) {
        EXPECT_NE(s.checkpoint.find("down_proj"), std::string::npos);
        offsetColumns += s.colBegin > 0;
        uint64_t cols = s.sourceShape[1], height = s.rowEnd - s.rowBegin;
        // block[u][j] = source[rowBegin + j][colBegin + u]
        for (uint64_t u = 0; u < s.colEnd - s.colBegin; ++u)
          for (uint64_t j = 0; j < height; ++j) {
            uint16_t got;
            std::memcpy(&got, bytes.data() + at + 2 * (u * height + j), 2);
            float source = f32Value(s.checkpoint, (s.rowBegin + j) * cols + s.colBegin + u, 2);
            ASSERT_EQ(got, floatToBf16(source)) << s.checkpoint << " u=" << u << " j=" << j;
            ++checked;
          }
      }
      at += 2 * s.elements();
    }
  }
  EXPECT_EQ(checked, 3 * 64 * 160) << "every layer's down projection, once";
  EXPECT_GT(offsetColumns, 0) << "the FFN is split over tasks";
}

TEST_F(PackerTest, RoundToNearestEvenThroughThePacker) {
  // Bit patterns and the bf16 each must become: ties go to the even neighbour.
  const std::vector<std::pair<uint32_t, uint16_t>> f32Cases = {
      {0x3f800000, 0x3f80}, {0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81},
      {0x3f80ffff, 0x3f81}, {0xbf808000, 0xbf80}, {0xbf818000, 0xbf82}, {0x7f7fffff, 0x7f80},
      {0x7f800000, 0x7f80}, {0xff800000, 0xff80}, {0x80000000, 0x8000}, {0x00000001, 0x0000},
      {0x00008000, 0x0000}, {0x00018000, 0x0002}, {0x7f800001, 0x7fc0}, {0xffc00000, 0xffc0}};
  const std::vector<std::pair<uint16_t, uint16_t>> f16Cases = {
      {0x3c00, 0x3f80}, {0x3c04, 0x3f80}, {0x3c0c, 0x3f82}, {0x3c05, 0x3f81}, {0xc000, 0xc000},
      {0x0001, 0x3380}, {0x8000, 0x8000}, {0x7c00, 0x7f80}, {0xfc00, 0xff80}, {0x7bff, 0x4780}};
  DTypeOf bf16 = [](const std::string &) { return "BF16"; };
  std::vector<SafeTensorData> tensors = checkpointOf(tied, bf16);
  std::string f32Norm = "model.norm.weight", f16Norm = "model.layers.0.input_layernorm.weight";
  for (SafeTensorData &t : tensors) {
    if (t.header.name == f32Norm) {
      t.header.dtype = "F32";
      t.bytes.assign(64 * 4, '\0');
      for (size_t i = 0; i < f32Cases.size(); ++i)
        std::memcpy(&t.bytes[4 * i], &f32Cases[i].first, 4);
    } else if (t.header.name == f16Norm) {
      t.header.dtype = "F16";
      t.bytes.assign(64 * 2, '\0');
      for (size_t i = 0; i < f16Cases.size(); ++i)
        std::memcpy(&t.bytes[2 * i], &f16Cases[i].first, 2);
    }
  }
  writeCheckpoint(dir + "/ckpt", tensors);
  ASSERT_TRUE(pack(tied, dir + "/ckpt").ok());
  expectPacked(tied, out, [&](const std::string &name, uint64_t i, unsigned rank) -> uint16_t {
    if (name == f32Norm)
      return i < f32Cases.size() ? f32Cases[i].second : 0;
    if (name == f16Norm)
      return i < f16Cases.size() ? f16Cases[i].second : 0;
    return expectedBf16("BF16", name, i, rank);
  });
}

// --- Random weights ---------------------------------------------------------//

TEST_F(PackerTest, RandomEqualsACheckpointOfTheSameValues) {
  for (const Plan *plan : {&tied, &untiedPlan}) {
    ASSERT_TRUE(packRandom(*plan, 7, dir + "/random.bin").ok());
    std::vector<SafeTensorData> tensors;
    for (const auto &[name, shape] : neededTensors(*plan)) {
      std::string bytes;
      for (uint64_t i = 0; i < elementsOf(shape); ++i) {
        uint16_t b = floatToBf16(randomWeight(7, name, i, shape.size()));
        bytes.append(reinterpret_cast<const char *>(&b), 2);
      }
      tensors.push_back({{name, "BF16", shape}, bytes});
    }
    fs::remove_all(dir + "/ckpt");
    writeCheckpoint(dir + "/ckpt", tensors, /*shards=*/2);
    ASSERT_TRUE(pack(*plan, dir + "/ckpt").ok());
    EXPECT_TRUE(readAll(dir + "/random.bin") == readAll(out)) << "not byte-identical";
  }
}

TEST_F(PackerTest, OutputDoesNotDependOnThreadsOrChunks) {
  ASSERT_TRUE(packRandom(untiedPlan, 3, dir + "/a.bin", 1).ok());
  std::string a = readAll(dir + "/a.bin");
  // Chunks of 130 bytes end mid-row, of 1000 mid-tensor, of 8192 mid-FFN.
  for (unsigned threads : {2u, 5u})
    for (uint64_t chunk : {0ull, 130ull, 1000ull, 8192ull}) {
      ASSERT_TRUE(packRandom(untiedPlan, 3, dir + "/b.bin", threads, chunk).ok());
      EXPECT_TRUE(a == readAll(dir + "/b.bin")) << threads << " threads, chunks of " << chunk;
    }
  ASSERT_TRUE(packRandom(untiedPlan, 4, dir + "/c.bin", 2).ok());
  EXPECT_FALSE(a == readAll(dir + "/c.bin")) << "the seed matters";

  // Checkpoints: f16 is staged and converted, bf16 read into the chunk
  // directly (but for the transposed blocks).
  for (const char *dtype : {"F16", "BF16"}) {
    DTypeOf dtypeOf = [dtype](const std::string &) { return dtype; };
    fs::remove_all(dir + "/ckpt");
    writeCheckpoint(dir + "/ckpt", checkpointOf(untiedPlan, dtypeOf), 2);
    ASSERT_TRUE(pack(untiedPlan, dir + "/ckpt", nullptr, 1).ok());
    std::string one = readAll(out);
    expectPacked(untiedPlan, out, fromDType(dtypeOf));
    for (unsigned threads : {2u, 4u})
      for (uint64_t chunk : {0ull, 130ull, 1000ull, 8192ull}) {
        ASSERT_TRUE(pack(untiedPlan, dir + "/ckpt", nullptr, threads, chunk).ok());
        EXPECT_TRUE(one == readAll(out)) << dtype << ", " << threads << " threads, chunks of "
                                         << chunk;
      }
  }
}

// --- Tied embeddings --------------------------------------------------------//

TEST_F(PackerTest, TiedFallbackFromConfig) {
  DTypeOf bf16 = [](const std::string &) { return "BF16"; };
  std::vector<SafeTensorData> tensors = checkpointOf(untiedPlan, bf16);
  std::erase_if(tensors, [](const SafeTensorData &t) { return t.header.name == "lm_head.weight"; });
  writeCheckpoint(dir + "/ckpt", tensors);

  // No config.json: lm_head.weight is simply missing.
  Status s = pack(untiedPlan, dir + "/ckpt");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'lm_head.weight' is missing (the plan needs [320, 64])"),
            std::string::npos)
      << s.message();
  std::ofstream(dir + "/ckpt/config.json") << R"({"tie_word_embeddings": false})";
  EXPECT_FALSE(pack(untiedPlan, dir + "/ckpt").ok());

  std::ofstream(dir + "/ckpt/config.json")
      << R"({"model_type": "llama", "tie_word_embeddings": true})";
  PackReport report;
  s = pack(untiedPlan, dir + "/ckpt", &report);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_EQ(report.notes[0], "lm_head.weight is tied (config.json: tie_word_embeddings): packed "
                             "from model.embed_tokens.weight");
  expectPacked(untiedPlan, out, [](const std::string &name, uint64_t i, unsigned rank) {
    return expectedBf16("BF16", name == "lm_head.weight" ? "model.embed_tokens.weight" : name, i,
                        rank);
  });
}

// --- Refusals ---------------------------------------------------------------//

TEST_F(PackerTest, EveryCheckpointProblemListedAtOnce) {
  DTypeOf bf16 = [](const std::string &) { return "BF16"; };
  std::vector<SafeTensorData> tensors = checkpointOf(tied, bf16);
  std::vector<SafeTensorData> kept;
  for (SafeTensorData &t : tensors) {
    const std::string &n = t.header.name;
    if (n == "model.norm.weight" || n == "model.layers.1.mlp.up_proj.weight" ||
        n == "model.layers.2.self_attn.k_proj.weight")
      continue;
    if (n == "model.layers.0.mlp.down_proj.weight")
      t.header.shape = {160, 64};
    if (n == "model.layers.2.post_attention_layernorm.weight")
      t.header.shape = {1, 64};
    if (n == "model.layers.1.self_attn.o_proj.weight")
      t.header.dtype = "I16";
    if (n == "model.layers.0.input_layernorm.weight") {
      t.header.dtype = "F64";
      t.bytes += t.bytes + t.bytes + t.bytes;
    }
    kept.push_back(t);
  }
  writeCheckpoint(dir + "/ckpt", kept);
  Status s = pack(tied, dir + "/ckpt");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "the checkpoint '" + dir + "/ckpt' does not fit the plan (7 problems):\n"
            "  'model.layers.0.input_layernorm.weight' has dtype F64; only BF16, F16 and F32 are "
            "converted\n"
            "  'model.layers.0.mlp.down_proj.weight' has shape [160, 64] in the checkpoint, the "
            "plan needs [64, 160]\n"
            "  'model.layers.1.mlp.up_proj.weight' is missing (the plan needs [160, 64])\n"
            "  'model.layers.1.self_attn.o_proj.weight' has dtype I16; only BF16, F16 and F32 "
            "are converted\n"
            "  'model.layers.2.post_attention_layernorm.weight' has shape [1, 64] in the "
            "checkpoint, the plan needs [64]\n"
            "  'model.layers.2.self_attn.k_proj.weight' is missing (the plan needs [32, 64])\n"
            "  'model.norm.weight' is missing (the plan needs [64])");
  expectNoOutput();
}

TEST_F(PackerTest, BrokenCheckpointFiles) {
  DTypeOf bf16 = [](const std::string &) { return "BF16"; };
  writeCheckpoint(dir + "/ckpt", checkpointOf(tied, bf16), 2);
  fs::remove(dir + "/ckpt/model-00002-of-00002.safetensors");
  Status s = pack(tied, dir + "/ckpt");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot open '" + dir + "/ckpt/model-00002-of-00002.safetensors' "
                         "(named by '" + dir + "/ckpt/model.safetensors.index.json'): No such "
                         "file or directory");

  fs::remove_all(dir + "/ckpt");
  writeCheckpoint(dir + "/ckpt", checkpointOf(tied, bf16));
  std::fstream f(dir + "/ckpt/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(8);
  f.put('['); // The JSON header now opens an array it never closes.
  f.close();
  s = pack(tied, dir + "/ckpt");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "'" + dir + "/ckpt/model.safetensors': the safetensors header is not valid JSON");
  expectNoOutput();
}

TEST_F(PackerTest, UnwritableOutputLeavesNothing) {
  PackOptions opts;
  opts.random = true;
  Status s = packWeights(tied, opts, dir + "/no/such/dir/weights.bin", nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cannot create a temporary file beside '" + dir +
                                  "/no/such/dir/weights.bin': No such file or directory",
                              0),
            0u)
      << s.message();

  // A write that fails halfway (the file size limit): the old file stays, no
  // temporary file is left.
  std::ofstream(out) << "old";
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old, small;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = 6000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  s = packWeights(tied, opts, out, nullptr);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("File too large"), std::string::npos) << s.message();
  EXPECT_EQ(readAll(out), "old");
  expectNoOutput("weights.bin");
}

TEST_F(PackerTest, InconsistentLayoutIsRefused) {
  Plan bad = tied;
  bad.weights[1].bytes += 2;
  bad.layoutHash = layoutHash(bad.weights, bad.weightsBytes);
  Status s = packRandom(bad, 1, out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bytes, its segments hold"), std::string::npos) << s.message();
  bad = tied;
  bad.layoutHash ^= 1;
  EXPECT_EQ(packRandom(bad, 1, out).message(),
            "the plan's layout hash does not match its weights layout");
  expectNoOutput();
}

// --- The tool -------------------------------------------------------------------//

TEST_F(PackerTest, TipackCommandLine) {
  std::string tipack = std::string("'") + TI_TOOLS_DIR "/tipack' '" + suiteDir + "/tied.fb' ";
  std::string log = " >'" + dir + "/log' 2>&1";
  ASSERT_EQ(run(tipack + "--random --seed 7 --threads 2 -o '" + out + "'" + log), 0)
      << readAll(dir + "/log");
  EXPECT_EQ(readAll(dir + "/log").rfind("tipack: " + std::to_string(tied.weights.size()) +
                                            " tensors, ",
                                        0),
            0u)
      << readAll(dir + "/log");
  ASSERT_TRUE(packRandom(tied, 7, dir + "/direct.bin").ok());
  EXPECT_TRUE(readAll(out) == readAll(dir + "/direct.bin"));

  EXPECT_EQ(run(tipack + "--random --quiet -o '" + out + "'" + log), 0);
  EXPECT_EQ(readAll(dir + "/log"), "");
  EXPECT_EQ(run(tipack + "-o '" + out + "'" + log), 1);
  EXPECT_EQ(readAll(dir + "/log"), "tipack: error: say where the weights come from: "
                                   "--checkpoint DIR or --random\n");
  EXPECT_EQ(run(tipack + "--checkpoint '" + dir + "/none' -o '" + out + "'" + log), 1);
  EXPECT_EQ(readAll(dir + "/log"), "tipack: error: cannot open checkpoint '" + dir +
                                       "/none': No such file or directory\n");
  EXPECT_EQ(run(std::string("'") + TI_TOOLS_DIR "/tipack' '" + dir + "/log' --random -o '" + out +
                "'" + " >'" + dir + "/log2' 2>&1"),
            1);
  EXPECT_EQ(readAll(dir + "/log2").rfind("tipack: error: ", 0), 0u);
}

// --- Conversions and synthetic weights ------------------------------------------//

TEST(Bf16Test, Conversions) {
  auto f = [](uint32_t bits) { return std::bit_cast<float>(bits); };
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(f(0x3f808000)), 0x3f80); // Tie, to even (down).
  EXPECT_EQ(floatToBf16(f(0x3f818000)), 0x3f82); // Tie, to even (up).
  EXPECT_EQ(floatToBf16(f(0x3f808001)), 0x3f81); // Above the tie.
  EXPECT_EQ(floatToBf16(f(0x3f807fff)), 0x3f80); // Below the tie.
  EXPECT_EQ(floatToBf16(f(0x7f7fffff)), 0x7f80); // Rounds to infinity.
  EXPECT_EQ(floatToBf16(f(0x7f800001)), 0x7fc0); // A NaN whose payload is all low bits.
  EXPECT_EQ(floatToBf16(f(0xffffffff)), 0xffff); // NaN, sign kept.
  EXPECT_EQ(floatToBf16(f(0x7fbfffff)), 0x7fff); // NaN, not carried into infinity's neighbour.
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc0a0), -5.0f);
  for (uint32_t b = 0; b < 0x10000; ++b) // Every bf16 is an f32 that converts back.
    if (!std::isnan(bf16ToFloat(b))) {
      ASSERT_EQ(floatToBf16(bf16ToFloat(b)), b);
    }

  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24)); // Smallest subnormal.
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24)); // Largest subnormal.
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14)); // Smallest normal.
  EXPECT_EQ(std::bit_cast<uint32_t>(halfToFloat(0x8000)), 0x80000000u);
  EXPECT_EQ(halfToFloat(0x7c00), INFINITY);
  EXPECT_EQ(halfToFloat(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
}

/// The function as RandomWeights.h states it, written out independently.
double specValue(uint64_t seed, const std::string &name, uint64_t index, unsigned rank) {
  auto sm = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  uint64_t fnv = 0xcbf29ce484222325ull;
  for (unsigned char c : name)
    fnv = (fnv ^ c) * 0x100000001b3ull;
  uint64_t z = sm(sm(fnv ^ sm(seed)) + index);
  double sum = 0;
  for (int k = 0; k < 4; ++k)
    sum += (static_cast<double>((z >> (16 * k)) & 0xffff) + 0.5) / 65536;
  double n = (sum - 2) * std::sqrt(3.0);
  return rank >= 2 ? 0.02 * n : 1 + 0.1 * n;
}

TEST(RandomWeightsTest, TheStatedFunction) {
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafull); // SplitMix64's first output from 0.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  for (uint64_t seed : {0ull, 1ull, 0xdeadbeefull})
    for (const char *name : {"model.norm.weight", "lm_head.weight", ""})
      for (uint64_t i : {0ull, 1ull, 12345ull, 1ull << 40})
        for (unsigned rank : {1u, 2u})
          ASSERT_EQ(randomWeight(seed, name, i, rank),
                    static_cast<float>(specValue(seed, name, i, rank)));
  float bulk[1000];
  randomWeights(9, "w", 2, 5000, 1000, bulk);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(bulk[i], randomWeight(9, "w", 5000 + i, 2));
}

TEST(RandomWeightsTest, Statistics) {
  constexpr int n = 200000;
  std::vector<float> v(n);
  for (unsigned rank : {2u, 1u}) {
    randomWeights(1, "t", rank, 0, n, v.data());
    double sum = 0, squares = 0, centre = rank == 2 ? 0.0 : 1.0, sd = rank == 2 ? 0.02 : 0.1;
    int exactlyCentre = 0;
    for (float x : v) {
      sum += x - centre;
      squares += (x - centre) * (x - centre);
      exactlyCentre += x == centre;
      ASSERT_LE(std::abs(x - centre), sd * 2 * std::sqrt(3.0) + 1e-6);
    }
    EXPECT_NEAR(sum / n, 0.0, sd * 0.02);
    EXPECT_NEAR(std::sqrt(squares / n), sd, sd * 0.02);
    EXPECT_LT(exactlyCentre, 10) << "rank " << rank;
  }
  EXPECT_NE(randomWeight(1, "a", 0, 2), randomWeight(2, "a", 0, 2));
  EXPECT_NE(randomWeight(1, "a", 0, 2), randomWeight(1, "b", 0, 2));
}

} // namespace
