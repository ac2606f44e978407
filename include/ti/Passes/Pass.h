//===- Pass.h - A transformation of the task IR -----------------*- C++ -*-===//
//
// A pass has a kebab-case name (its command-line name: --print-after=NAME), one
// job, and reports problems as diagnostics at the graph op they concern. It never
// prints on its own. Statistics it records are printed by `tic --pass-stats`.
// Its name and description are its line of Passes.def.
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

/// One value per line of Passes.def.
enum class PassId {
#define TI_PASS(Id, Name, Description) Id,
#include "ti/Passes/Passes.def"
};

class Pass {
public:
  explicit Pass(PassId id) : id(id) {}
  virtual ~Pass() = default;
  llvm::StringRef name() const;
  llvm::StringRef description() const;
  /// Returns false after reporting an error; the module is then unusable.
  [[nodiscard]] virtual bool run(tir::Module &module, DiagnosticEngine &diags) = 0;

  /// Counters (name, value) the last run recorded.
  const std::vector<std::pair<std::string, uint64_t>> &statistics() const { return stats; }

protected:
  void count(const std::string &counter, uint64_t n = 1);

private:
  PassId id;
  std::vector<std::pair<std::string, uint64_t>> stats;
};

} // namespace ti

#endif // TI_PASSES_PASS_H
