//===- SafeTensors.h - Hugging Face safetensors, read and written -*- C++ -*-===//
//
// A safetensors file: an 8-byte little-endian header length N, N bytes of JSON
// (tensor name -> {"dtype", "shape", "data_offsets": [begin, end]}, and an
// optional "__metadata__" of strings), then the data; offsets are relative to
// the data's start. A checkpoint is a directory holding `model.safetensors`,
// or shards named by `model.safetensors.index.json` ({"weight_map": {tensor
// name -> shard file}}), or a single .safetensors file given by its path.
//
// Opening reads and checks every header (offsets inside the data, sizes equal
// to shape x dtype for every known dtype) and keeps one descriptor per file;
// no tensor data is read. Tensor data is read with pread, not mmap, so that a
// reader of a checkpoint larger than memory keeps a small resident set and
// the page cache decides what stays.
//
// Thread-safety: a SafeTensorsCheckpoint is immutable after open; read() may
// be called from several threads at once. The writers are not thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef TI_WEIGHTS_SAFETENSORS_H
#define TI_WEIGHTS_SAFETENSORS_H

#include "ti/Support/Status.h"
#include "ti/Support/AtomicFile.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ti {

/// The dtypes the packer converts to bf16; every other is Other, kept by name.
enum class SafeDType : uint8_t { BF16, F16, F32, Other };

/// Bytes per element of a safetensors dtype name, or 0 if the name is unknown.
unsigned safeDTypeBytes(std::string_view dtype);
SafeDType parseSafeDType(std::string_view dtype);

struct SafeTensorInfo {
  std::string name;
  std::string dtypeName;    // As the file spells it: "BF16", "F8_E4M3", ...
  SafeDType dtype = SafeDType::Other;
  std::vector<uint64_t> shape;
  unsigned file = 0;        // Index into SafeTensorsCheckpoint::files().
  uint64_t offset = 0;      // Of the first byte, from the start of the file.
  uint64_t bytes = 0;

  uint64_t elements() const;
};

class SafeTensorsCheckpoint {
public:
  /// `path`: a checkpoint directory, an index .json file, or a .safetensors
  /// file. Every failure is one line naming the file and what is wrong.
  static StatusOr<std::unique_ptr<SafeTensorsCheckpoint>> open(const std::string &path);
  ~SafeTensorsCheckpoint();
  SafeTensorsCheckpoint(const SafeTensorsCheckpoint &) = delete;
  SafeTensorsCheckpoint &operator=(const SafeTensorsCheckpoint &) = delete;

  /// The tensor called `name`, or null.
  const SafeTensorInfo *find(std::string_view name) const;
  /// Every tensor, sorted by name.
  const std::vector<SafeTensorInfo> &tensors() const { return tensors_; }
  /// The files read, in the order their descriptors were opened.
  const std::vector<std::string> &files() const { return files_; }
  /// The directory of the checkpoint (where config.json would be).
  const std::string &directory() const { return directory_; }

  /// Reads `bytes` bytes at `offset` bytes into tensor `t`'s data.
  Status read(const SafeTensorInfo &t, uint64_t offset, void *out, uint64_t bytes) const;

private:
  SafeTensorsCheckpoint() = default;
  Status addFile(const std::string &path, const char *namedBy,
                 std::map<std::string, SafeTensorInfo> &found);

  std::string directory_;
  std::vector<std::string> files_;
  std::vector<int> fds_;
  std::vector<SafeTensorInfo> tensors_;
};

/// The header of one tensor to write. Data follows in the order given.
struct SafeTensorHeader {
  std::string name;
  std::string dtype; // "BF16", "F16", "F32", or any other name with a known size.
  std::vector<uint64_t> shape;
};

/// Writes a safetensors file by streaming: begin() writes the header (tensors
/// laid out back to back in the order given), append() takes the data in that
/// order, in pieces of any size, finish() checks it all came and commits the
/// file atomically (AtomicFileWriter). Abandoned on destruction unless
/// finished.
class SafeTensorsWriter {
public:
  Status begin(const std::string &path, const std::vector<SafeTensorHeader> &tensors,
               const std::map<std::string, std::string> &metadata = {});
  Status append(const void *data, size_t bytes);
  Status finish();

  /// Data bytes the header announced.
  uint64_t dataBytes() const { return expected_; }

private:
  std::string path_;
  AtomicFileWriter out_;
  uint64_t expected_ = 0, appended_ = 0;
};

/// A tensor held in memory, for writeSafeTensors.
struct SafeTensorData {
  SafeTensorHeader header;
  std::string bytes;
};

/// Writes one safetensors file holding `tensors`.
Status writeSafeTensors(const std::string &path, const std::vector<SafeTensorData> &tensors,
                        const std::map<std::string, std::string> &metadata = {});

/// Writes a model.safetensors.index.json: `weightMap` maps each tensor name to
/// its shard's file name (relative to the index's directory); `totalSize` is
/// the data bytes of all shards (the index's metadata.total_size).
Status writeSafeTensorsIndex(const std::string &path,
                             const std::map<std::string, std::string> &weightMap,
                             uint64_t totalSize);

} // namespace ti

#endif // TI_WEIGHTS_SAFETENSORS_H
