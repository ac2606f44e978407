//===- AtomicFile.h - Write a file whole or not at all ----------*- C++ -*-===//
//
// Every output of the tools (plans, packed weights, target files) is written to
// a temporary file beside the destination and renamed over it only once it is
// complete, so an interrupted or failed run never leaves a half-written file
// under the final name. Needs no LLVM: the runtime uses it too.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_ATOMICFILE_H
#define TI_SUPPORT_ATOMICFILE_H

#include <string>
#include <string_view>

namespace ti {

/// Writes `contents` to `path` ("-" means standard output). Returns an empty
/// string on success, otherwise a one-line description of what failed.
std::string writeFileAtomically(const std::string &path, std::string_view contents);

} // namespace ti

#endif // TI_SUPPORT_ATOMICFILE_H
