//===- ChatTemplate.h - A checkpoint's chat template, rendered ---*- C++ -*-===//
//
// tokenizer_config.json's chat_template turns a conversation into the text the
// model was trained on. It is Jinja; lib/Tokenizer/Jinja.h lists the subset
// this renders (what the Llama 3 and ChatML / Qwen templates use), with the
// semantics of Hugging Face's @huggingface/jinja, whose output the tests
// compare with byte for byte. A construct outside the subset is an error that
// names it and its line, when the template is parsed or when it runs.
//
// Immutable after parsing; render may run on several threads at once.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOKENIZER_CHATTEMPLATE_H
#define TI_TOKENIZER_CHATTEMPLATE_H

#include "ti/Support/Status.h"
#include "ti/Tokenizer/Tokenizer.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ti {

struct ChatMessage {
  std::string role; // system, user, assistant
  std::string content;
};

struct ChatOptions {
  /// End with the header that asks the model for the next reply.
  bool addGenerationPrompt = true;
  /// Qwen3's switch; unset leaves the template's default.
  std::optional<bool> enableThinking{};
};

class ChatTemplate {
public:
  static StatusOr<ChatTemplate> parse(std::string_view source);
  /// The template of `tokenizer`'s tokenizer_config.json; an error when it has none.
  static StatusOr<ChatTemplate> of(const Tokenizer &tokenizer);

  /// The conversation as text; bos_token and eos_token come from `config`.
  StatusOr<std::string> render(const std::vector<ChatMessage> &messages, const ChatOptions &options,
                               const TokenizerConfig &config) const;
  /// The same with every variable given as one JSON object ({"messages": [...],
  /// "add_generation_prompt": true, ...}): the tests' form.
  StatusOr<std::string> renderJson(std::string_view variables) const;

private:
  struct Parsed;
  std::shared_ptr<const Parsed> parsed;
};

} // namespace ti

#endif // TI_TOKENIZER_CHATTEMPLATE_H
