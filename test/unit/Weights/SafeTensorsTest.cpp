//===- SafeTensorsTest.cpp ------------------------------------------------===//
//
// The safetensors reader and writer: a round trip through one file and
// through shards, and refusals (each one line naming the file) of missing
// shards, broken indexes and corrupt headers; flipped and truncated header
// bytes never crash the reader nor let it read outside the file.
//
//===----------------------------------------------------------------------===//
#include "ti/Weights/SafeTensors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

using namespace ti;
namespace fs = std::filesystem;

namespace {

class SafeTensorsTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "ti-safetensors-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir = t;
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string &name) const { return dir + "/" + name; }

  static std::string bytesOf(size_t n, char seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i)
      s[i] = static_cast<char>(seed + 7 * i);
    return s;
  }

  std::vector<SafeTensorData> sample() const {
    return {{{"w.bf16", "BF16", {2, 3}}, bytesOf(12, 1)},
            {{"w.f32", "F32", {4}}, bytesOf(16, 2)},
            {{"w.f16", "F16", {1, 2}}, bytesOf(4, 3)},
            {{"w.i64", "I64", {2}}, bytesOf(16, 4)},
            {{"w.empty", "F32", {0, 5}}, ""}};
  }

  /// A file of an 8-byte length, `header` and `data`.
  std::string rawFile(const std::string &name, const std::string &header,
                      const std::string &data = std::string(64, 'x')) const {
    uint64_t n = header.size();
    std::string bytes(reinterpret_cast<const char *>(&n), 8);
    bytes += header + data;
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  std::string dir;
};

void expectOneLine(const Status &s, const std::string &start) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind(start, 0), 0u) << s.message();
}

TEST_F(SafeTensorsTest, RoundTripOneFile) {
  ASSERT_TRUE(writeSafeTensors(path("model.safetensors"), sample(), {{"format", "pt"}}).ok());
  for (const std::string &p : {dir, path("model.safetensors")}) {
    auto ckpt = SafeTensorsCheckpoint::open(p);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status().message();
    EXPECT_EQ((*ckpt)->directory(), dir);
    ASSERT_EQ((*ckpt)->tensors().size(), 5u);
    EXPECT_EQ((*ckpt)->tensors()[0].name, "w.bf16"); // Sorted by name.
    for (const SafeTensorData &want : sample()) {
      const SafeTensorInfo *t = (*ckpt)->find(want.header.name);
      ASSERT_NE(t, nullptr) << want.header.name;
      EXPECT_EQ(t->dtypeName, want.header.dtype);
      EXPECT_EQ(t->shape, want.header.shape);
      EXPECT_EQ(t->bytes, want.bytes.size());
      std::string got(t->bytes, '\0');
      ASSERT_TRUE((*ckpt)->read(*t, 0, got.data(), got.size()).ok());
      EXPECT_EQ(got, want.bytes);
    }
    EXPECT_EQ((*ckpt)->find("w.bf16")->offset % 8, 0u) << "the header is padded to 8 bytes";
    const SafeTensorInfo *f32 = (*ckpt)->find("w.f32");
    EXPECT_EQ(f32->dtype, SafeDType::F32);
    EXPECT_EQ((*ckpt)->find("w.i64")->dtype, SafeDType::Other);
    EXPECT_EQ((*ckpt)->find("missing"), nullptr);
    char part[4];
    ASSERT_TRUE((*ckpt)->read(*f32, 12, part, 4).ok());
    EXPECT_EQ(std::string(part, 4), sample()[1].bytes.substr(12));
    Status outside = (*ckpt)->read(*f32, 13, part, 4);
    EXPECT_FALSE(outside.ok());
    EXPECT_NE(outside.message().find("outside tensor 'w.f32'"), std::string::npos);
  }
}

TEST_F(SafeTensorsTest, Sharded) {
  std::vector<SafeTensorData> all = sample();
  std::vector<SafeTensorData> a(all.begin(), all.begin() + 2), b(all.begin() + 2, all.end());
  ASSERT_TRUE(writeSafeTensors(path("model-00001-of-00002.safetensors"), a).ok());
  ASSERT_TRUE(writeSafeTensors(path("model-00002-of-00002.safetensors"), b).ok());
  std::map<std::string, std::string> map;
  for (const SafeTensorData &t : a)
    map[t.header.name] = "model-00001-of-00002.safetensors";
  for (const SafeTensorData &t : b)
    map[t.header.name] = "model-00002-of-00002.safetensors";
  ASSERT_TRUE(writeSafeTensorsIndex(path("model.safetensors.index.json"), map, 60).ok());
  for (const std::string &p : {dir, path("model.safetensors.index.json")}) {
    auto ckpt = SafeTensorsCheckpoint::open(p);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status().message();
    EXPECT_EQ((*ckpt)->files().size(), 2u);
    ASSERT_EQ((*ckpt)->tensors().size(), all.size());
    for (const SafeTensorData &want : all) {
      const SafeTensorInfo *t = (*ckpt)->find(want.header.name);
      ASSERT_NE(t, nullptr);
      std::string got(t->bytes, '\0');
      ASSERT_TRUE((*ckpt)->read(*t, 0, got.data(), got.size()).ok());
      EXPECT_EQ(got, want.bytes);
      EXPECT_EQ((*ckpt)->files()[t->file], path(map[want.header.name]));
    }
  }
}

