//===- ByteLevel.cpp - GPT-2's bytes-as-characters alphabet ---------------===//
#include "ByteLevel.h"

#include "ti/Tokenizer/Utf8.h"

#include <array>

namespace ti::tok::bytelevel {

namespace {

bool printable(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Tables {
  std::array<char32_t, 256> charOf{};
  std::array<std::string, 256> utf8Of;
  std::array<int, 0x200> byteOf{}; // every character of the alphabet is below U+0200
  Tables() {
    byteOf.fill(-1);
    char32_t next = 0x100;
    for (unsigned b = 0; b < 256; ++b) {
      charOf[b] = printable(b) ? b : next++;
      utf8::append(utf8Of[b], charOf[b]);
      byteOf[charOf[b]] = static_cast<int>(b);
    }
  }
};

const Tables &tables() {
  static const Tables t;
  return t;
}

} // namespace

char32_t charOf(unsigned char b) { return tables().charOf[b]; }

std::optional<unsigned char> byteOf(char32_t c) {
  if (c >= tables().byteOf.size() || tables().byteOf[c] < 0) return std::nullopt;
  return static_cast<unsigned char>(tables().byteOf[c]);
}

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char b : bytes) out += tables().utf8Of[static_cast<unsigned char>(b)];
  return out;
}

void decodeTo(std::string_view text, std::string &bytes) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = utf8::validSequenceLength(text, i);
    if (n == 0) { // not reachable from a vocabulary read as JSON: keep the reference's zero
      bytes += '\0';
      ++i;
      continue;
    }
    auto b = byteOf(utf8::decodeAt(text, i, n));
    bytes += b ? static_cast<char>(*b) : '\0';
    i += n;
  }
}

} // namespace ti::tok::bytelevel
