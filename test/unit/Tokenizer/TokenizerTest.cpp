//===- TokenizerTest.cpp - UTF-8, patterns, BPE and errors, in small --------===//
//
// The real files are compared with Hugging Face's implementation in
// ReferenceTest.cpp; these pin down the pieces on inputs small enough to read,
// and every way a file or a text can be refused.
//
//===----------------------------------------------------------------------===//
#include "ti/Tokenizer/StreamDecoder.h"
#include "ti/Tokenizer/Tokenizer.h"
#include "ti/Tokenizer/Utf8.h"

#include "../../../lib/Tokenizer/Regex.h"

#include <gtest/gtest.h>

namespace ti {
namespace {

TEST(Utf8, FindsTheFirstInvalidByte) {
  EXPECT_FALSE(utf8::firstInvalidByte("plain ascii, caf\xC3\xA9, \xF0\x9F\x98\x80"));
  EXPECT_EQ(utf8::firstInvalidByte("ab\xC0\x80"), 2u);          // overlong
  EXPECT_EQ(utf8::firstInvalidByte("\xED\xA0\x80"), 0u);        // a surrogate
  EXPECT_EQ(utf8::firstInvalidByte("x\xF4\x90\x80\x80"), 1u);   // past U+10FFFF
  EXPECT_EQ(utf8::firstInvalidByte("xy\xE2\x82"), 2u);          // cut short
  EXPECT_EQ(utf8::firstInvalidByte("\x80"), 0u);                // a lone continuation
}

TEST(Utf8, RepairsEachMaximalSubpartWithOneReplacement) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8::repair("a\xF0\x9F\x98"), "a" + fffd);          // one unfinished character
  EXPECT_EQ(utf8::repair("\xE0\x80"), fffd + fffd);               // E0 80 is no prefix of anything
  EXPECT_EQ(utf8::repair("\xF0\x9F\x98z"), fffd + "z");
  EXPECT_EQ(utf8::repair("ok\xC3\xA9"), "ok\xC3\xA9");
  EXPECT_TRUE(utf8::endsIncomplete("a\xF0\x9F"));
  EXPECT_FALSE(utf8::endsIncomplete("a\xF0\x9F\x98\x80"));
  EXPECT_FALSE(utf8::endsIncomplete("a\x80"));
}

TEST(Utf8, TrimsJavaScriptWhitespace) {
  EXPECT_EQ(utf8::trimJsWhitespaceStart("\xEF\xBB\xBF\t x"), "x"); // U+FEFF counts
  EXPECT_EQ(utf8::trimJsWhitespaceEnd("x\xC2\x85"), "x\xC2\x85");  // U+0085 does not
  EXPECT_EQ(utf8::trimJsWhitespaceEnd("x \xE3\x80\x80"), "x");
}

TEST(Pattern, TranslatesOnigurumaConstructsForPcre2) {
  auto p = tok::onigurumaToPcre2("(?i:'s|'t)|\\s+(?!\\S)|[^\\s\\p{L}]");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(*p, "(?:'[sS]|'[tT])|\\p{White_Space}+(?!\\P{White_Space})|[^\\p{White_Space}\\p{L}]");
  EXPECT_EQ(*tok::onigurumaToPcre2("a.b\\v\\u00e9"), "a[^\\n]b\\x{0B}\\x{00e9}");
}

TEST(Pattern, RefusesWhatCouldChangeMeaning) {
  for (const char *bad : {"\\w+", "^a", "(?i)a", "[[:alpha:]]", "[a&&b]", "(?i:[a-z])", "\\b", "(a"}) {
    auto p = tok::onigurumaToPcre2(bad);
    EXPECT_FALSE(p.ok()) << bad;
    if (!p.ok()) {
      EXPECT_NE(p.status().message().find("is not supported"), std::string::npos) << p.status().message();
    }
  }
}

TEST(Pattern, QuotesALiteralThatHoldsTheQuoteEnd) {
  std::string text = "x\\Ey\\";
  auto regex = tok::Regex::compile(tok::Regex::literal(text));
  ASSERT_TRUE(regex.ok()) << regex.status().message();
  std::string subject = "ax\\Ey\\b x\\E\\Ey";
  std::vector<std::size_t> starts;
  ASSERT_TRUE(regex->forEachMatch(subject, [&](std::size_t b, std::size_t) { starts.push_back(b); }).ok());
  EXPECT_EQ(starts, (std::vector<std::size_t>{1}));
}

