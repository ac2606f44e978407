//===- Bpe.cpp - tokenizer.json "model": byte-pair encoding ---------------===//
#include "Bpe.h"

#include "ti/Tokenizer/Utf8.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace ti::tok {

namespace {

uint64_t pairKey(int32_t left, int32_t right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}

// The word's symbols as a linked list; merging keeps the left node.
struct Node {
  int32_t symbol; // -1: a character no merge or vocabulary entry names
  std::size_t begin, end; // its bytes in the word
  int32_t prev, next;
  bool alive;
};

struct Candidate {
  int32_t rank;
  int32_t left, right; // node indices; left is also the position that breaks ties
  int32_t leftSymbol, rightSymbol;
  bool operator>(const Candidate &o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

} // namespace

StatusOr<Bpe> Bpe::parse(const Json &model, const std::string &path) {
  Bpe bpe;
  if (!model.is_object()) return fieldError(path, "expected an object");
  auto declared = optionalString(model, "type", path);
  if (!declared) return declared.status();
  if (!*declared && !model.contains("merges")) return fieldError(path, "only BPE models are supported");
  std::string type = declared->value_or("BPE");
  if (type != "BPE") return fieldError(fieldPath(path, "type"), "the model \"" + type + "\" is not supported (only BPE)");
  if (auto it = model.find("dropout"); it != model.end() && !it->is_null() && !(it->is_number() && it->get<double>() == 0))
    return fieldError(fieldPath(path, "dropout"), "BPE dropout is not supported");
  auto prefix = optionalString(model, "continuing_subword_prefix", path);
  if (!prefix) return prefix.status();
  if (*prefix && !(*prefix)->empty())
    return fieldError(fieldPath(path, "continuing_subword_prefix"), "a continuing-subword prefix is not supported");
  auto suffix = optionalString(model, "end_of_word_suffix", path);
  auto unk = optionalString(model, "unk_token", path);
  auto fallback = optionalBool(model, "byte_fallback", path);
  auto fuse = optionalBool(model, "fuse_unk", path);
  auto ignore = optionalBool(model, "ignore_merges", path);
  for (const Status *s : {&suffix.status(), &unk.status(), &fallback.status(), &fuse.status(), &ignore.status()})
    if (!s->ok()) return *s;
  bpe.endOfWord = suffix->value_or("");
  bpe.unkToken = *unk;
  bpe.byteFallback = fallback->value_or(false);
  bpe.fuseUnknown = fuse->value_or(false);
  bpe.ignoreMerges = ignore->value_or(false);

  const std::string vocabPath = fieldPath(path, "vocab");
  auto vocabIt = model.find("vocab");
  if (vocabIt == model.end() || !vocabIt->is_object()) return fieldError(vocabPath, "expected an object of token: id");
  bpe.vocab.reserve(vocabIt->size());
  for (auto it = vocabIt->begin(); it != vocabIt->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > kMaxTokenId)
      return fieldError(vocabPath, "the id of \"" + it.key() + "\" is not an id from 0 to 2^24-1");
    if (auto bad = utf8::firstInvalidByte(it.key())) return fieldError(vocabPath, "a token is not valid UTF-8");
    bpe.vocab[it.key()] = static_cast<int32_t>(it.value().get<int64_t>());
  }
  auto intern = [&](const std::string &text) {
    auto [it, added] = bpe.symbols.try_emplace(text, static_cast<int32_t>(bpe.symbolText.size()));
    if (added) {
      bpe.symbolText.push_back(text);
      auto v = bpe.vocab.find(text);
      bpe.symbolId.push_back(v == bpe.vocab.end() ? -1 : v->second);
    }
    return it->second;
  };
  for (const auto &[text, id] : bpe.vocab) intern(text);

