//===- TokenSplitter.cpp - Cutting added tokens out of text ---------------===//
#include "TokenSplitter.h"

namespace ti::tok {

int32_t TokenSplitter::child(int32_t node, unsigned char byte) const {
  if (node == 0) return rootChildren[byte];
  auto it = children.find(static_cast<uint64_t>(node) << 8 | byte);
  return it == children.end() ? -1 : it->second;
}

void TokenSplitter::add(std::string_view token) {
  if (token.empty()) return;
  int32_t node = 0;
  for (char c : token) {
    auto byte = static_cast<unsigned char>(c);
    int32_t next = child(node, byte);
    if (next < 0) {
      next = static_cast<int32_t>(nodes.size());
      nodes.push_back({});
      if (node == 0) rootChildren[byte] = next;
      else children[static_cast<uint64_t>(node) << 8 | byte] = next;
    }
    node = next;
  }
  nodes[node].terminal = true;
}

std::vector<TokenSplitter::Piece> TokenSplitter::split(std::string_view text) const {
  std::vector<Piece> pieces;
  std::size_t start = 0, i = 0;
  while (i < text.size()) {
    std::size_t longest = 0;
    int32_t node = 0;
    for (std::size_t j = i; j < text.size(); ++j) {
      node = child(node, static_cast<unsigned char>(text[j]));
      if (node < 0) break;
      if (nodes[node].terminal) longest = j + 1 - i;
    }
    if (longest == 0) {
      ++i;
      continue;
    }
    if (i > start) pieces.push_back({text.substr(start, i - start), false});
    pieces.push_back({text.substr(i, longest), true});
    i += longest;
    start = i;
  }
  if (start < text.size()) pieces.push_back({text.substr(start), false});
  return pieces;
}

} // namespace ti::tok