TEST(Pattern, MatchesLikeJavaScriptMatchAll) {
  auto regex = tok::Regex::compile(*tok::onigurumaToPcre2("\\p{N}{1,3}| ?\\p{L}+|\\s+"));
  ASSERT_TRUE(regex.ok());
  std::vector<std::string> pieces;
  std::string text = "abc 12345 d\xC3\xA9";
  ASSERT_TRUE(regex->forEachMatch(text, [&](std::size_t b, std::size_t e) { pieces.push_back(text.substr(b, e - b)); }).ok());
  EXPECT_EQ(pieces, (std::vector<std::string>{"abc", " ", "123", "45", " d\xC3\xA9"}));
  // An empty match advances by one character, not one byte.
  auto empty = tok::Regex::compile("x*");
  std::vector<std::size_t> starts;
  ASSERT_TRUE(empty->forEachMatch("\xC3\xA9x", [&](std::size_t b, std::size_t) { starts.push_back(b); }).ok());
  EXPECT_EQ(starts, (std::vector<std::size_t>{0, 2, 3}));
}

// A byte-level tokenizer small enough to follow by hand: "ab" merges before
// "bc" (rank 0 before 1), and of two equal ranks the leftmost wins.
constexpr const char *kTiny = R"({
  "added_tokens": [{"id": 9, "content": "<eos>", "special": true, "lstrip": true, "rstrip": false,
                    "normalized": false, "single_word": false}],
  "normalizer": null,
  "pre_tokenizer": {"type": "Split", "pattern": {"Regex": " ?\\p{L}+|\\s+"}, "behavior": "Isolated", "invert": false},
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<eos>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {}},
  "decoder": {"type": "Replace", "pattern": {"String": "_"}, "content": " "},
  "model": {"type": "BPE", "unk_token": "?", "byte_fallback": false,
            "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "?": 6, " ": 7, "_": 8, "aa": 10},
            "merges": ["a b", "b c", "ab c", "a a"]}
})";

TEST(Tokenizer, MergesByRankAndAddsTheTemplate) {
  auto t = Tokenizer::fromJson(kTiny, "");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t->encode("abc"), (std::vector<int32_t>{9, 5}));
  EXPECT_EQ(*t->encode("abc", {.addSpecialTokens = false}), (std::vector<int32_t>{5}));
  EXPECT_EQ(*t->encode("bcab", {.addSpecialTokens = false}), (std::vector<int32_t>{4, 3})); // ab (rank 0), then bc
  EXPECT_EQ(*t->encode("aaa", {.addSpecialTokens = false}), (std::vector<int32_t>{10, 0}));  // the leftmost "a a"
  // "x" is not in the vocabulary: the unknown token.
  EXPECT_EQ(*t->encode("x", {.addSpecialTokens = false}), (std::vector<int32_t>{6}));
  // lstrip: the space before <eos> goes with it.
  EXPECT_EQ(*t->encode("ab   <eos>", {.addSpecialTokens = false}), (std::vector<int32_t>{3, 9}));
  EXPECT_EQ(*t->decode(std::vector<int32_t>{3, 8, 5, 9}), "ab abc<eos>");
  EXPECT_EQ(*t->decode(std::vector<int32_t>{3, 9}, {.skipSpecialTokens = true}), "ab");
  EXPECT_TRUE(t->isSpecial(9));
  EXPECT_EQ(t->tokenToId("abc"), 5);
  EXPECT_EQ(t->idLimit(), 11);
}

TEST(Tokenizer, RefusesInvalidUtf8AndUnknownIds) {
  auto t = Tokenizer::fromJson(kTiny, "");
  ASSERT_TRUE(t.ok());
  auto bad = t->encode("ab\xFFz");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "the text is not valid UTF-8 (byte 2)");
  auto unknown = t->decode(std::vector<int32_t>{3, 42});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "token id 42 is not in the vocabulary");
  StreamDecoder stream(*t);
  EXPECT_FALSE(stream.push(-1).ok());
}

std::string loadError(std::string json, std::string config = "") {
  auto t = Tokenizer::fromJson(json, config, "tok.json");
  return t.ok() ? "loaded" : t.status().message();
}

std::string withField(const std::string &field, const std::string &value) {
  std::string json = kTiny;
  std::size_t at = json.find("\"" + field + "\":");
  std::size_t start = json.find(':', at) + 1;
  // The field's value runs to the next top-level field (a line starting with two spaces and a quote).
  std::size_t end = json.find(",\n  \"", start);
  if (end == std::string::npos) end = json.rfind('}');
  return json.substr(0, start) + " " + value + json.substr(end);
}

