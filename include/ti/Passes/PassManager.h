//===- PassManager.h - Runs a pipeline of passes ----------------*- C++ -*-===//
//
// Runs passes in order; after each one it can print the module
// (--print-after=NAME, --print-after-all) and check it with verifyModule
// (ti/IR/TaskIRVerifier.h; --verify-each, on by default in debug builds).
// Stops at the first pass that fails.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PASSES_PASSMANAGER_H
#define TI_PASSES_PASSMANAGER_H

#include "ti/Passes/Pass.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

namespace ti {

class PassManager {
public:
  void add(std::unique_ptr<Pass> pass) { passes.push_back(std::move(pass)); }
  /// Adds the passes named in `names`; reports an unknown one and returns false.
  [[nodiscard]] bool addByNames(const std::vector<std::string> &names, std::string &error);

  void printAfter(llvm::StringRef name) { printAfterNames.insert(name); }
  void setPrintAfterAll(bool on) { printAfterAll = on; }
  void setVerifyEach(bool on) { verifyEach = on; }
  void setPrintStream(llvm::raw_ostream &os) { printOS = &os; }

  [[nodiscard]] bool run(tir::Module &module, DiagnosticEngine &diags);

  /// "pass.counter value" lines for every counter of every pass run.
  void printStatistics(llvm::raw_ostream &os) const;

private:
  std::vector<std::unique_ptr<Pass>> passes;
  llvm::StringSet<> printAfterNames;
  bool printAfterAll = false;
#ifdef NDEBUG
  bool verifyEach = false;
#else
  bool verifyEach = true;
#endif
  llvm::raw_ostream *printOS = &llvm::errs();
};

} // namespace ti

#endif // TI_PASSES_PASSMANAGER_H
