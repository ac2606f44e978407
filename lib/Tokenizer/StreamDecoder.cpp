//===- StreamDecoder.cpp - Text as tokens arrive, one piece at a time -----===//
#include "ti/Tokenizer/StreamDecoder.h"

#include "CleanUp.h"

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
  std::size_t cut = held.size();
  if (!all) {
    for (std::size_t back = 1; back <= 3 && back <= held.size(); ++back)
      if (held[held.size() - back] == ' ' && tok::mayStartCleanUp(std::string_view(held).substr(held.size() - back)))
        cut = held.size() - back;
    // Nor may a whole pattern straddle the cut: in " ' '" the held-back
    // " '" starts with the space that ends the first " ' " (the fuzzer's
    // find: the stream printed " '" where decode printed "'").
    for (bool moved = true; moved;) {
      moved = false;
      for (auto [pattern, replacement] : tok::kCleanUps)
        for (std::size_t at = cut > pattern.size() ? cut - pattern.size() + 1 : 0; at < cut; ++at)
          if (std::string_view(held).substr(at, pattern.size()) == pattern && at + pattern.size() > cut) {
            cut = at;
            moved = true;
          }
    }
    // Nor the space before a held " '": decode's clean-ups run one after
    // another, so "  ' s" becomes " 's" (" ' " -> "'") and then "'s" (the
    // fuzzer's second find: Llama 3's 70 spaces, " '", " substances").
    if (cut > 0 && cut < held.size() && held[cut - 1] == ' ' && std::string_view(held).substr(cut, 2) == " '")
      --cut;
  }
  std::string out = held.substr(0, cut);
  held.erase(0, cut);
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
  prefix = read;
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
