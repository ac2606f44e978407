//===- ModelPlan.cpp - A model compiled and packed, for tests -------------===//
#include "ModelPlan.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ti::test {

std::string toolsDir() {
  const char *dir = std::getenv("TI_TOOLS_DIR");
  return dir && *dir ? dir : TI_TOOLS_DIR;
}

std::string sourceDir() {
  const char *dir = std::getenv("TI_SOURCE_DIR");
  return dir && *dir ? dir : TI_SOURCE_DIR;
}

std::shared_ptr<const LoadedPlan> compileModelPlan(const std::string &graph,
                                                   const std::filesystem::path &stem,
                                                   const std::string &ticOptions, uint64_t seed) {
  const std::string plan = stem.string() + ".fb", weights = stem.string() + ".bin";
  const std::string tic =
      "'" + toolsDir() + "/tic' '" + sourceDir() + "/" + graph + "' " + ticOptions + " -o " + plan;
  const std::string tipack = "'" + toolsDir() + "/tipack' " + plan + " --random --seed " +
                             std::to_string(seed) + " -q -o " + weights;
  for (const std::string &command : {tic, tipack})
    if (std::system(command.c_str()) != 0) {
      ADD_FAILURE() << "failed: " << command;
      return nullptr;
    }
  auto lp = loadPlan(plan, weights);
  if (!lp.ok()) {
    ADD_FAILURE() << lp.status().message();
    return nullptr;
  }
  return *lp;
}

} // namespace ti::test
