//===- Diagnostics.cpp ----------------------------------------------------===//
#include "ti/IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"

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
  // The source line as SourceMgr would print it, cut to a window around the
  // caret when long (a 10 MB line was echoed whole, once per diagnostic), its
  // control bytes shown as '?' (binary input).
  llvm::SMDiagnostic full = sourceMgr.GetMessage(loc, kind, message);
  llvm::StringRef line = full.getLineContents();
  bool control = llvm::any_of(line, [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F;
  });
  if (line.size() <= kMaxLineShown && !control) {
    full.print(nullptr, os, false);
    return;
  }
  size_t column = static_cast<size_t>(full.getColumnNo());
  size_t begin = column > kMaxLineShown / 2 ? column - kMaxLineShown / 2 : 0;
  std::string window = line.substr(begin, kMaxLineShown).str();
  for (char &c : window)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      c = '?'; // tabs too: the caret below counts one column per byte
  bool cutBefore = begin > 0, cutAfter = begin + kMaxLineShown < line.size();
  const char *label = kind == llvm::SourceMgr::DK_Error     ? "error"
                      : kind == llvm::SourceMgr::DK_Warning ? "warning"
                                                             : "note";
  os << full.getFilename() << ":" << full.getLineNo() << ":" << column + 1 << ": " << label << ": "
     << full.getMessage() << "\n"
     << (cutBefore ? "..." : "") << window << (cutAfter ? "..." : "") << "\n"
     << std::string(column - begin + (cutBefore ? 3 : 0), ' ') << "^\n";
}

void DiagnosticEngine::error(llvm::SMLoc loc, const llvm::Twine &message) {
  ++numErrors;
  if (numErrors > kMaxErrorsShown) {
    if (!silenced)
      os << "error: more than " << kMaxErrorsShown << " errors; the rest are not shown\n";
    silenced = true;
    return;
  }
  emit(loc, llvm::SourceMgr::DK_Error, message);
}

void DiagnosticEngine::warning(llvm::SMLoc loc, const llvm::Twine &message) {
  if (!silenced)
    emit(loc, llvm::SourceMgr::DK_Warning, message);
}

void DiagnosticEngine::note(llvm::SMLoc loc, const llvm::Twine &message) {
  if (!silenced)
    emit(loc, llvm::SourceMgr::DK_Note, message);
}
