//===- ReferenceTest.cpp - Our tokenizers against Hugging Face's ----------===//
//
// test/tokenizer/reference.mjs runs Hugging Face's JavaScript tokenizers over
// the corpus (test/tokenizer/corpus.json) and the real tokenizer files of
// Llama 3, Qwen3 and Llama 2; this compares every encoding and decoding with
// ours, exactly. ctest runs the script first (the tokenizer-reference fixture)
// and passes its output in TI_TOKENIZER_REFERENCE.
//
//===----------------------------------------------------------------------===//
#include "ti/Tokenizer/StreamDecoder.h"
#include "ti/Tokenizer/Tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ti {
namespace {

using Json = nlohmann::json;

const Json &reference() {
  static const Json data = [] {
    const char *path = std::getenv("TI_TOKENIZER_REFERENCE");
    if (!path) return Json();
    std::ifstream in(path);
    return Json::parse(in, nullptr, false);
  }();
  return data;
}

std::string printable(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out.size() > 300 ? out.substr(0, 300) + "..." : out;
}

std::string idList(const std::vector<int32_t> &ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < 40; ++i) {
    if (i) out += ' ';
    out += std::to_string(ids[i]);
  }
  return ids.size() > 40 ? out + " ..." : out;
}

class Reference : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (reference().is_null() || reference().is_discarded())
      GTEST_SKIP() << "TI_TOKENIZER_REFERENCE names no reference file (ctest sets it)";
    for (const Json &t : reference()["tokenizers"])
      if (t["name"] == GetParam()) entry = &t;
    ASSERT_NE(entry, nullptr) << GetParam() << " is not in the reference file";
    auto loaded = Tokenizer::fromPath((*entry)["dir"].get<std::string>());
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    tokenizer.emplace(*loaded);
  }
  const Json *entry = nullptr;
  std::optional<Tokenizer> tokenizer;
};

TEST_P(Reference, EncodesAndDecodesTheCorpusAsHuggingFaceDoes) {
  std::ifstream in(TI_TOKENIZER_CORPUS);
  Json corpus = Json::parse(in);
  const Json &encodings = (*entry)["encodings"];
  ASSERT_EQ(corpus.size(), encodings.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    std::string text = corpus[i].get<std::string>();
    auto expected = encodings[i]["ids"].get<std::vector<int32_t>>();
    auto ids = tokenizer->encode(text);
    ASSERT_TRUE(ids.ok()) << "string " << i << ": " << ids.status().message();
    bool same = *ids == expected;
    std::string decoded, decodedSkip;
    if (same) {
      auto d = tokenizer->decode(*ids);
      auto s = tokenizer->decode(*ids, {.skipSpecialTokens = true});
      ASSERT_TRUE(d.ok() && s.ok());
      decoded = *d;
      decodedSkip = *s;
    }
    bool decodedSame = same && decoded == encodings[i]["text"].get<std::string>() &&
                       decodedSkip == encodings[i]["textSkip"].get<std::string>();
    if (!decodedSame && ++mismatches <= 12) {
      if (!same)
        ADD_FAILURE() << GetParam() << " string " << i << " \"" << printable(text) << "\"\n  ours:   " << idList(*ids)
                      << "\n  theirs: " << idList(expected);
      else
        ADD_FAILURE() << GetParam() << " string " << i << " \"" << printable(text) << "\" decodes as\n  ours:   \""
                      << printable(decoded) << "\" / \"" << printable(decodedSkip) << "\"\n  theirs: \""
                      << printable(encodings[i]["text"].get<std::string>()) << "\" / \""
                      << printable(encodings[i]["textSkip"].get<std::string>()) << "\"";
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << corpus.size() << " strings";
}

TEST_P(Reference, DecodesRandomIdSequencesAsHuggingFaceDoes) {
  int mismatches = 0;
  const Json &decodes = (*entry)["decodes"];
  ASSERT_GE(decodes.size(), 100u);
  for (std::size_t i = 0; i < decodes.size(); ++i) {
    auto ids = decodes[i]["ids"].get<std::vector<int32_t>>();
    auto d = tokenizer->decode(ids);
    auto s = tokenizer->decode(ids, {.skipSpecialTokens = true});
    ASSERT_TRUE(d.ok()) << d.status().message();
    ASSERT_TRUE(s.ok()) << s.status().message();
    std::string text = decodes[i]["text"], textSkip = decodes[i]["textSkip"];
    if ((*d != text || *s != textSkip) && ++mismatches <= 12)
      ADD_FAILURE() << GetParam() << " ids " << idList(ids) << "\n  ours:   \"" << printable(*d) << "\" / \""
                    << printable(*s) << "\"\n  theirs: \"" << printable(text) << "\" / \"" << printable(textSkip)
                    << "\"";
  }
  EXPECT_EQ(mismatches, 0) << "of " << decodes.size() << " sequences";
}

// Generation prints text token by token: the pieces must add up to the text
// (the corpus's ids and the random sequences, with and without specials).
TEST_P(Reference, StreamedPiecesAddUpToTheDecodedText) {
  int mismatches = 0;
  for (const char *list : {"encodings", "decodes"}) {
    for (const Json &item : (*entry)[list]) {
      auto ids = item["ids"].get<std::vector<int32_t>>();
      for (bool skip : {false, true}) {
        StreamDecoder stream(*tokenizer, {.skipSpecialTokens = skip});
        std::string text;
        for (int32_t id : ids) {
          auto piece = stream.push(id);
          ASSERT_TRUE(piece.ok()) << piece.status().message();
          text += *piece;
        }
        auto rest = stream.finish();
        ASSERT_TRUE(rest.ok()) << rest.status().message();
        text += *rest;
        std::string expected = item[skip ? "textSkip" : "text"];
        if (text != expected && ++mismatches <= 12)
          ADD_FAILURE() << GetParam() << " ids " << idList(ids) << (skip ? " (skipping specials)" : "")
                        << "\n  streamed: \"" << printable(text) << "\"\n  decoded:  \"" << printable(expected) << "\"";
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, Reference, ::testing::Values("llama3", "qwen3", "llama2", "llama2-metaspace"),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           std::string name = info.param;
                           for (char &c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

} // namespace
} // namespace ti
