//===- WeightsFileTest.cpp ------------------------------------------------===//
//
// weights.bin: the header's bytes follow WeightsFile.h; a packed file opens
// and matches its plan; wrong magic, versions, sizes, tables and plans are
// refused with one line naming the file; flipped header bytes and every
// truncation are refused or accepted, never a crash or a read outside the
// mapping (run under AddressSanitizer too).
//
//===----------------------------------------------------------------------===//
#include "ti/Weights/WeightsFile.h"

#include "ti/Support/Bf16.h"
#include "ti/Weights/Packer.h"
#include "ti/Weights/RandomWeights.h"
#include "ti/Support/Hex.h"

#include <gtest/gtest.h>

#include "ti/Support/Checksum.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

using namespace ti;
using namespace ti::plan;
namespace fs = std::filesystem;

namespace {

template <typename T> T at(const std::string &bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

/// A layout with a norm scale, a row block and a transposed column block.
Plan smallPlan(uint64_t downCols = 24) {
  Plan p;
  p.weights = {
      {"norm", 0, 128, {{"model.norm.weight", {64}, 0, 1, 0, 64, false}}},
      {"mixed",
       256,
       3200,
       {{"wq", {48, 40}, 8, 40, 0, 40, false}, {"down", {40, downCols}, 0, 40, 4, 12, true}}},
  };
  p.weightsBytes = 3584;
  p.layoutHash = layoutHash(p.weights, p.weightsBytes);
  return p;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string hex(uint64_t v) { return "0x" + hexDigits(v); }

/// `bytes` with its header's checksum made right again (after an edit that a
/// test means the parser, not the checksum, to find).
std::string sealed(std::string bytes) {
  const uint64_t h = at<uint32_t>(bytes, 12);
  if (bytes.size() < 56 || h > bytes.size())
    return bytes; // A header size past the file: nothing to seal.
  const uint64_t sum = weightsHeaderChecksum(reinterpret_cast<const uint8_t *>(bytes.data()), h);
  std::memcpy(&bytes[40], &sum, 8);
  return bytes;
}

class WeightsFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "ti-weights-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir = t;
    file = dir + "/weights.bin";
    PackOptions opts;
    opts.random = true;
    opts.seed = 5;
    Status s = packWeights(plan, opts, file, nullptr);
    ASSERT_TRUE(s.ok()) << s.message();
    good = readAll(file);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string openError(const std::string &bytes) {
    writeAll(file, bytes);
    auto w = WeightsFile::open(file);
    return w.ok() ? "" : w.status().message();
  }

  Plan plan = smallPlan();
  std::string dir, file, good;
};

TEST_F(WeightsFileTest, HeaderBytesFollowTheSpec) {
  WeightsHeader h = weightsHeaderFor(plan);
  std::string bytes = serializeWeightsHeader(h);
  EXPECT_EQ(h.headerBytes, 4096u);
  ASSERT_EQ(bytes.size(), 4096u);
  EXPECT_EQ(bytes.substr(0, 8), "TIWEIGHT");
  EXPECT_EQ(at<uint32_t>(bytes, 8), kWeightsFormatVersion);
  EXPECT_EQ(at<uint32_t>(bytes, 12), 4096u);
  EXPECT_EQ(at<uint64_t>(bytes, 16), plan.layoutHash);
  EXPECT_EQ(at<uint64_t>(bytes, 24), 3584u);
  EXPECT_EQ(at<uint32_t>(bytes, 32), 2u);
  EXPECT_EQ(at<uint32_t>(bytes, 36), 0u);
  // The header's checksum over its bytes with this field as zero; the
  // payload's, as the writer says (0 here).
  EXPECT_EQ(at<uint64_t>(bytes, 40), h.headerChecksum);
  EXPECT_EQ(sealed(bytes), bytes);
  std::string unsealed = bytes;
  std::memset(&unsealed[40], 0, 8);
  EXPECT_EQ(h.headerChecksum, checksum(unsealed.data(), unsealed.size()));
  EXPECT_EQ(at<uint64_t>(bytes, 48), 0u);
  EXPECT_EQ(at<uint64_t>(bytes, 56), 0u);
  EXPECT_EQ(at<uint64_t>(bytes, 64), 128u);
  EXPECT_EQ(at<uint32_t>(bytes, 72), 4u);
  EXPECT_EQ(bytes.substr(76, 4), "norm");
  EXPECT_EQ(at<uint64_t>(bytes, 80), 256u);
  EXPECT_EQ(at<uint64_t>(bytes, 88), 3200u);
  EXPECT_EQ(at<uint32_t>(bytes, 96), 5u);
  EXPECT_EQ(bytes.substr(100, 5), "mixed");
  EXPECT_EQ(bytes.find_first_not_of('\0', 105), std::string::npos);

  // A table longer than one page takes the next multiple of 4096.
  h.tensors.assign(300, {std::string(20, 'n'), 0, 0});
  EXPECT_EQ(serializeWeightsHeader(h).size(), 12288u);
  EXPECT_EQ(h.headerBytes, 12288u);
}

TEST_F(WeightsFileTest, OpensAndMatchesItsPlan) {
  EXPECT_EQ(good.size(), 4096u + 3584u);
  auto w = WeightsFile::open(file);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE((*w)->checkAgainst(plan).ok());
  EXPECT_EQ((*w)->dataBytes(), 3584u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*w)->data()) % 4096, 0u);
  EXPECT_EQ((*w)->header().tensors.size(), 2u);
  EXPECT_EQ((*w)->header().tensors[1].name, "mixed");
  // The norm scale, element 5, and the transposed block's [u=2][j=7]:
  // down[7][4 + 2].
  uint16_t v;
  std::memcpy(&v, (*w)->data() + 2 * 5, 2);
  EXPECT_EQ(v, floatToBf16(randomWeight(5, "model.norm.weight", 5, 1)));
  std::memcpy(&v, (*w)->data() + 256 + 2 * (32 * 40) + 2 * (2 * 40 + 7), 2);
  EXPECT_EQ(v, floatToBf16(randomWeight(5, "down", 7 * 24 + 6, 2)));
}

