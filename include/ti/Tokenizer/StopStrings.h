//===- StopStrings.h - Ending generated text at a stop string ----*- C++ -*-===//
//
// Text is printed as it comes, but never a stop string, nor the start of one
// that the next piece may complete: that tail is held back until it cannot
// be, or until the end. Stop strings are valid UTF-8, so a held tail always
// starts on a character boundary.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOKENIZER_STOPSTRINGS_H
#define TI_TOKENIZER_STOPSTRINGS_H

#include <string>
#include <vector>

namespace ti {

class StopStrings {
public:
  explicit StopStrings(std::vector<std::string> stops) : stops(std::move(stops)) {}
  /// The text that may be printed now; `hit` becomes true when a stop string
  /// appeared (the text before it is returned, nothing after).
  std::string feed(const std::string &piece, bool &hit);
  /// What was held back, at the end of the text.
  std::string flush();

private:
  std::vector<std::string> stops;
  std::string pending;
};

} // namespace ti

#endif // TI_TOKENIZER_STOPSTRINGS_H
