//===- PromptTokensFuzzer.cpp - tirun's lists of integers -----------------===//
//
// The input is what `tirun --prompt-tokens` (and bench's --contexts) take:
// "1,2,3". A list that parses, joined again with commas, parses to the same
// ids; every id lies in the range asked for.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  constexpr int64_t lo = -5, hi = 128255;
  auto ids = ti::tirun::parseIntegerList(text, lo, hi, "--prompt-tokens", "a token id");
  if (!ids)
    return 0;
  std::string joined;
  for (int32_t id : *ids) {
    if (id < lo || id > hi)
      std::abort();
    joined += (joined.empty() ? "" : ",") + std::to_string(id);
  }
  auto again = ti::tirun::parseIntegerList(joined, lo, hi, "--prompt-tokens", "a token id");
  if (!again || *again != *ids)
    std::abort();
  return 0;
}
