//===- WeightsFileFuzzer.cpp - weights.bin headers through the loader -----===//
//
// The input is a weights file (header, tables, attachments; the data is
// whatever follows). It is opened as `tirun` opens one: mapped, header and
// tables checked. A file that opens has the last byte of its data and of
// each attachment read, and is compared with an empty plan (the comparison's
// own paths, whatever it answers).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ti/Plan/Plan.h"
#include "ti/Weights/WeightsFile.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string path =
      ti::fuzz::writeScratch("weights.bin", {reinterpret_cast<const char *>(data), size});
  auto file = ti::WeightsFile::open(path);
  if (!file)
    return 0;
  const ti::WeightsHeader &header = (*file)->header();
  // Every byte the header promises must be readable: touch the last one of the
  // data and of each attachment (AddressSanitizer cannot see a bad mapping,
  // but a read past the file's end raises SIGBUS).
  volatile uint8_t sink = 0;
  if (header.dataBytes)
    sink = sink + (*file)->data()[header.dataBytes - 1];
  for (const ti::WeightsAttachmentEntry &a : header.attachments) {
    auto text = (*file)->attachment(a.name);
    if (!text)
      std::abort(); // a listed attachment that cannot be found by its name
    if (!text->empty())
      sink = sink + static_cast<uint8_t>(text->back());
  }
  (void)(*file)->checkAgainst(ti::plan::Plan());
  return 0;
}
