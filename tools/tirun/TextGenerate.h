//===- TextGenerate.h - tirun --prompt: text in, text out --------*- C++ -*-===//
#ifndef TI_TOOLS_TIRUN_TEXTGENERATE_H
#define TI_TOOLS_TIRUN_TEXTGENERATE_H

#include "ti/Runtime/Executor.h"
#include "ti/Runtime/LoadedPlan.h"
#include "ti/Runtime/Sampler.h"
#include "ti/Tokenizer/Tokenizer.h"

#include <string>
#include <vector>

namespace ti::tirun {

struct TextRun {
  std::vector<int32_t> promptIds;   // the prompt, tokenized (and templated)
  int32_t maxNew = 16;
  std::vector<std::string> stops;   // --stop
  std::vector<int32_t> endTokens;   // beyond the plan's
  SamplingOptions sampling;
};

/// Generates from `run.promptIds`, printing the text to standard output as it
/// comes and one summary line to standard error. Exit status.
int runTextGeneration(const LoadedPlan &loaded, Executor &executor, const Tokenizer &tokenizer,
                      const TextRun &run);

/// The summary line's figures: "12 prompt tokens, 64 generated (stop: ...);
/// first token after ...; ... ms per token[, share of the floor]".
std::string turnSummary(const LoadedPlan &loaded, const Executor &executor, int32_t promptTokens,
                        int32_t generated, const char *stop, double firstTokenSeconds,
                        double decodeSeconds, int32_t decodeSteps, int32_t endPosition);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_TEXTGENERATE_H