TEST(Tokenizer, NamesTheFieldOfADamagedOrUnsupportedFile) {
  EXPECT_EQ(loadError("{\"model\": "), "tok.json: not valid JSON");
  EXPECT_EQ(loadError("[]"), "tok.json: : expected an object");
  EXPECT_EQ(loadError("{}"), "tok.json: model: missing");
  EXPECT_EQ(loadError(withField("normalizer", "{\"type\": \"Lowercase\"}")),
            "tok.json: normalizer.type: the normalizer \"Lowercase\" is not supported");
  EXPECT_EQ(loadError(withField("pre_tokenizer", "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\w+\"}}")),
            "tok.json: pre_tokenizer.pattern: regular expression '\\w+': the escape \\w at offset 0 is not supported");
  EXPECT_EQ(loadError(withField("pre_tokenizer", "{\"type\": \"Sequence\", \"pretokenizers\": [{\"kind\": 1}]}")),
            "tok.json: pre_tokenizer.pretokenizers[0]: has no \"type\"");
  EXPECT_EQ(loadError(withField("decoder", "{\"type\": \"CTC\"}")),
            "tok.json: decoder.type: the decoder \"CTC\" is not supported");
  EXPECT_EQ(loadError(withField("model", "{\"type\": \"Unigram\", \"vocab\": []}")),
            "tok.json: model.type: the model \"Unigram\" is not supported (only BPE)");
  EXPECT_EQ(loadError(withField("model", "{\"type\": \"BPE\", \"vocab\": {\"a\": -1}, \"merges\": []}")),
            "tok.json: model.vocab: the id of \"a\" is not an id from 0 to 2^24-1");
  EXPECT_EQ(loadError(withField("model", "{\"type\": \"BPE\", \"vocab\": {\"a\": 2147483647}, \"merges\": []}")),
            "tok.json: model.vocab: the id of \"a\" is not an id from 0 to 2^24-1");
  EXPECT_EQ(loadError(withField("model", "{\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"ab\"]}")),
            "tok.json: model.merges[0]: expected \"left right\"");
  EXPECT_EQ(loadError(withField("post_processor", "{\"type\": \"TemplateProcessing\", \"single\": "
                                                  "[{\"SpecialToken\": {\"id\": \"<bos>\"}}]}")),
            "tok.json: post_processor: the special token \"<bos>\" is not in the vocabulary");
  EXPECT_EQ(loadError(withField("model", "{\"type\": 5, \"vocab\": {}, \"merges\": []}")),
            "tok.json: model.type: expected a string");
  EXPECT_EQ(loadError(kTiny, "{\"chat_template\": [{\"name\": 7, \"template\": \"x\"}]}"), "loaded");
  EXPECT_EQ(loadError(kTiny, "{\"clean_up_tokenization_spaces\": 1}"),
            "tok.json: tokenizer_config.json: clean_up_tokenization_spaces: expected true or false");
  EXPECT_EQ(loadError(kTiny, "{"), "tok.json: tokenizer_config.json: not valid JSON");
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"type\": \"Sequence\", \"normalizers\": [";
  EXPECT_EQ(loadError(withField("normalizer", deep)), "tok.json: nested deeper than 64 levels");
}

/// What a StreamDecoder prints for `ids`, piece by piece, then its tail.
std::string streamedText(const Tokenizer &t, const std::vector<int32_t> &ids) {
  StreamDecoder stream(t);
  std::string streamed;
  for (int32_t id : ids)
    streamed += *stream.push(id);
  return streamed + *stream.finish();
}

// The fuzzer's find (TokenizerEncodeFuzzer, Llama 3's ids 364 364 64662:
// " '" " '" " F..."): the stream held back the second " '" and cleaned the
// first alone, though " ' " spans both; decode removes that space.
TEST(Tokenizer, TheStreamCleansUpAcrossTokensAsDecodeDoes) {
  const std::string json = R"({"added_tokens": [], "normalizer": null, "pre_tokenizer": null,
    "post_processor": null, "decoder": {"type": "Replace", "pattern": {"String": "_"}, "content": " "},
    "model": {"type": "BPE", "vocab": {"_'": 0, "_x": 1, "_.": 2, "s": 3, "__": 4, "_s": 5}, "merges": []}})";
  auto t = Tokenizer::fromJson(json, R"({"clean_up_tokenization_spaces": true})");
  ASSERT_TRUE(t.ok()) << t.status().message();
  for (const std::vector<int32_t> &ids : std::vector<std::vector<int32_t>>{
           {0, 0, 1, 1}, {0, 0, 0, 1}, {1, 0, 3}, {0, 2, 0, 1}, {1, 2, 2, 0, 0, 1},
           // Clean-ups in turn: "  ' s" -> " 's" -> "'s" (the fuzzer's second find, with
           // Llama 3's 70 spaces, " '" and " substances").
           {1, 4, 0, 5}, {4, 4, 0, 5, 1}}) {
    auto whole = t->decode(ids);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(streamedText(*t, ids), *whole) << "ids " << ::testing::PrintToString(ids);
  }
}

