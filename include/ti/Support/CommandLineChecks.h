//===- CommandLineChecks.h - Checks the tools share on their arguments -*- C++ -*-===//
//
// Header-only, no CLI11 here: each returns an empty string when the argument
// is fine, else the one line to print.
//
//===----------------------------------------------------------------------===//
#ifndef TI_SUPPORT_COMMANDLINECHECKS_H
#define TI_SUPPORT_COMMANDLINECHECKS_H

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <sys/stat.h>

namespace ti {

/// A decimal number from 0 to 2^64-1, digits only: "-1" and values past the
/// range are refused rather than wrapped.
inline std::string checkUnsigned64(const std::string &text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
  return "";
}

/// An output file name: not empty, and not the same file as any of `inputs`
/// (an output renamed over its own input would lose it).
inline std::string checkOutputPath(const std::string &option, const std::string &output,
                                   std::initializer_list<std::string_view> inputs) {
  if (output.empty()) return option + ": the output file name is empty";
  struct stat out;
  if (output == "-" || ::stat(output.c_str(), &out) != 0) return "";
  for (std::string_view input : inputs) {
    struct stat in;
    if (input.empty() || input == "-" || ::stat(std::string(input).c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      return option + ": '" + output + "' is an input of this run; writing it would lose the input";
  }
  return "";
}

} // namespace ti

#endif // TI_SUPPORT_COMMANDLINECHECKS_H
