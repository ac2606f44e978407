//===- ModelPlan.cpp - A model compiled and packed, for tests -------------===//
#include "ModelPlan.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace ti::test {

namespace {
/// The folder the environment variable `name` names, else `built`.
std::string folderFromEnvironment(const char *name, const char *built) {
  const char *dir = std::getenv(name);
  return dir && *dir ? dir : built;
}
} // namespace

std::string toolsDir() { return folderFromEnvironment("TI_TOOLS_DIR", TI_TOOLS_DIR); }

std::string sourceDir() { return folderFromEnvironment("TI_SOURCE_DIR", TI_SOURCE_DIR); }

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
