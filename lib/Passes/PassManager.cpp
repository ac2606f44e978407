//===- PassManager.cpp - Runs a pipeline of passes ------------------------===//
#include "ti/Passes/PassManager.h"
#include "ti/Passes/Passes.h"

using namespace ti;

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
      diags.error(llvm::SMLoc(), "the task IR is invalid after pass '" + pass->name() + "'");
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

bool ti::verifyModule(const tir::Module &m, DiagnosticEngine &diags) {
  unsigned before = diags.errorCount();
  auto checkSlice = [&](const tir::Stage &s, const tir::Slice &slice, const char *role) {
    if (!slice.valid())
      return;
    if (slice.buffer < 0 || static_cast<size_t>(slice.buffer) >= m.buffers.size()) {
      diags.error(s.loc, "stage '" + s.name + "': " + role + " names no buffer");
      return;
    }
    const tir::Buffer &b = m.buffers[slice.buffer];
    // Buffers whose size is set by layout (0 until then) are not checked yet.
    if (b.bytes != 0 && (slice.offset + slice.length) * 4 > b.bytes &&
        b.kind != plan::BufferKind::KCache && b.kind != plan::BufferKind::VCache)
      diags.error(s.loc, "stage '" + s.name + "': " + role + " [" + llvm::Twine(slice.offset) +
                             ", +" + llvm::Twine(slice.length) + ") is outside buffer '" +
                             b.name + "'");
  };
  for (const tir::Stage &s : m.stages) {
    checkSlice(s, s.input, "input");
    checkSlice(s, s.input2, "input2");
    checkSlice(s, s.input3, "input3");
    checkSlice(s, s.residual, "residual");
    checkSlice(s, s.output, "output");
    checkSlice(s, s.output2, "output2");
    checkSlice(s, s.output3, "output3");
    uint64_t next = 0;
    bool attention = s.kind == tir::StageKind::AttentionScores ||
                     s.kind == tir::StageKind::AttentionValues ||
                     s.kind == tir::StageKind::Select;
    for (const tir::Task &t : s.tasks) {
      if (t.worker >= static_cast<int>(m.target.workers))
        diags.error(s.loc, "stage '" + s.name + "': a task is on worker " +
                               llvm::Twine(t.worker) + " of " + llvm::Twine(m.target.workers));
      if (attention)
        continue;
      if (t.rowBegin != next || t.rowEnd <= t.rowBegin)
        diags.error(s.loc, "stage '" + s.name + "': tasks do not tile its units in order");
      next = t.rowEnd;
    }
    if (!attention && !s.tasks.empty() && next != s.units)
      diags.error(s.loc, "stage '" + s.name + "': tasks cover " + llvm::Twine(next) + " of " +
                             llvm::Twine(s.units) + " units");
  }
  return diags.errorCount() == before;
}

std::vector<std::string> ti::defaultPipeline() {
  return {"lower-graph", "fuse-norms",  "fuse-epilogues", "split-attention", "fuse-ffn",
          "balance-rows", "place-barriers", "assign-workers", "layout"};
}

std::unique_ptr<Pass> ti::createPassByName(llvm::StringRef name) {
  if (name == "lower-graph") return createLowerGraphPass();
  if (name == "fuse-norms") return createFuseNormsPass();
  if (name == "fuse-epilogues") return createFuseEpiloguesPass();
  if (name == "split-attention") return createSplitAttentionPass();
  if (name == "fuse-ffn") return createFuseFfnPass();
  if (name == "balance-rows") return createBalanceRowsPass();
  if (name == "place-barriers") return createPlaceBarriersPass();
  if (name == "assign-workers") return createAssignWorkersPass();
  if (name == "layout") return createLayoutPass();
  return nullptr;
}
