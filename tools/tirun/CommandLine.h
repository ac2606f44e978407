//===- CommandLine.h - What tirun's subcommands share ------------*- C++ -*-===//
//
// One error line and exit status 1 for every failure, --help, and lists of
// integers given as "1,2,3": the same behaviour in tirun, tirun probe and
// tirun bench.
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOOLS_TIRUN_COMMANDLINE_H
#define TI_TOOLS_TIRUN_COMMANDLINE_H

#include "ti/Support/Status.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ti::tirun {

/// --verify-weights into `verify`: every subcommand that loads weights has it.
void addVerifyWeightsOption(CLI::App &app, bool &verify);

/// Prints "tirun: error: MESSAGE" on standard error; returns 1, the exit status.
int fail(const std::string &message);

/// Parses the command line into `app`. Returns nothing when the command is to
/// run, or its exit status: 0 after --help (printed), 1 after a bad argument
/// (one line).
std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv);

/// "1,2,3" -> {1, 2, 3}, each in [lo, hi]; otherwise one line:
/// "OPTION: 'ITEM' is not WHAT".
StatusOr<std::vector<int32_t>> parseIntegerList(const std::string &text, int64_t lo, int64_t hi,
                                                const std::string &option,
                                                const std::string &what);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_COMMANDLINE_H
