//===- ModelPlan.h - A model compiled and packed, for tests -----*- C++ -*-===//
//
// Tests that run a real plan compile a graph (of models/, or a test's) with the built tic,
// pack random weights with the built tipack and load both, as a user would.
// One function for all of them; each test chooses the model, tic's options (a
// target file, an attention split) and the weights' seed.
//
// The tools and the graphs are the build's and the source tree's, unless the
// environment names other folders: TI_TOOLS_DIR (tic, tipack) and
// TI_SOURCE_DIR (the repository), as on a GPU machine given the built tools
// and a copy of the repository at other paths (scripts/device/common.sh).
//
//===----------------------------------------------------------------------===//
#ifndef TI_TEST_SUPPORT_MODELPLAN_H
#define TI_TEST_SUPPORT_MODELPLAN_H

#include "ti/Runtime/LoadedPlan.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace ti::test {

/// The folder of tic and tipack: $TI_TOOLS_DIR, else the build's.
std::string toolsDir();
/// The repository: $TI_SOURCE_DIR, else the source tree built from.
std::string sourceDir();

/// Compiles `graph` (a path in the source tree: "models/tiny.graph") with
/// `ticOptions` into `stem`.fb, packs random weights of `seed` into `stem`.bin
/// and loads them. Null on failure, with a test failure recorded
/// (ADD_FAILURE) that names the command or the load error.
std::shared_ptr<const LoadedPlan> compileModelPlan(const std::string &graph,
                                                   const std::filesystem::path &stem,
                                                   const std::string &ticOptions, uint64_t seed);

/// The same for models/tiny.graph.
inline std::shared_ptr<const LoadedPlan> compileTinyPlan(const std::filesystem::path &stem,
                                                         const std::string &ticOptions,
                                                         uint64_t seed) {
  return compileModelPlan("models/tiny.graph", stem, ticOptions, seed);
}

} // namespace ti::test

#endif // TI_TEST_SUPPORT_MODELPLAN_H
