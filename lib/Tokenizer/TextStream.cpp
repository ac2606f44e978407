//===- TextStream.cpp - Generated ids to the text a reader sees -----------===//
#include "ti/Tokenizer/TextStream.h"

namespace ti {

StatusOr<std::string> TextStream::push(std::span<const int32_t> ids) {
  if (hit)
    return std::string();
  std::string text;
  for (int32_t id : ids) {
    auto piece = decoder.push(id);
    if (!piece)
      return piece.status();
    text += *piece;
  }
  return stops.feed(text, hit);
}

StatusOr<std::string> TextStream::finish() {
  if (hit)
    return std::string();
  auto rest = decoder.finish();
  if (!rest)
    return rest.status();
  std::string out = stops.feed(*rest, hit);
  if (!hit)
    out += stops.flush();
  return out;
}

} // namespace ti