TEST_F(SafeTensorsTest, MissingShard) {
  ASSERT_TRUE(writeSafeTensors(path("one.safetensors"), sample()).ok());
  ASSERT_TRUE(writeSafeTensorsIndex(path("model.safetensors.index.json"),
                                    {{"w.f32", "one.safetensors"}, {"w.bf16", "two.safetensors"}},
                                    0)
                  .ok());
  auto ckpt = SafeTensorsCheckpoint::open(dir);
  expectOneLine(ckpt.status(), "cannot open '" + path("two.safetensors") + "' (named by '" +
                                   path("model.safetensors.index.json") +
                                   "'): No such file or directory");
}

// Issue #16: a shard named "../x" was opened outside the checkpoint's folder.
TEST_F(SafeTensorsTest, ShardsAreFilesBesideTheIndex) {
  ASSERT_TRUE(writeSafeTensors(path("one.safetensors"), sample()).ok());
  for (std::string shard : {"../one.safetensors", "/etc/passwd", "..", "sub/one.safetensors"}) {
    ASSERT_TRUE(writeSafeTensorsIndex(path("model.safetensors.index.json"), {{"w.f32", shard}}, 0).ok());
    expectOneLine(SafeTensorsCheckpoint::open(dir).status(),
                  "'" + path("model.safetensors.index.json") + "': the weight_map entry of 'w.f32' names '" + shard +
                      "', not a file in the checkpoint's folder");
  }
}

TEST_F(SafeTensorsTest, IndexNamesATensorItsShardLacks) {
  ASSERT_TRUE(writeSafeTensors(path("one.safetensors"), sample()).ok());
  ASSERT_TRUE(writeSafeTensorsIndex(path("model.safetensors.index.json"),
                                    {{"w.f32", "one.safetensors"}, {"w.nope", "one.safetensors"}},
                                    0)
                  .ok());
  auto ckpt = SafeTensorsCheckpoint::open(dir);
  expectOneLine(ckpt.status(), "'" + path("model.safetensors.index.json") +
                                   "' maps 'w.nope' to 'one.safetensors', which does not hold it");
}

TEST_F(SafeTensorsTest, BadPaths) {
  expectOneLine(SafeTensorsCheckpoint::open(dir).status(),
                "checkpoint directory '" + dir + "' holds neither model.safetensors nor");
  expectOneLine(SafeTensorsCheckpoint::open(path("nothing")).status(),
                "cannot open checkpoint '" + path("nothing") + "': No such file");
  std::ofstream(path("model.safetensors.index.json")) << "{\"weight_map\": [1]}";
  expectOneLine(SafeTensorsCheckpoint::open(dir).status(),
                "'" + path("model.safetensors.index.json") + "': no weight_map object");
}

