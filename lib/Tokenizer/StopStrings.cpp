//===- StopStrings.cpp - Ending generated text at a stop string -----------===//
#include "ti/Tokenizer/StopStrings.h"

#include <algorithm>

namespace ti {

std::string StopStrings::feed(const std::string &piece, bool &hit) {
  pending += piece;
  std::size_t first = std::string::npos;
  for (const std::string &s : stops)
    if (!s.empty())
      first = std::min(first, pending.find(s));
  if (first != std::string::npos) {
    hit = true;
    std::string out = pending.substr(0, first);
    pending.clear();
    return out;
  }
  // Hold back the longest tail that begins some stop string.
  std::size_t held = 0;
  for (const std::string &s : stops)
    for (std::size_t n = std::min(s.empty() ? 0 : s.size() - 1, pending.size()); n > held; --n)
      if (pending.compare(pending.size() - n, n, s, 0, n) == 0) {
        held = n;
        break;
      }
  std::string out = pending.substr(0, pending.size() - held);
  pending.erase(0, pending.size() - held);
  return out;
}

std::string StopStrings::flush() {
  std::string out;
  out.swap(pending);
  return out;
}

} // namespace ti