TEST_F(WeightsFileTest, BadMagic) {
  std::string expected = "'" + file + "' is not a weights file (bad magic)";
  EXPECT_EQ(openError("hello world, this is not it"), expected);
  EXPECT_EQ(openError(""), expected);
  EXPECT_EQ(openError("TIWEIG"), expected);
  std::string other = good;
  other[3] = 'X';
  EXPECT_EQ(openError(other), expected);
}

TEST_F(WeightsFileTest, Truncated) {
  EXPECT_EQ(openError(good.substr(0, good.size() - 1)),
            "'" + file + "' is truncated: 7679 bytes, the header says 7680");
  EXPECT_EQ(openError(good.substr(0, 4096)),
            "'" + file + "' is truncated: 4096 bytes, the header says 7680");
  EXPECT_EQ(openError(good.substr(0, 20)),
            "'" + file + "' is truncated: 20 bytes, less than the 56-byte header");
  EXPECT_EQ(openError(good + "x"),
            "'" + file + "' has 7681 bytes, the header says 7680 (trailing bytes)");
}

TEST_F(WeightsFileTest, HeaderFields) {
  std::string bytes = good;
  bytes[8] = 4;
  EXPECT_EQ(openError(bytes), "'" + file + "' has weights format version 4; this build reads 1 to 3");
  bytes = good;
  bytes[12] = 1;
  EXPECT_EQ(openError(bytes),
            "'" + file + "' has a header of 4097 bytes, not a multiple of 4096");
  bytes = good;
  bytes[8] = 1; // Version 1 had no attachments: the word was reserved.
  bytes[37] = 1;
  EXPECT_EQ(openError(bytes), "'" + file + "' has a nonzero reserved header word");
  // The edits below are resealed: what they change must be found by the
  // parser, as in a file written wrong rather than damaged.
  bytes = good;
  bytes[32] = 0; // Count 0: the table's bytes are left over, and not zero.
  EXPECT_EQ(openError(sealed(bytes)), "'" + file + "' has nonzero bytes after its tensor table, at 64");
  bytes = good;
  std::memset(&bytes[32], 0xff, 4);
  EXPECT_EQ(openError(sealed(bytes)),
            "'" + file + "' has 4294967295 tensors, more than its 4096-byte header can hold");
  bytes = good;
  bytes[73] = 0x7f; // The first name runs past the header.
  EXPECT_EQ(openError(sealed(bytes)),
            "'" + file + "' has a tensor table that overruns its header at entry 0");
  bytes = good;
  bytes[81] = 0; // 'mixed' moves onto 'norm'.
  EXPECT_EQ(openError(sealed(bytes)), "'" + file + "' has overlapping tensors 'norm' and 'mixed'");
  bytes = good;
  bytes[80] = 1; // Misaligned.
  EXPECT_EQ(openError(sealed(bytes)), "'" + file +
                                  "' has tensor 'mixed' (entry 1) at offset 257, not a "
                                  "multiple of 256");
  bytes = good;
  bytes[89] = 0x10; // 'mixed' ends past the data.
  EXPECT_EQ(openError(sealed(bytes)), "'" + file +
                                  "' has tensor 'mixed' (entry 1) [256, +4224) outside its 3584 "
                                  "data bytes");
}