  const std::string mergesPath = fieldPath(path, "merges");
  auto mergesIt = model.find("merges");
  if (mergesIt == model.end() || !mergesIt->is_array()) return fieldError(mergesPath, "expected a list");
  bpe.merges.reserve(mergesIt->size());
  for (std::size_t rank = 0; rank < mergesIt->size(); ++rank) {
    const Json &merge = (*mergesIt)[rank];
    std::string left, right;
    if (merge.is_string()) {
      // "a b": as the reference reads it, the first two space-separated parts.
      const std::string &text = merge.get_ref<const std::string &>();
      std::size_t space = text.find(' ');
      if (space == std::string::npos) return fieldError(indexPath(mergesPath, rank), "expected \"left right\"");
      left = text.substr(0, space);
      std::size_t next = text.find(' ', space + 1);
      right = text.substr(space + 1, next == std::string::npos ? std::string::npos : next - space - 1);
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      return fieldError(indexPath(mergesPath, rank), "expected \"left right\" or [left, right]");
    }
    if (utf8::firstInvalidByte(left) || utf8::firstInvalidByte(right))
      return fieldError(indexPath(mergesPath, rank), "not valid UTF-8");
    int32_t l = intern(left), r = intern(right), m = intern(left + right);
    bpe.merges[pairKey(l, r)] = {static_cast<int32_t>(rank), m}; // a repeated pair keeps its last rank
  }
  // Whether a word may split before U+2581 (see splitsAtMetaspace).
  const std::string meta = "\xE2\x96\x81";
  bpe.splitsAtMetaspace = !bpe.ignoreMerges && bpe.endOfWord.empty();
  for (const auto &[key, rankAndResult] : bpe.merges) {
    const std::string &left = bpe.symbolText[static_cast<int32_t>(key >> 32)];
    const std::string &right = bpe.symbolText[static_cast<int32_t>(key & 0xFFFFFFFFu)];
    bool leftEndsMeta = left.size() >= 3 && left.compare(left.size() - 3, 3, meta) == 0;
    if (right.compare(0, 3, meta) == 0 && !leftEndsMeta) {
      bpe.splitsAtMetaspace = false;
      break;
    }
  }
  bpe.asciiSymbol.assign(128, -1);
  for (int c = 0; c < 128; ++c)
    if (auto it = bpe.symbols.find(std::string(1, static_cast<char>(c))); it != bpe.symbols.end())
      bpe.asciiSymbol[c] = it->second;
  if (bpe.unkToken)
    if (auto it = bpe.vocab.find(*bpe.unkToken); it != bpe.vocab.end()) bpe.unkId = it->second;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = bpe.vocab.find(name);
    bpe.byteIds[b] = it == bpe.vocab.end() ? -1 : it->second;
  }
  return bpe;
}

void Bpe::setToken(const std::string &token, int32_t id) {
  vocab[token] = id;
  if (auto it = symbols.find(token); it != symbols.end()) symbolId[it->second] = id;
  if (unkToken && token == *unkToken) unkId = id;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (token == name) byteIds[b] = id;
  }
}

int32_t Bpe::symbolOf(std::string_view text) const {
  if (text.size() == 1 && static_cast<unsigned char>(text[0]) < 128) return asciiSymbol[static_cast<unsigned char>(text[0])];
  auto it = symbols.find(std::string(text));
  return it == symbols.end() ? -1 : it->second;
}

void Bpe::emitPiece(std::string_view piece, int32_t symbol, std::vector<int32_t> &ids) const {
  if (symbol >= 0 && symbolId[symbol] >= 0) {
    ids.push_back(symbolId[symbol]);
    return;
  }
  if (byteFallback) {
    bool all = true;
    for (std::size_t i = 0; all && i < piece.size(); ++i) all = byteIds[static_cast<unsigned char>(piece[i])] >= 0;
    if (all) {
      for (char b : piece) ids.push_back(byteIds[static_cast<unsigned char>(b)]);
      return;
    }
  }
  if (unkId) ids.push_back(*unkId); // with neither, the reference drops the piece
}

