//===- WeightsFile.h - weights.bin: the packed weights of a plan -*- C++ -*-===//
//
// weights.bin holds the BF16 tensors of a plan's packed layout, readable with
// mmap and usable in place: the runtime uploads (GPU) or reads (CPU) the data
// section as it is, at the offsets the plan's tasks name.
//
// Layout (all integers little-endian):
//   offset 0   char[8]  magic "TIWEIGHT"
//          8   u32      format version: 3 (kWeightsFormatVersion); 1 and 2
//                       are read too (they have no checksums: the fields at
//                       40 and 48 are not there, the table starts at 40)
//         12   u32      header bytes H: where the data section starts; a
//                       multiple of kWeightsHeaderAlignment (4096)
//         16   u64      layout hash: the plan's layoutHash
//         24   u64      data bytes D: the plan's weightsBytes
//         32   u32      tensor count T
//         36   u32      attachment count A (version 1: reserved, 0)
//         40   u64      header checksum: of bytes [0, H), these 8 taken as
//                       zero (Checksum.h: XXH3-64); checked at every open
//         48   u64      payload checksum: of the D + S bytes after the header;
//                       checked on request (verifyPayload, tirun
//                       --verify-weights: it reads the whole file)
//         56   T entries: u64 offset, u64 bytes (in the data section),
//                         u32 name length N, N bytes of name (the packed
//                         tensor's name), no padding
//         ...  A entries, the same form: offset and bytes in the attachment
//              section, each attachment right after the one before
//         ...  zero padding up to H
//          H   D bytes of data: each packed tensor at its offset, zero padding
//              between tensors
//      H + D   S bytes of attachments: files kept beside the weights, whole
//              (the checkpoint's tokenizer.json, tokenizer_config.json and
//              generation_config.json), so that a weights file is all a run
//              needs besides its plan
// The file is exactly H + D + S bytes. The tensor table repeats the plan's
// layout so that a file can be inspected without its plan, and checked against
// one.
//
// Ownership: WeightsFile owns its mapping and unmaps it on destruction; the data
// pointer is valid while the object lives. Safe to read from several threads.
//
//===----------------------------------------------------------------------===//
#ifndef TI_WEIGHTS_WEIGHTSFILE_H
#define TI_WEIGHTS_WEIGHTSFILE_H

#include "ti/Plan/Plan.h"
#include "ti/Support/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace ti {

constexpr char kWeightsMagic[8] = {'T', 'I', 'W', 'E', 'I', 'G', 'H', 'T'};
constexpr uint32_t kWeightsFormatVersion = 3;
/// Attachment names are short; contents at most 256 MiB each.
constexpr uint32_t kMaxAttachmentNameBytes = 255;
constexpr uint32_t kMaxAttachments = 64;
constexpr uint64_t kMaxAttachmentBytes = uint64_t(256) << 20;
constexpr uint64_t kWeightsHeaderAlignment = 4096;

struct WeightsTensorEntry {
  std::string name;
  uint64_t offset = 0, bytes = 0;
};

/// A file kept in the attachment section: `offset` counts from its start.
struct WeightsAttachmentEntry {
  std::string name;
  uint64_t offset = 0, bytes = 0;
};

/// The header of a weights file, as written or as read.
struct WeightsHeader {
  uint32_t version = kWeightsFormatVersion;
  uint64_t headerBytes = 0;
  uint64_t layoutHash = 0;
  uint64_t dataBytes = 0;
  /// Version 3: the checksums (0 in older versions). serializeWeightsHeader
  /// computes headerChecksum from the other bytes; payloadChecksum is the
  /// writer's, once it has written the payload.
  uint64_t headerChecksum = 0, payloadChecksum = 0;
  std::vector<WeightsTensorEntry> tensors;
  std::vector<WeightsAttachmentEntry> attachments;
  /// S: the attachment section's bytes.
  uint64_t attachmentBytes() const {
    return attachments.empty() ? 0 : attachments.back().offset + attachments.back().bytes;
  }
};

/// The header a weights file for `plan` must have.
WeightsHeader weightsHeaderFor(const plan::Plan &plan);
/// The header's bytes, zero-padded to headerBytes (computed here, and the
/// attachments' offsets: each follows the one before, and the header
/// checksum). A writer that learns the payload checksum only after writing
/// the payload serialises the header again with it and writes it over the
/// first (the size does not change).
std::string serializeWeightsHeader(WeightsHeader &header);
/// The checksum a version 3 header of `bytes` bytes at `header` must carry
/// (its own field taken as zero): for tests and fuzz targets that edit a
/// header and must get past the check to what they edit.
uint64_t weightsHeaderChecksum(const uint8_t *header, uint64_t bytes);

class WeightsFile {
public:
  /// Maps `path` and checks its header (magic, version, sizes, table). Does not
  /// check it against a plan: see checkAgainst.
  static StatusOr<std::unique_ptr<WeightsFile>> open(const std::string &path);
  ~WeightsFile();
  WeightsFile(const WeightsFile &) = delete;
  WeightsFile &operator=(const WeightsFile &) = delete;

  /// Checks the file is the one `plan` needs: layout hash, data size, and the
  /// tensor table equal to the plan's packed tensors. One line on mismatch.
  Status checkAgainst(const plan::Plan &plan) const;

  /// Reads the whole payload (data and attachments) and compares its
  /// checksum with the header's: one line if they differ, or if the file
  /// (format 1 or 2) has none.
  Status verifyPayload() const;

  const WeightsHeader &header() const { return header_; }
  /// The data section (D bytes), 4096-aligned.
  const uint8_t *data() const { return base_ + header_.headerBytes; }
  uint64_t dataBytes() const { return header_.dataBytes; }
  const std::string &path() const { return path_; }
  /// The attachment called `name`, or nothing. Valid while the object lives.
  std::optional<std::string_view> attachment(std::string_view name) const;

private:
  WeightsFile() = default;
  std::string path_;
  WeightsHeader header_;
  const uint8_t *base_ = nullptr;
  uint64_t mappedBytes_ = 0;
};

} // namespace ti

#endif // TI_WEIGHTS_WEIGHTSFILE_H
