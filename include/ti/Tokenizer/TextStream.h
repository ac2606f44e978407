//===- TextStream.h - Generated ids to the text a reader sees ----*- C++ -*-===//
//
// What tirun --prompt, tirun chat and tirun serve show as tokens come: the
// stream decoder's whole characters and decode's clean-ups (StreamDecoder.h),
// then the stop strings, of which neither one nor the start of one that the
// next piece may complete is shown (StopStrings.h). Nothing after a stop
// string. Not thread-safe: one per generated text.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOKENIZER_TEXTSTREAM_H
#define TI_TOKENIZER_TEXTSTREAM_H

#include "ti/Tokenizer/StopStrings.h"
#include "ti/Tokenizer/StreamDecoder.h"

#include <span>
#include <string>
#include <vector>

namespace ti {

class TextStream {
public:
  /// Special tokens (an end of turn) are not shown.
  TextStream(const Tokenizer &tokenizer, std::vector<std::string> stops)
      : decoder(tokenizer, {.skipSpecialTokens = true}), stops(std::move(stops)) {}

  /// The text that `ids`, the next generated ones, let show now.
  StatusOr<std::string> push(std::span<const int32_t> ids);
  /// What is left at the end of the text.
  StatusOr<std::string> finish();
  /// Whether a stop string appeared: the text ended before it.
  bool stopped() const { return hit; }

private:
  StreamDecoder decoder;
  StopStrings stops;
  bool hit = false;
};

} // namespace ti

#endif // TI_TOKENIZER_TEXTSTREAM_H
