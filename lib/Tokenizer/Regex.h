//===- Regex.h - The tokenizer files' regular expressions on PCRE2 -*- C++ -*-===//
//
// tokenizer.json patterns are written for Oniguruma (the Rust tokenizers'
// engine). Hugging Face's JavaScript tokenizers translate them for JavaScript;
// we translate the same constructs for PCRE2, to the same meaning:
//   \s \S      White_Space property (not PCRE2's own \s)
//   \d \D      \p{Nd}
//   (?i:...)   ASCII case folding of the letters inside (no Unicode folding)
//   .          any character but \n
//   \v \uXXXX  the character (PCRE2 reads \v as a class)
// Anything else that could change meaning between the engines (\w, \b,
// anchors, POSIX brackets, class intersections, case folding inside a class)
// is refused with the construct named, rather than guessed.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_REGEX_H
#define TI_LIB_TOKENIZER_REGEX_H

#include "ti/Support/Status.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace ti::tok {

/// The PCRE2 form of an Oniguruma pattern, or why there is none.
StatusOr<std::string> onigurumaToPcre2(std::string_view pattern);

/// A compiled pattern. Thread-safe: matching allocates its own match data.
class Regex {
public:
  /// `pcre2Pattern` is PCRE2 syntax (see onigurumaToPcre2 and literal()).
  static StatusOr<Regex> compile(const std::string &pcre2Pattern);
  /// A pattern that matches `text` literally.
  static std::string literal(std::string_view text);

  /// Calls `onMatch(begin, end)` for each match in `text` (valid UTF-8), left to
  /// right, as JavaScript's matchAll does: after an empty match the search
  /// resumes one character further on.
  Status forEachMatch(std::string_view text,
                      const std::function<void(std::size_t, std::size_t)> &onMatch) const;
  /// `text` with every match replaced by `content`.
  StatusOr<std::string> replaceAll(std::string_view text, std::string_view content) const;

private:
  struct Code;
  std::shared_ptr<const Code> code;
};

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_REGEX_H
