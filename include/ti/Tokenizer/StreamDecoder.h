//===- StreamDecoder.h - Text as tokens arrive, one piece at a time -*- C++ -*-===//
//
// Generation prints each token's text as soon as it is whole. Decoding a token
// alone is wrong in three ways: a byte-level token can end inside a UTF-8
// character, a SentencePiece decoder strips the space at the start of *its
// input* (not of the text), and the clean-up of spaces before punctuation
// looks across tokens. So the decoder keeps a window of ids: it decodes the
// window with and without the newest token and emits the difference once the
// text no longer ends in an unfinished character; the clean-up holds back the
// tail that later text could still change (CleanUpStream.h). The
// concatenation of all pieces equals Tokenizer::decode of all ids (tested on the corpus).
//
// Not thread-safe: one per stream. The Tokenizer must outlive it.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOKENIZER_STREAMDECODER_H
#define TI_TOKENIZER_STREAMDECODER_H

#include "ti/Tokenizer/Tokenizer.h"

namespace ti {

class StreamDecoder {
public:
  explicit StreamDecoder(const Tokenizer &tokenizer, DecodeOptions options = {});

  /// The text that `id` completes (often empty, sometimes several characters).
  StatusOr<std::string> push(int32_t id);
  /// Whatever is held back, unfinished characters repaired as U+FFFD.
  StatusOr<std::string> finish();

private:
  StatusOr<std::string> decodeWindow(std::size_t begin, std::size_t end) const;
  std::string cleanUp(std::string text, bool all);

  const Tokenizer *tokenizer;
  DecodeOptions options;
  bool cleanUpSpaces;
  std::vector<int32_t> ids;
  std::size_t prefix = 0, read = 0; // ids[prefix, read) were decoded and emitted
  std::string held;                 // text the clean-up waits on
};

} // namespace ti

#endif // TI_TOKENIZER_STREAMDECODER_H
