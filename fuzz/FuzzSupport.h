//===- FuzzSupport.h - What the fuzz targets share --------------*- C++ -*-===//
//
// The loaders of weights files and checkpoints take a path, not bytes: they
// stat, map and pread the file, and those are the paths an attacker reaches.
// So their fuzz targets write each input into a scratch folder of their own
// (one per process, removed at exit) and open it from there.
//
//===----------------------------------------------------------------------===//
#ifndef TI_FUZZ_FUZZSUPPORT_H
#define TI_FUZZ_FUZZSUPPORT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ti::fuzz {

/// A folder of this process's own under $TMPDIR (or /tmp), created on first
/// use and removed with everything in it when the process exits.
const std::string &scratchDir();

/// Writes `bytes` to scratchDir()/name, replacing what was there; aborts when
/// it cannot (a broken harness must not look like a clean run).
std::string writeScratch(const std::string &name, std::string_view bytes);

/// The source tree's folder of the real tokenizers (third_party/npm, installed
/// by scripts/bootstrap.sh), or $TI_FUZZ_TOKENIZERS when set.
std::string tokenizersDir();

/// Splits the input at the first "\n--\n" (the seed corpora's separator of
/// two fields): returns the part before it and leaves the rest in `rest`.
/// Without the separator, everything is the first part and `rest` is empty.
std::string_view splitField(std::string_view &rest);

} // namespace ti::fuzz

#endif // TI_FUZZ_FUZZSUPPORT_H
