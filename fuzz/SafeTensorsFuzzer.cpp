//===- SafeTensorsFuzzer.cpp - Checkpoints through the safetensors reader -===//
//
// Two forms, chosen by the input's first byte:
//   even: the rest is one .safetensors file, opened by its path;
//   odd:  the rest is an index (model.safetensors.index.json), "\n--\n", and
//         the bytes of a shard written as both a.safetensors and b.safetensors
//         beside it; the folder is opened as a checkpoint.
// A checkpoint that opens has every tensor's first and last bytes read.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ti/Weights/SafeTensors.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view rest(reinterpret_cast<const char *>(data) + 1, size - 1);
  std::string path;
  if (data[0] % 2 == 0) {
    path = ti::fuzz::writeScratch("single.safetensors", rest);
  } else {
    std::error_code ec;
    std::filesystem::remove_all(ti::fuzz::scratchDir() + "/ckpt", ec);
    std::filesystem::create_directory(ti::fuzz::scratchDir() + "/ckpt");
    std::string_view index = ti::fuzz::splitField(rest);
    ti::fuzz::writeScratch("ckpt/model.safetensors.index.json", index);
    ti::fuzz::writeScratch("ckpt/a.safetensors", rest);
    ti::fuzz::writeScratch("ckpt/b.safetensors", rest);
    path = ti::fuzz::scratchDir() + "/ckpt";
  }
  auto ckpt = ti::SafeTensorsCheckpoint::open(path);
  if (!ckpt)
    return 0;
  uint8_t bytes[16];
  for (const ti::SafeTensorInfo &t : (*ckpt)->tensors()) {
    const uint64_t n = std::min<uint64_t>(t.bytes, sizeof bytes);
    if (!(*ckpt)->read(t, 0, bytes, n).ok() || !(*ckpt)->read(t, t.bytes - n, bytes, n).ok())
      std::abort(); // a tensor the header accepted must be readable
  }
  return 0;
}
