//===- Diagnostics.h - file:line:col diagnostics over a SourceMgr -*- C++ -*-===//
//
// Every error the compiler reports about its input goes through one engine, so
// that each one prints as `file:line:col: error: message`, the source line and a
// caret (llvm::SourceMgr's format), and so that the driver can count them.
//
// Ownership: the engine borrows the SourceMgr and the stream; both must outlive
// it. Not thread-safe: one engine per compilation.
//
//===----------------------------------------------------------------------===//
#ifndef TI_IR_DIAGNOSTICS_H
#define TI_IR_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace ti {

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &sourceMgr,
                            llvm::raw_ostream &os = llvm::errs())
      : sourceMgr(sourceMgr), os(os) {}

  void error(llvm::SMLoc loc, const llvm::Twine &message);
  void warning(llvm::SMLoc loc, const llvm::Twine &message);
  /// A note refers to the diagnostic just emitted ("previous definition is here").
  void note(llvm::SMLoc loc, const llvm::Twine &message);

  unsigned errorCount() const { return numErrors; }
  bool hadError() const { return numErrors != 0; }
  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }

  /// Errors shown at most; the rest are counted, and one line says so.
  static constexpr unsigned kMaxErrorsShown = 50;
  /// Columns of the source line shown around the caret; a longer line is cut
  /// to a window of this width, and control bytes show as '?'.
  static constexpr unsigned kMaxLineShown = 200;

private:
  void emit(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
            const llvm::Twine &message);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned numErrors = 0;
  bool silenced = false; // past kMaxErrorsShown: notes of unshown errors go too
};

} // namespace ti

#endif // TI_IR_DIAGNOSTICS_H
