//===- Pass.h - A transformation of the task IR -----------------*- C++ -*-===//
//
// A pass has a kebab-case name (its command-line name: --print-after=NAME), one
// job, and reports problems as diagnostics at the graph op they concern. It never
// prints on its own. Statistics it records are printed by `tic --pass-stats`.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PASSES_PASS_H
#define TI_PASSES_PASS_H

#include "ti/IR/Diagnostics.h"
#include "ti/IR/TaskIR.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ti {

class Pass {
public:
  virtual ~Pass() = default;
  virtual llvm::StringRef name() const = 0;
  virtual llvm::StringRef description() const = 0;
  /// Returns false after reporting an error; the module is then unusable.
  [[nodiscard]] virtual bool run(tir::Module &module, DiagnosticEngine &diags) = 0;

  /// Counters (name, value) the last run recorded.
  const std::vector<std::pair<std::string, uint64_t>> &statistics() const { return stats; }

protected:
  void count(const std::string &counter, uint64_t n = 1);

private:
  std::vector<std::pair<std::string, uint64_t>> stats;
};

} // namespace ti

#endif // TI_PASSES_PASS_H
