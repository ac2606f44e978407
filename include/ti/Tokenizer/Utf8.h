//===- Utf8.h - Checking, walking and repairing UTF-8 -----------*- C++ -*-===//
//
// Text enters the tokenizer as bytes. Encoding needs valid UTF-8 (an invalid
// prompt is an error, reported at its byte offset); decoding produces bytes that
// need not be valid (a byte-level token can end inside a character), and turns
// each maximal invalid subpart into U+FFFD, as the WHATWG decoder (and so
// Hugging Face's JavaScript tokenizers) does. No Unicode tables here.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOKENIZER_UTF8_H
#define TI_TOKENIZER_UTF8_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ti::utf8 {

/// The byte offset of the first byte that does not start or continue a valid
/// UTF-8 sequence (overlong forms, surrogates and values past U+10FFFF
/// included), or nothing when all of `text` is valid.
std::optional<std::size_t> firstInvalidByte(std::string_view text);

/// The length of the valid sequence starting at `text[at]`, or 0 when none does.
std::size_t validSequenceLength(std::string_view text, std::size_t at);

/// Decodes the valid sequence of length `length` at `text[at]`.
char32_t decodeAt(std::string_view text, std::size_t at, std::size_t length);

/// Appends the UTF-8 form of `codePoint` (which must be a scalar value).
void append(std::string &out, char32_t codePoint);

/// `bytes` with every maximal invalid subpart replaced by U+FFFD.
std::string repair(std::string_view bytes);

/// Whether `bytes` ends inside a sequence that more bytes could complete.
bool endsIncomplete(std::string_view bytes);

/// JavaScript's trimStart/trimEnd whitespace (WhiteSpace and LineTerminator:
/// it includes U+FEFF and leaves out U+0085). The added tokens' lstrip and
/// rstrip follow it, as the reference implementation does.
bool isJsWhitespace(char32_t c);
std::string_view trimJsWhitespaceStart(std::string_view text);
std::string_view trimJsWhitespaceEnd(std::string_view text);

} // namespace ti::utf8

#endif // TI_TOKENIZER_UTF8_H
