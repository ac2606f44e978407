//===- ChatReferenceTest.cpp - Our chat templates against @huggingface/jinja --===//
//
// test/tokenizer/chat-reference.mjs renders the Llama 3 and Qwen3 templates
// over 80 conversations with Hugging Face's Jinja; ours must give the same
// bytes. ctest runs the script first and passes its output in
// TI_CHAT_REFERENCE.
//
//===----------------------------------------------------------------------===//
#include "ti/Tokenizer/ChatTemplate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

namespace ti {
namespace {

using Json = nlohmann::ordered_json;

TEST(ChatReference, RendersAsHuggingFaceJinjaDoes) {
  const char *path = std::getenv("TI_CHAT_REFERENCE");
  if (!path) GTEST_SKIP() << "TI_CHAT_REFERENCE names no reference file (ctest sets it)";
  std::ifstream in(path);
  Json data = Json::parse(in, nullptr, false);
  ASSERT_FALSE(data.is_discarded());
  ASSERT_EQ(data["templates"].size(), 2u);
  for (const Json &t : data["templates"]) {
    auto chat = ChatTemplate::parse(t["source"].get<std::string>());
    ASSERT_TRUE(chat.ok()) << t["name"] << ": " << chat.status().message();
    ASSERT_GE(t["renders"].size(), 50u);
    int mismatches = 0;
    for (const Json &r : t["renders"]) {
      auto text = chat->renderJson(r["variables"].dump());
      ASSERT_TRUE(text.ok()) << t["name"] << ": " << text.status().message();
      if (*text != r["text"].get<std::string>() && ++mismatches <= 5)
        ADD_FAILURE() << t["name"] << " with " << r["variables"].dump() << "\n  ours:   " << Json(*text).dump()
                      << "\n  theirs: " << r["text"].dump();
    }
    EXPECT_EQ(mismatches, 0) << t["name"];
  }
}

} // namespace
} // namespace ti
