//===- CommandLine.cpp - What tirun's subcommands share -------------------===//
#include "CommandLine.h"

#include <cstdio>
#include <sstream>

namespace ti::tirun {

void addVerifyWeightsOption(CLI::App &app, bool &verify) {
  app.add_flag("--verify-weights", verify,
               "read the whole weights file before running and compare its checksum: finds a "
               "damaged file at the cost of one read of it (its header is checked always)");
}

int fail(const std::string &message) {
  std::fprintf(stderr, "tirun: error: %s\n", message.c_str());
  return 1;
}

std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return fail(e.what());
  }
  return std::nullopt;
}

StatusOr<std::vector<int32_t>> parseIntegerList(const std::string &text, int64_t lo, int64_t hi,
                                                const std::string &option,
                                                const std::string &what) {
  std::vector<int32_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < lo || v > hi)
      return Status::error(option + ": '" + item + "' is not " + what);
    out.push_back(static_cast<int32_t>(v));
  }
  if (out.empty())
    return Status::error(option + ": give at least one value");
  return out;
}

} // namespace ti::tirun