TEST_F(SafeTensorsTest, CorruptHeaders) {
  struct Case {
    std::string header, error;
  };
  const std::vector<Case> cases = {
      {"{abc", "the safetensors header is not valid JSON"},
      {"[1, 2]", "the safetensors header is not a JSON object"},
      {R"({"__metadata__": 3})", "__metadata__ is not an object"},
      {R"({"t": 5})", "tensor 't': its entry is not an object"},
      {R"({"t": {"shape": [1], "data_offsets": [0, 2]}})", "tensor 't': no dtype string"},
      {R"({"t": {"dtype": "F16", "data_offsets": [0, 2]}})", "tensor 't': no shape array"},
      {R"({"t": {"dtype": "F16", "shape": [1], "data_offsets": [0]}})",
       "tensor 't': data_offsets is not [begin, end]"},
      {R"({"t": {"dtype": "F16", "shape": [1], "data_offsets": [-2, 0]}})",
       "tensor 't': data_offsets is not [begin, end]"},
      {R"({"t": {"dtype": "F16", "shape": [-1], "data_offsets": [0, 2]}})",
       "tensor 't': the shape holds something other than non-negative integers"},
      {R"({"t": {"dtype": "F16", "shape": [1.5], "data_offsets": [0, 2]}})",
       "tensor 't': the shape holds something other than non-negative integers"},
      {R"({"t": {"dtype": "F16", "shape": [40], "data_offsets": [0, 80]}})",
       "tensor 't': data_offsets [0, 80] are outside the 64 data bytes"},
      {R"({"t": {"dtype": "F16", "shape": [1], "data_offsets": [4, 2]}})",
       "tensor 't': data_offsets [4, 2] are outside the 64 data bytes"},
      {R"({"t": {"dtype": "F16", "shape": [3], "data_offsets": [0, 4]}})",
       "tensor 't': shape [3] of F16 is not its 4 bytes"},
      {R"({"t": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})",
       "tensor 't': shape [4294967296, 4294967296] of F32 is not its 0 bytes"},
      // Issue #16: both were accepted, the first entry or one copy of the data
      // silently lost.
      {R"({"t": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}, "t": {"dtype": "F16", "shape": [1], "data_offsets": [2, 4]}})",
       "the header names tensor 't' twice"},
      {R"({"a": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}, "b": {"dtype": "F16", "shape": [2], "data_offsets": [6, 10]}})",
       "tensors 'a' and 'b' overlap in the data"},
  };
  for (const Case &c : cases) {
    std::string file = rawFile("bad.safetensors", c.header);
    expectOneLine(SafeTensorsCheckpoint::open(file).status(), "'" + file + "': " + c.error);
  }
  // A header length beyond the file, and a file too short for one.
  std::string file = rawFile("long.safetensors", "{}", "");
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.put('\x7f');
  f.close();
  expectOneLine(SafeTensorsCheckpoint::open(file).status(),
                "'" + file + "': truncated or not a safetensors file: the header length is 127");
  std::ofstream(path("short.safetensors")) << "abc";
  expectOneLine(SafeTensorsCheckpoint::open(path("short.safetensors")).status(),
                "'" + path("short.safetensors") + "': not a safetensors file: 3 bytes");
}

TEST_F(SafeTensorsTest, UnknownDtypeIsKeptByName) {
  std::string header = R"({"t": {"dtype": "F4_WEIRD", "shape": [3], "data_offsets": [0, 7]}})";
  std::string file = rawFile("odd.safetensors", header);
  auto ckpt = SafeTensorsCheckpoint::open(file);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().message();
  EXPECT_EQ((*ckpt)->find("t")->dtypeName, "F4_WEIRD");
  EXPECT_EQ((*ckpt)->find("t")->dtype, SafeDType::Other);
}

TEST_F(SafeTensorsTest, FlippedAndTruncatedHeadersNeverCrash) {
  ASSERT_TRUE(writeSafeTensors(path("good.safetensors"), sample()).ok());
  std::ifstream in(path("good.safetensors"), std::ios::binary);
  std::string good((std::istreambuf_iterator<char>(in)), {});
  uint64_t headerEnd;
  std::memcpy(&headerEnd, good.data(), 8);
  headerEnd += 8;
  std::mt19937_64 rng(42);
  int accepted = 0;
  for (int i = 0; i < 600; ++i) {
    std::string bytes = good;
    if (i % 3 == 0) {
      bytes.resize(rng() % good.size());
    } else {
      for (int k = 0, n = 1 + rng() % 3; k < n; ++k)
        bytes[rng() % headerEnd] ^= static_cast<char>(1 << (rng() % 8));
    }
    std::ofstream(path("fuzz.safetensors"), std::ios::binary | std::ios::trunc) << bytes;
    auto ckpt = SafeTensorsCheckpoint::open(path("fuzz.safetensors"));
    if (!ckpt.ok()) {
      EXPECT_EQ(ckpt.status().message().find('\n'), std::string::npos);
      continue;
    }
    ++accepted;
    for (const SafeTensorInfo &t : (*ckpt)->tensors()) {
      ASSERT_LE(t.offset + t.bytes, bytes.size());
      std::string data(t.bytes, '\0');
      EXPECT_TRUE((*ckpt)->read(t, 0, data.data(), data.size()).ok());
    }
  }
  EXPECT_GT(accepted, 0); // Some flips land in names or padding.
}

TEST_F(SafeTensorsTest, WriterRefusals) {
  SafeTensorsWriter w;
  expectOneLine(w.begin(path("x.safetensors"), {{"t", "Q7", {2}}}),
                "cannot write tensor 't': unknown dtype 'Q7'");
  expectOneLine(w.begin(path("x.safetensors"), {{"t", "F32", {2}}, {"t", "F32", {2}}}),
                "cannot write tensor 't' twice");
  {
    SafeTensorsWriter partial;
    ASSERT_TRUE(partial.begin(path("x.safetensors"), {{"t", "F32", {2}}}).ok());
    EXPECT_FALSE(partial.append("0123456789", 10).ok());
    ASSERT_TRUE(partial.append("0123", 4).ok());
    expectOneLine(partial.finish(), "'" + path("x.safetensors") + "': 4 bytes of tensor data");
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "an unfinished writer leaves no file";
}

} // namespace
