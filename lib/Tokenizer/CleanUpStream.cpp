//===- CleanUpStream.cpp - The space clean-up of text that arrives in pieces ===//
#include "CleanUpStream.h"

#include "CleanUp.h"

namespace ti::tok {

namespace {

/// Where replaceAll's scan of `text` for `pattern` stops replacing: an
/// occurrence that begins before it overlaps a replaced one and is skipped.
std::size_t endOfLastMatch(std::string_view text, std::string_view pattern) {
  std::size_t end = 0;
  for (std::size_t at = text.find(pattern); at != std::string_view::npos; at = text.find(pattern, end))
    end = at + pattern.size();
  return end;
}

/// Whether `rest`, and whatever follows it, may begin with `c` once cleaned
/// (at any stage): clean-ups only remove spaces, at most the last two of a run.
bool mayBeginWith(std::string_view rest, char c) {
  std::size_t first = rest.find_first_not_of(' ');
  if (first == std::string_view::npos) return rest.size() < 3 || c == ' '; // the rest is yet to come
  if (first >= 3) return c == ' ';
  return c == rest[first] || (first > 0 && c == ' ');
}

/// Whether cleaning `head` apart from `rest` (and what follows) gives what
/// cleaning the whole gives; if so, `head` is left cleaned.
bool cleanApart(std::string &head, std::string_view rest) {
  for (auto [pattern, replacement] : kCleanUps) {
    std::size_t scanned = endOfLastMatch(head, pattern);
    for (std::size_t len = 1; len < pattern.size() && len <= head.size(); ++len)
      if (head.size() - len >= scanned && std::string_view(head).ends_with(pattern.substr(0, len)) &&
          mayBeginWith(rest, pattern[len]))
        return false;
    replaceAll(head, pattern, replacement);
  }
  return true;
}

} // namespace

std::string takeSettled(std::string &held) {
  // The longest head that can be cleaned apart; the empty head always can.
  for (std::size_t cut = held.size(); cut > 0; --cut) {
    std::string head = held.substr(0, cut);
    if (cleanApart(head, std::string_view(held).substr(cut))) {
      held.erase(0, cut);
      return head;
    }
  }
  return std::string();
}

} // namespace ti::tok
