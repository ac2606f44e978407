//===- ByteLevel.h - GPT-2's bytes-as-characters alphabet --------*- C++ -*-===//
//
// Byte-level BPE vocabularies spell every byte as one printable character:
// the printable Latin-1 bytes as themselves, the other 68 as U+0100 onwards,
// in byte order. Encoding maps a piece's UTF-8 bytes to those characters;
// decoding maps them back.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_BYTELEVEL_H
#define TI_LIB_TOKENIZER_BYTELEVEL_H

#include <optional>
#include <string>
#include <string_view>

namespace ti::tok::bytelevel {

/// The character that stands for byte `b`.
char32_t charOf(unsigned char b);
/// The byte that character `c` stands for, if it stands for one.
std::optional<unsigned char> byteOf(char32_t c);

/// `bytes` spelled in the byte-level alphabet (UTF-8 out).
std::string encode(std::string_view bytes);
/// Appends the bytes that the byte-level string `text` spells. A character
/// outside the alphabet appends a zero byte, as the reference does.
void decodeTo(std::string_view text, std::string &bytes);

} // namespace ti::tok::bytelevel

#endif // TI_LIB_TOKENIZER_BYTELEVEL_H
