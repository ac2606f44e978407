//===- StreamDecoder.cpp - Text as tokens arrive, one piece at a time -----===//
#include "ti/Tokenizer/StreamDecoder.h"

#include "CleanUp.h"
#include "CleanUpStream.h"

#include <string_view>

namespace ti {

namespace {

bool endsWithReplacement(std::string_view text) {
  return text.size() >= 3 && text.substr(text.size() - 3) == "\xEF\xBF\xBD";
}

} // namespace

StreamDecoder::StreamDecoder(const Tokenizer &tokenizer, DecodeOptions options)
    : tokenizer(&tokenizer), options(options),
      cleanUpSpaces(options.cleanUpSpaces.value_or(tokenizer.config().cleanUpTokenizationSpaces)) {
  this->options.cleanUpSpaces = false;
}

StatusOr<std::string> StreamDecoder::decodeWindow(std::size_t begin, std::size_t end) const {
  return tokenizer->decode(std::span<const int32_t>(ids).subspan(begin, end - begin), options);
}

std::string StreamDecoder::cleanUp(std::string text, bool all) {
  if (!cleanUpSpaces) return text;
  held += text;
  if (!all) return tok::takeSettled(held);
  std::string out = std::move(held);
  held.clear();
  tok::cleanUpSpaces(out);
  return out;
}

StatusOr<std::string> StreamDecoder::push(int32_t id) {
  if (!tokenizer->idToToken(id)) return Status::error("token id " + std::to_string(id) + " is not in the vocabulary");
  ids.push_back(id);
  auto before = decodeWindow(prefix, read);
  if (!before) return before.status();
  auto after = decodeWindow(prefix, ids.size());
  if (!after) return after.status();
  if (after->size() <= before->size() || endsWithReplacement(*after)) return std::string();
  std::string piece = after->substr(before->size());
  // The next window begins with the ids just emitted, unless they decode to
  // nothing alone: a decoder that strips spaces at the start of its input
  // (Strip, Metaspace) would strip a different number there than in the
  // whole text (TokenizerFileFuzzer's find: Strip of two, and byte tokens
  // of one space each). A window whose text is not empty strips as the
  // whole text does, whatever follows.
  auto emitted = decodeWindow(read, ids.size());
  if (!emitted) return emitted.status();
  if (!emitted->empty()) prefix = read;
  read = ids.size();
  // Keep the window short: only ids[prefix, ...) are ever decoded again.
  if (prefix > 4096) {
    ids.erase(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(prefix));
    read -= prefix;
    prefix = 0;
  }
  return cleanUp(std::move(piece), false);
}

StatusOr<std::string> StreamDecoder::finish() {
  auto before = decodeWindow(prefix, read);
  if (!before) return before.status();
  auto after = decodeWindow(prefix, ids.size());
  if (!after) return after.status();
  std::string piece = after->size() > before->size() ? after->substr(before->size()) : std::string();
  prefix = read = ids.size();
  return cleanUp(std::move(piece), true);
}

} // namespace ti