TEST_F(WeightsFileTest, WrongPlan) {
  Plan other = smallPlan(/*downCols=*/32);
  auto w = WeightsFile::open(file);
  ASSERT_TRUE(w.ok()) << w.status().message();
  Status s = (*w)->checkAgainst(other);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "'" + file + "' was packed for another plan (layout hash " +
                             hex(plan.layoutHash) + ", the plan needs " +
                             hex(other.layoutHash) + ")");
  // The same hash with another table: a file edited after packing.
  std::string bytes = good;
  bytes[76] = 'f'; // "norm" -> "form"
  writeAll(file, sealed(bytes));
  auto edited = WeightsFile::open(file);
  ASSERT_TRUE(edited.ok()) << edited.status().message();
  EXPECT_EQ((*edited)->checkAgainst(plan).message(),
            "'" + file + "' tensor 0 is 'form' [0, +128), the plan needs 'norm' [0, +128)");
}

TEST_F(WeightsFileTest, NotAFile) {
  auto missing = WeightsFile::open(dir + "/none.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "cannot open '" + dir + "/none.bin': No such file or directory");
  auto directory = WeightsFile::open(dir);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().message(), "'" + dir + "' is not a regular file");
}

TEST_F(WeightsFileTest, FlippedHeaderBytesNeverCrash) {
  std::mt19937_64 rng(7);
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = good;
    // Mostly the fixed header and the table, where the parsing is.
    size_t span = i % 4 == 0 ? 4096 : 100;
    for (int k = 0, n = 1 + rng() % 4; k < n; ++k)
      bytes[rng() % span] = static_cast<char>(rng());
    // Half resealed, so that the flips reach the parser past the checksum.
    writeAll(file, i % 2 ? sealed(bytes) : bytes);
    auto w = WeightsFile::open(file);
    if (!w.ok()) {
      EXPECT_EQ(w.status().message().find('\n'), std::string::npos);
      continue;
    }
    ++accepted;
    for (const WeightsTensorEntry &t : (*w)->header().tensors)
      ASSERT_LE(t.offset + t.bytes, (*w)->dataBytes());
    (void)(*w)->checkAgainst(plan);
  }
  EXPECT_GT(accepted, 0); // Flips of the layout hash, say.
}

TEST_F(WeightsFileTest, EveryTruncationIsRefused) {
  for (size_t n = 0; n < good.size(); n += n < 4200 ? 1 : 97)
    EXPECT_NE(openError(good.substr(0, n)), "") << n;
}

} // namespace