void Bpe::encodeWord(std::string_view word, std::vector<int32_t> &ids) const {
  if (word.empty()) return;
  if (ignoreMerges && endOfWord.empty()) {
    if (auto it = vocab.find(std::string(word)); it != vocab.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  std::vector<Node> nodes;
  for (std::size_t i = 0; i < word.size();) {
    std::size_t n = utf8::validSequenceLength(word, i);
    if (n == 0) n = 1; // not reachable: pieces are valid UTF-8
    nodes.push_back({0, i, i + n, static_cast<int32_t>(nodes.size()) - 1, static_cast<int32_t>(nodes.size()) + 1, true});
    i += n;
  }
  nodes.back().next = -1;
  std::string lastWithSuffix;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    std::string_view text = word.substr(nodes[k].begin, nodes[k].end - nodes[k].begin);
    if (k + 1 == nodes.size() && !endOfWord.empty()) {
      lastWithSuffix = std::string(text) + endOfWord;
      nodes[k].symbol = symbolOf(lastWithSuffix);
    } else {
      nodes[k].symbol = symbolOf(text);
    }
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int32_t left) {
    int32_t right = nodes[left].next;
    if (right < 0 || nodes[left].symbol < 0 || nodes[right].symbol < 0) return;
    auto it = merges.find(pairKey(nodes[left].symbol, nodes[right].symbol));
    if (it != merges.end()) queue.push({it->second.first, left, right, nodes[left].symbol, nodes[right].symbol});
  };
  for (int32_t k = 0; k + 1 < static_cast<int32_t>(nodes.size()); ++k) consider(k);
  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Node &left = nodes[c.left];
    if (!left.alive || left.next != c.right || left.symbol != c.leftSymbol || nodes[c.right].symbol != c.rightSymbol)
      continue;
    Node &right = nodes[c.right];
    left.symbol = merges.at(pairKey(c.leftSymbol, c.rightSymbol)).second;
    left.end = right.end;
    left.next = right.next;
    right.alive = false;
    if (left.next >= 0) nodes[left.next].prev = c.left;
    if (left.prev >= 0) consider(left.prev);
    consider(c.left);
  }
  for (int32_t k = 0; k >= 0; k = nodes[k].next) {
    std::string_view text = word.substr(nodes[k].begin, nodes[k].end - nodes[k].begin);
    if (nodes[k].next < 0 && !endOfWord.empty()) {
      std::string withSuffix = std::string(text) + endOfWord;
      emitPiece(withSuffix, nodes[k].symbol, ids);
    } else {
      emitPiece(text, nodes[k].symbol, ids);
    }
  }
}

void Bpe::encode(const std::vector<std::string> &words, std::vector<int32_t> &ids,
                 std::unordered_map<std::string, std::vector<int32_t>> *cache) const {
  std::size_t start = ids.size();
  std::vector<std::string> split;
  const std::vector<std::string> *pieces = &words;
  if (splitsAtMetaspace) {
    const std::string meta = "\xE2\x96\x81";
    for (const std::string &word : words) {
      std::size_t from = 0;
      for (std::size_t at = word.find(meta, 1); at != std::string::npos; at = word.find(meta, at + 3)) {
        bool afterMeta = at >= 3 && word.compare(at - 3, 3, meta) == 0;
        if (afterMeta) continue; // a run of U+2581 stays whole
        split.push_back(word.substr(from, at - from));
        from = at;
      }
      split.push_back(word.substr(from));
    }
    pieces = &split;
  }
  for (const std::string &piece : *pieces) {
    if (cache && piece.size() < 256) {
      auto it = cache->find(piece);
      if (it != cache->end()) {
        ids.insert(ids.end(), it->second.begin(), it->second.end());
        continue;
      }
      std::size_t from = ids.size();
      encodeWord(piece, ids);
      if (cache->size() < 100000) cache->emplace(piece, std::vector<int32_t>(ids.begin() + from, ids.end()));
      continue;
    }
    encodeWord(piece, ids);
  }
  if (fuseUnknown && unkId) {
    auto out = ids.begin() + start;
    for (auto in = ids.begin() + start; in != ids.end(); ++in)
      if (!(*in == *unkId && out != ids.begin() + start && *(out - 1) == *unkId)) *out++ = *in;
    ids.erase(out, ids.end());
  }
}

} // namespace ti::tok
