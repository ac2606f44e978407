//===- Passes.h - Every pass of the compiler, in pipeline order -*- C++ -*-===//
//
// The passes are listed once, in Passes.def: this header declares each one's
// factory and the lookups the pass manager and tic need.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PASSES_PASSES_H
#define TI_PASSES_PASSES_H

#include "ti/Passes/Pass.h"

namespace ti {

#define TI_PASS(Id, Name, Description) std::unique_ptr<Pass> create##Id##Pass();
#include "ti/Passes/Passes.def"

/// The names of the default pipeline, in order.
std::vector<std::string> defaultPipeline();
/// A pass by its command-line name, or null.
std::unique_ptr<Pass> createPassByName(llvm::StringRef name);

} // namespace ti

#endif // TI_PASSES_PASSES_H
