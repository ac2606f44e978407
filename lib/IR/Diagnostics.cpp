//===- Diagnostics.cpp ----------------------------------------------------===//
#include "ti/IR/Diagnostics.h"

using namespace ti;

void DiagnosticEngine::emit(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
                            const llvm::Twine &message) {
  // A location outside every buffer (a graph built in memory) still gets a
  // message, just without the file position.
  if (!loc.isValid() || sourceMgr.FindBufferContainingLoc(loc) == 0) {
    const char *label = kind == llvm::SourceMgr::DK_Error     ? "error"
                        : kind == llvm::SourceMgr::DK_Warning ? "warning"
                                                               : "note";
    os << label << ": " << message << "\n";
    return;
  }
  sourceMgr.PrintMessage(os, loc, kind, message);
}

void DiagnosticEngine::error(llvm::SMLoc loc, const llvm::Twine &message) {
  ++numErrors;
  emit(loc, llvm::SourceMgr::DK_Error, message);
}

void DiagnosticEngine::warning(llvm::SMLoc loc, const llvm::Twine &message) {
  emit(loc, llvm::SourceMgr::DK_Warning, message);
}

void DiagnosticEngine::note(llvm::SMLoc loc, const llvm::Twine &message) {
  emit(loc, llvm::SourceMgr::DK_Note, message);
}
