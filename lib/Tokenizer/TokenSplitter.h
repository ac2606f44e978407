//===- TokenSplitter.h - Cutting added tokens out of text --------*- C++ -*-===//
//
// Added tokens (<|eot_id|>, <s>, ...) are found before anything else: at each
// position, the longest token that starts there is cut out, and the search
// resumes after it. The stretches between tokens are the text the normalizer
// and the model see. A trie over the tokens' bytes: at a character boundary,
// a match of valid UTF-8 ends on one too, so bytes are as good as characters.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_TOKENSPLITTER_H
#define TI_LIB_TOKENIZER_TOKENSPLITTER_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ti::tok {

class TokenSplitter {
public:
  struct Piece {
    std::string_view text;
    bool isToken; // one of the tokens, matched whole
  };

  void add(std::string_view token);
  bool empty() const { return nodes.size() == 1; }
  /// `text` cut into stretches and tokens, in order, with no empty stretches.
  std::vector<Piece> split(std::string_view text) const;

private:
  struct Node {
    bool terminal = false;
  };
  int32_t child(int32_t node, unsigned char byte) const;

  std::vector<Node> nodes{Node{}};
  std::array<int32_t, 256> rootChildren = filled();
  std::unordered_map<uint64_t, int32_t> children; // (node << 8 | byte) -> node
  static std::array<int32_t, 256> filled() {
    std::array<int32_t, 256> a;
    a.fill(-1);
    return a;
  }
};

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_TOKENSPLITTER_H
