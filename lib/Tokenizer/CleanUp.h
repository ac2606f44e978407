//===- CleanUp.h - clean_up_tokenization_spaces ------------------*- C++ -*-===//
//
// The text tokenizers' decode tidies when tokenizer_config.json asks for it:
// no space before . ? ! , and the English contractions, each pattern replaced
// in turn over the whole text, as the reference does. All patterns start
// with a space, and each replacement only removes spaces (CleanUpStream.h
// relies on both).
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_CLEANUP_H
#define TI_LIB_TOKENIZER_CLEANUP_H

#include <string>
#include <string_view>
#include <utility>

namespace ti::tok {

inline constexpr std::pair<std::string_view, std::string_view> kCleanUps[] = {
    {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
    {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};

/// Every occurrence of `from` in `text` (scanning on after each) replaced by `to`.
inline void replaceAll(std::string &text, std::string_view from, std::string_view to) {
  std::string out;
  std::size_t last = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, last)) {
    out.append(text, last, at - last);
    out += to;
    last = at + from.size();
  }
  if (last == 0) return;
  out.append(text, last);
  text = std::move(out);
}

inline void cleanUpSpaces(std::string &text) {
  for (auto [from, to] : kCleanUps) replaceAll(text, from, to);
}

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_CLEANUP_H