// TokenizerFileFuzzer's find: a decoder that strips up to two spaces at the
// start of its input, and tokens of one space each (byte fallback). A window
// that began with a lone space token decoded to nothing, so the stream lost a
// space that the whole text keeps.
TEST(Tokenizer, TheStreamStripsOnlyWhatTheWholeTextStrips) {
  const std::string json = R"({"added_tokens": [], "normalizer": null, "pre_tokenizer": null,
    "post_processor": null, "decoder": {"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
      {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 2, "stop": 0}]},
    "model": {"type": "BPE", "byte_fallback": true, "vocab": {"<0x20>": 0, "a": 1, "\u2581b": 2}, "merges": []}})";
  auto t = Tokenizer::fromJson(json, "{}");
  ASSERT_TRUE(t.ok()) << t.status().message();
  for (const std::vector<int32_t> &ids : std::vector<std::vector<int32_t>>{
           {1, 0, 0, 1}, {1, 0, 0, 0, 1, 0, 0}, {0, 0, 0, 1}, {0, 1, 0, 2, 0, 0, 2}, {1, 2, 0, 0, 0, 0, 2}}) {
    auto whole = t->decode(ids);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(streamedText(*t, ids), *whole) << "ids " << ::testing::PrintToString(ids);
  }
}

// Every text of up to six characters from the patterns' alphabet, one
// character a token: the stream must print what decode prints of the whole.
// Six is enough for each cascade (" n ' t" -> " n't" -> "n't", "  ' s" ->
// " 's" -> "'s") to appear with something before it; the fuzzer found three
// cases that rules of thumb missed before this test existed.
TEST(Tokenizer, TheStreamCleansUpEveryShortTextAsDecodeDoes) {
  const std::string json = R"({"added_tokens": [], "normalizer": null, "pre_tokenizer": null,
    "post_processor": null, "decoder": {"type": "Replace", "pattern": {"String": "_"}, "content": " "},
    "model": {"type": "BPE", "vocab": {"_": 0, "'": 1, "n": 2, "t": 3, "s": 4, ".": 5, "x": 6, "v": 7, "e": 8},
    "merges": []}})";
  auto t = Tokenizer::fromJson(json, R"({"clean_up_tokenization_spaces": true})");
  ASSERT_TRUE(t.ok()) << t.status().message();
  const int kinds = 9, longest = 6;
  int failures = 0;
  std::vector<int32_t> ids;
  for (int length = 1; length <= longest; ++length) {
    ids.assign(length, 0);
    for (bool more = true; more && failures < 5;) {
      auto whole = t->decode(ids);
      ASSERT_TRUE(whole.ok());
      const std::string streamed = streamedText(*t, ids);
      if (streamed != *whole) {
        ++failures;
        ADD_FAILURE() << "ids " << ::testing::PrintToString(ids) << ": streamed \"" << streamed << "\", decoded \""
                      << *whole << "\"";
      }
      more = false;
      for (int at = length - 1; at >= 0 && !more; --at)
        if (++ids[at] < kinds) more = true;
        else ids[at] = 0;
    }
  }
}

TEST(Tokenizer, ReportsAMissingFile) {
  auto t = Tokenizer::fromPath("/nonexistent/dir");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "/nonexistent/dir: not a regular file");
}

TEST(Tokenizer, ReadsTheConfigBesideTheFile) {
  auto t = Tokenizer::fromJson(kTiny, R"({"eos_token": {"content": "<eos>"}, "bos_token": "<eos>",
      "chat_template": "{{ messages }}", "clean_up_tokenization_spaces": false})");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->config().eosToken, "<eos>");
  EXPECT_EQ(t->config().bosToken, "<eos>");
  EXPECT_EQ(t->config().chatTemplate, "{{ messages }}");
  EXPECT_FALSE(t->config().cleanUpTokenizationSpaces);
}

} // namespace
} // namespace ti