// Version 2 keeps files after the data: the tokenizer's, for one.
TEST_F(WeightsFileTest, KeepsAttachmentsAfterTheData) {
  PackOptions opts;
  opts.random = true;
  opts.seed = 5;
  opts.attachments = {{"tokenizer.json", "{\"model\": {}}"}, {"generation_config.json", "{}"}};
  std::string path = dir + "/attached.bin";
  ASSERT_TRUE(packWeights(plan, opts, path, nullptr).ok());
  auto w = WeightsFile::open(path);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE((*w)->checkAgainst(plan).ok());
  EXPECT_EQ((*w)->attachment("tokenizer.json"), "{\"model\": {}}");
  EXPECT_EQ((*w)->attachment("generation_config.json"), "{}");
  EXPECT_FALSE((*w)->attachment("tokenizer_config.json"));
  std::string bytes = readAll(path);
  // The data section is the one a file without attachments has.
  EXPECT_EQ(bytes.substr(4096, 3584), good.substr(4096, 3584));
  EXPECT_EQ(bytes.size(), 4096u + 3584u + 15u);

  std::string damaged = bytes;
  damaged.pop_back();
  EXPECT_EQ(openError(damaged), "'" + file + "' is truncated: 7694 bytes, the header says 7695");
  EXPECT_EQ(openError(bytes + "x"), "'" + file + "' has 7696 bytes, the header says 7695 (trailing bytes)");
  // The attachment table follows the two tensor entries, norm and mixed.
  std::size_t table = 56 + (20 + 4) + (20 + 5);
  damaged = bytes;
  damaged[table + 34 + 1] = 0x01; // the second entry's offset moves by 256: a gap
  EXPECT_EQ(openError(sealed(damaged)),
            "'" + file + "' has attachment 'generation_config.json' at 269, not right after the one before (13)");
  damaged = bytes;
  damaged[36] = 65; // the attachment count
  EXPECT_EQ(openError(sealed(damaged)), "'" + file + "' has 65 attachments, more than 64");
  damaged = bytes;
  std::memcpy(&damaged[table + 20 + 14 + 20], "tokenizer.json", 14); // two names alike
  damaged.replace(table + 20 + 14 + 16, 4, std::string("\x0e\0\0\0", 4));
  EXPECT_NE(openError(sealed(damaged)).find("has two attachments named 'tokenizer.json'"), std::string::npos)
      << openError(sealed(damaged));
  // The payload's checksum covers the attachments.
  damaged = bytes;
  damaged.back() ^= 1;
  writeAll(file, damaged);
  auto flipped = WeightsFile::open(file);
  ASSERT_TRUE(flipped.ok()) << flipped.status().message();
  EXPECT_NE((*flipped)->verifyPayload().message().find("is damaged"), std::string::npos);
}

// Version 3: the header is checked at every open, the payload on request.
TEST_F(WeightsFileTest, ChecksumsFindDamage) {
  auto w = WeightsFile::open(file);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE((*w)->verifyPayload().ok()) << (*w)->verifyPayload().message();
  const uint64_t payloadSum = at<uint64_t>(good, 48);
  EXPECT_EQ(payloadSum, checksum(good.data() + 4096, good.size() - 4096));

  std::string bytes = good;
  bytes[77] ^= 0x20; // "norm" -> "nOrm": a damaged table, not resealed.
  EXPECT_EQ(openError(bytes), "'" + file + "' has a damaged header: its checksum is " +
                                  hex(at<uint64_t>(good, 40)) + ", its bytes give " +
                                  hex(weightsHeaderChecksum(
                                      reinterpret_cast<const uint8_t *>(bytes.data()), 4096)));
  bytes = good;
  bytes[4096 + 1000] ^= 1; // One bit of the weights.
  writeAll(file, bytes);
  auto damaged = WeightsFile::open(file);
  ASSERT_TRUE(damaged.ok()) << damaged.status().message(); // Opening reads only the header.
  EXPECT_EQ((*damaged)->verifyPayload().message(),
            "'" + file + "' is damaged: its 3584 bytes of weights and attachments give checksum " +
                hex(checksum(bytes.data() + 4096, 3584)) + ", the header says " + hex(payloadSum));

  // A version 2 file (no checksums) opens as before; it cannot be verified.
  WeightsHeader h = weightsHeaderFor(plan);
  h.version = 2;
  std::string v2 = serializeWeightsHeader(h) + good.substr(4096);
  ASSERT_EQ(openError(v2), "");
  auto old = WeightsFile::open(file);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE((*old)->checkAgainst(plan).ok());
  EXPECT_EQ((*old)->verifyPayload().message(),
            "'" + file + "' has no payload checksum (weights format 2; tipack writes format 3)");
}
