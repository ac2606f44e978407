//===- PassManager.cpp - Runs a pipeline of passes ------------------------===//
#include "ti/Passes/PassManager.h"
#include "ti/IR/TaskIRVerifier.h"
#include "ti/Passes/Passes.h"

using namespace ti;

namespace {
/// Each pass's line of Passes.def, indexed by its PassId.
struct PassInfo {
  const char *name, *description;
};
constexpr PassInfo kPasses[] = {
#define TI_PASS(Id, Name, Description) {Name, Description},
#include "ti/Passes/Passes.def"
};
} // namespace

llvm::StringRef Pass::name() const { return kPasses[static_cast<unsigned>(id)].name; }

llvm::StringRef Pass::description() const {
  return kPasses[static_cast<unsigned>(id)].description;
}

void Pass::count(const std::string &counter, uint64_t n) {
  for (auto &[name, value] : stats)
    if (name == counter) {
      value += n;
      return;
    }
  stats.emplace_back(counter, n);
}

bool PassManager::addByNames(const std::vector<std::string> &names, std::string &error) {
  for (const std::string &name : names) {
    auto pass = createPassByName(name);
    if (!pass) {
      std::string known;
      for (const std::string &n : defaultPipeline())
        known += (known.empty() ? "" : ", ") + n;
      error = "unknown pass '" + name + "' (passes: " + known + ")";
      return false;
    }
    add(std::move(pass));
  }
  return true;
}

bool PassManager::run(tir::Module &module, DiagnosticEngine &diags) {
  for (auto &pass : passes) {
    if (!pass->run(module, diags))
      return false;
    if (printAfterAll || printAfterNames.count(pass->name())) {
      *printOS << "// ----- task IR after " << pass->name() << " -----\n";
      tir::printModule(module, *printOS);
    }
    if (verifyEach && !verifyModule(module, diags)) {
      diags.error(module.graph ? module.graph->loc : llvm::SMLoc(),
                  "the task IR is invalid after pass '" + pass->name() + "'");
      return false;
    }
  }
  return true;
}

void PassManager::printStatistics(llvm::raw_ostream &os) const {
  for (const auto &pass : passes)
    for (const auto &[name, value] : pass->statistics())
      os << pass->name() << "." << name << " " << value << "\n";
}

std::vector<std::string> ti::defaultPipeline() {
  std::vector<std::string> names;
  for (const PassInfo &p : kPasses)
    names.push_back(p.name);
  return names;
}

std::unique_ptr<Pass> ti::createPassByName(llvm::StringRef name) {
#define TI_PASS(Id, Name, Description)                                                             \
  if (name == Name)                                                                                \
    return create##Id##Pass();
#include "ti/Passes/Passes.def"
  return nullptr;
}
