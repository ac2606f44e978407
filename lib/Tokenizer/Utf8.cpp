//===- Utf8.cpp - Checking, walking and repairing UTF-8 -------------------===//
#include "ti/Tokenizer/Utf8.h"

namespace ti::utf8 {

namespace {

// The well-formed sequences of Unicode's table 3-7: the lead byte fixes the
// length and the range the second byte may take; later bytes are 80..BF.
struct LeadInfo {
  std::size_t length; // 0: not a lead byte
  unsigned char secondLow, secondHigh;
};

LeadInfo leadInfo(unsigned char b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// How many bytes from `at` form a valid prefix of a sequence (the maximal
// subpart), and whether that prefix is the whole sequence.
std::size_t validPrefix(std::string_view text, std::size_t at, bool &complete) {
  LeadInfo lead = leadInfo(static_cast<unsigned char>(text[at]));
  complete = false;
  if (lead.length == 0) return 0;
  if (lead.length == 1) { complete = true; return 1; }
  std::size_t n = 1;
  for (; n < lead.length && at + n < text.size(); ++n) {
    auto b = static_cast<unsigned char>(text[at + n]);
    unsigned char low = n == 1 ? lead.secondLow : 0x80, high = n == 1 ? lead.secondHigh : 0xBF;
    if (b < low || b > high) return n;
  }
  complete = n == lead.length;
  return n;
}

} // namespace

std::size_t validSequenceLength(std::string_view text, std::size_t at) {
  bool complete = false;
  std::size_t n = validPrefix(text, at, complete);
  return complete ? n : 0;
}

std::optional<std::size_t> firstInvalidByte(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = validSequenceLength(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

char32_t decodeAt(std::string_view text, std::size_t at, std::size_t length) {
  auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(text[at + k])); };
  switch (length) {
  case 1: return b(0);
  case 2: return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  case 3: return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  default: return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
  }
}

void append(std::string &out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | c >> 6);
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | c >> 12);
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | c >> 18);
    out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string repair(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    bool complete = false;
    std::size_t n = validPrefix(bytes, i, complete);
    if (complete) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      i += n == 0 ? 1 : n;
    }
  }
  return out;
}

bool endsIncomplete(std::string_view bytes) {
  // A sequence is at most 4 bytes: only the last 3 can start an unfinished one.
  std::size_t from = bytes.size() > 3 ? bytes.size() - 3 : 0;
  for (std::size_t i = from; i < bytes.size(); ++i) {
    bool complete = false;
    std::size_t n = validPrefix(bytes, i, complete);
    if (n > 0 && !complete && i + n == bytes.size()) return true;
  }
  return false;
}

bool isJsWhitespace(char32_t c) {
  switch (c) {
  case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0: case 0x1680:
  case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
    return true;
  default:
    return c >= 0x2000 && c <= 0x200A;
  }
}

std::string_view trimJsWhitespaceStart(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t n = validSequenceLength(text, i);
    if (n == 0 || !isJsWhitespace(decodeAt(text, i, n))) break;
    i += n;
  }
  return text.substr(i);
}

std::string_view trimJsWhitespaceEnd(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    std::size_t n = validSequenceLength(text, start);
    if (n != end - start || !isJsWhitespace(decodeAt(text, start, n))) break;
    end = start;
  }
  return text.substr(0, end);
}

} // namespace ti::utf8
