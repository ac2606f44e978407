//===- WeightsFileFuzzer.cpp - weights.bin headers through the loader -----===//
//
// The input is a weights file (header, tables, attachments; the data is
// whatever follows). It is opened as `tirun` opens one: mapped, header and
// tables checked. A file that opens has the last byte of its data and of
// each attachment read, and is compared with an empty plan (the comparison's
// own paths, whatever it answers), and its payload's checksum is verified.
// A version 3 header carries its own checksum, which a mutated input almost
// never matches: inputs whose stored checksum has its lowest bit set are
// resealed first (WeightsFile.h: weightsHeaderChecksum), so that the tables'
// parser is fuzzed past the check, and the others test the check itself.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ti/Plan/Plan.h"
#include "ti/Weights/WeightsFile.h"

#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (size >= 56 && (data[40] & 1)) {
    uint32_t headerBytes;
    std::memcpy(&headerBytes, data + 12, 4);
    if (headerBytes >= 56 && headerBytes <= size) {
      const uint64_t sum = ti::weightsHeaderChecksum(data, headerBytes);
      std::memcpy(bytes.data() + 40, &sum, 8);
    }
  }
  const std::string path = ti::fuzz::writeScratch("weights.bin", bytes);
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
  (void)(*file)->verifyPayload();
  return 0;
}
