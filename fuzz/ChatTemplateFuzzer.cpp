//===- ChatTemplateFuzzer.cpp - Jinja templates through the renderer ------===//
//
// The input is a chat template, "\n--\n", and the variables as one JSON
// object. The template is parsed and rendered with those variables, and with
// a fixed conversation. Properties: no crash, no hang (the renderer's step
// and output limits bound every template), no sanitizer report.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ti/Tokenizer/ChatTemplate.h"
#include "ti/Tokenizer/Tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view rest(reinterpret_cast<const char *>(data), size);
  std::string_view source = ti::fuzz::splitField(rest);
  auto chat = ti::ChatTemplate::parse(source);
  if (!chat)
    return 0;
  (void)chat->renderJson(rest);
  static const std::vector<ti::ChatMessage> conversation = {
      {"system", "Be brief."}, {"user", "Hello"}, {"assistant", "Hi."}, {"user", "2+2?"}};
  ti::TokenizerConfig config;
  config.bosToken = "<s>";
  config.eosToken = "</s>";
  (void)chat->render(conversation, {.addGenerationPrompt = true}, config);
  return 0;
}
