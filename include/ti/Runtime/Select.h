//===- Select.h - Greedy selection at the start of a step -------*- C++ -*-===//
//
// The SelectToken opcode's logic, shared word for word by the CPU executor and
// the CUDA worker so that both reach the same token and the same decision to
// stop (Launch.h gives the rules). Plain C++ that nvcc compiles for the device.
//
//===----------------------------------------------------------------------===//
#ifndef TI_RUNTIME_SELECT_H
#define TI_RUNTIME_SELECT_H

#include "ti/Plan/TaskRecord.h"
#include "ti/Runtime/Launch.h"

#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti {

/// The plan's facts that selection needs.
struct SelectParams {
  int32_t maxContext;
  int32_t eosCount;
  int32_t eos[plan::kMaxEndTokens];
};

/// The best of `n` candidates: the largest value, the lowest index on ties; a
/// NaN candidate wins (and is reported by the caller as an error).
TI_HOST_DEVICE inline plan::Candidate combineCandidates(const plan::Candidate *c, uint32_t n) {
  plan::Candidate best = c[0];
  for (uint32_t i = 1; i < n; ++i) {
    plan::Candidate x = c[i];
    bool bestNan = best.value != best.value, xNan = x.value != x.value;
    if (bestNan)
      break;
    if (xNan || x.value > best.value || (x.value == best.value && x.index < best.index))
      best = x;
  }
  return best;
}

/// A candidate and its slot, for combining candidates in parallel: folding
/// preferred() over the slots in any grouping and order gives the candidate
/// combineCandidates() returns (the first NaN by slot if there is one, else
/// the largest value, the lowest index on ties).
struct CandidateChoice {
  plan::Candidate candidate;
  uint32_t slot;
};
TI_HOST_DEVICE inline CandidateChoice preferred(const CandidateChoice &a, const CandidateChoice &b) {
  const bool aNan = a.candidate.value != a.candidate.value;
  const bool bNan = b.candidate.value != b.candidate.value;
  if (aNan || bNan) {
    if (aNan && bNan)
      return a.slot < b.slot ? a : b;
    return aNan ? a : b;
  }
  if (b.candidate.value > a.candidate.value ||
      (b.candidate.value == a.candidate.value && b.candidate.index < a.candidate.index))
    return b;
  return a;
}

/// selectToken() given the previous step's combined candidate `c` (unused at
/// step 0): the decisions that follow the combination.
TI_HOST_DEVICE inline int32_t selectCombined(int32_t s, const LaunchArgs &args,
                                             const SelectParams &params, plan::Candidate c,
                                             plan::StepState *state) {
  int32_t best = -1;
  if (s > 0) {
    if (c.value != c.value) {
      if (state)
        state->error = plan::kErrorNonFinite;
      return -1;
    }
    best = c.index;
    if (args.maxNew > 0 && s - 1 >= args.promptLen - 1) {
      int32_t generated = s - args.promptLen; // Tokens recorded before this one.
      if (generated < 0)
        generated = 0;
      if (state) {
        state->tokens[generated] = best;
        state->generated = generated + 1;
        state->lastToken = best;
      }
      for (int32_t i = 0; i < params.eosCount; ++i)
        if (best == params.eos[i]) {
          if (state)
            state->done = 1;
          return -1;
        }
      if (generated + 1 >= args.maxNew)
        return -1;
    }
  }
  if (s >= args.maxSteps || args.startPos + s >= params.maxContext)
    return -1;
  if (state)
    state->steps = s + 1;
  return s < args.promptLen ? args.prompt[s] : best;
}

/// What a worker does at the start of step `s`: returns the step's token, or
/// -1 when the launch stops. With `state` (the recording worker) it also
/// updates the StepState; every worker reaches the same result.
TI_HOST_DEVICE inline int32_t selectToken(int32_t s, const LaunchArgs &args,
                                          const SelectParams &params,
                                          const plan::Candidate *candidates, uint32_t count,
                                          plan::StepState *state) {
  plan::Candidate c{};
  if (s > 0)
    c = combineCandidates(candidates, count);
  return selectCombined(s, args, params, c, state);
}

} // namespace ti

#endif // TI_RUNTIME_SELECT_H
