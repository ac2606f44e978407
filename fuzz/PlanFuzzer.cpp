//===- PlanFuzzer.cpp - Plan file bytes through the loader ----------------===//
//
// The input is a plan file's bytes: the identifier, the FlatBuffers verifier,
// the conversion and the semantic verifier run as `tirun` runs them. A plan
// that loads is printed as text (walking every field the loader accepted) and
// serialised again; reading those bytes back must give the same bytes.
//
//===----------------------------------------------------------------------===//
#include "ti/Plan/PlanFile.h"
#include "ti/Plan/PlanTextPrinter.h"
#include "ti/Plan/PlanVerifier.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ti::StatusOr<ti::plan::Plan> plan = ti::plan::readPlan(data, size);
  if (!plan || !ti::plan::verifyPlan(*plan).ok())
    return 0;
  std::ostringstream text;
  ti::plan::printPlanText(*plan, text);
  std::string bytes = ti::plan::serializePlan(*plan);
  ti::StatusOr<ti::plan::Plan> again = ti::plan::readPlan(bytes.data(), bytes.size());
  if (!again || ti::plan::serializePlan(*again) != bytes) {
    std::fprintf(stderr, "a plan that loaded does not survive a round trip: %s\n",
                 again ? "other bytes" : again.status().message().c_str());
    std::abort();
  }
  return 0;
}
