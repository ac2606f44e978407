//===- Chat.h - tirun chat: a conversation on the terminal -------*- C++ -*-===//
#ifndef TI_TOOLS_TIRUN_CHAT_H
#define TI_TOOLS_TIRUN_CHAT_H

#include "ti/Tokenizer/ChatTemplate.h"
#include "ti/Tokenizer/Tokenizer.h"
#include "ti/Weights/WeightsFile.h"

#include <string>
#include <vector>

namespace ti::tirun {

/// tirun chat plan.fb weights.bin [options]. argv[0] is "chat".
int runChat(int argc, char **argv);

/// The conversation's text for the model: the checkpoint's template over
/// `messages`, ending with the header that asks for the reply, tokenized
/// without the tokenizer's own special tokens (the template has them).
StatusOr<std::vector<int32_t>> renderConversation(const ChatTemplate &chat, const Tokenizer &tokenizer,
                                                  const std::vector<ChatMessage> &messages);

/// End-of-turn tokens a chat template ends replies with (<|eot_id|>,
/// <|im_end|>, <|end|>, </s>), those the tokenizer has.
std::vector<int32_t> endOfTurnTokens(const Tokenizer &tokenizer);

/// The tokens that end a chat's reply besides the plan's: extraEndTokens
/// (TextSupport.h), then endOfTurnTokens (tirun chat, tirun serve).
std::vector<int32_t> chatEndTokens(const Tokenizer &tokenizer, const WeightsFile *weights);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_CHAT_H
