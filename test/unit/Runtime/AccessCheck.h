//===- AccessCheck.h - Does each task touch only what it declares? -*- C++ -*-===//
//
// The plan verifier reasons about TaskAccesses, the access model; the CPU
// executor runs TaskRecord.h's arithmetic. This checks that the two agree for
// one plan: it runs a step's tasks one at a time (CpuOps.h) on the real arena
// and weights, and again on copies in which every byte the task does not
// declare (TaskAccesses, both spaces) is poisoned (0xFF: NaN as f32 and bf16,
// -1 as an id). A task then
//   - wrote only what it declares: every undeclared byte is still poison;
//   - read only what it declares: its declared writes equal the real run's
//     (a poisoned input would have made them NaN or otherwise different).
// A K/V cache access is taken as the whole cache (the model names rows
// symbolically). Under AddressSanitizer, a read or write outside the arena or
// the weights is reported as well: both are exact-size heap copies here. A
// task that reads an undeclared index (a token id, say) may instead crash on
// the poison; that fails the test too, less politely. Planted defects (a
// gemv's in[0] left poisoned; an embed's token slot) were caught: the first
// as an undeclared read, the second as a crash.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TEST_UNIT_RUNTIME_ACCESSCHECK_H
#define TI_TEST_UNIT_RUNTIME_ACCESSCHECK_H

#include "ti/Plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ti::test {

/// Runs steps at positions 0 and `plan.attention.splitContext` (short and
/// long mode) with `weights` (the plan's weights data, weightsBytes long) and
/// returns the first task that touched what it does not declare, described,
/// or an empty string. The plan must have passed the verifier.
std::string checkTaskAccesses(const plan::Plan &plan, const std::vector<uint8_t> &weights);

} // namespace ti::test

#endif // TI_TEST_UNIT_RUNTIME_ACCESSCHECK_H
