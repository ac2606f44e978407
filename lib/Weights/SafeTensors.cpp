//===- SafeTensors.cpp - Hugging Face safetensors, read and written -------===//
//
// Opening a checkpoint:
//   1. Resolve the path: a directory holds model.safetensors.index.json
//      (sharded) or model.safetensors; a .json file is an index; any other
//      file is one safetensors file. config.json is looked for beside it.
//   2. For an index: parse it, take the distinct shard files of its
//      weight_map, open each (2), and keep for every mapped name the tensor
//      of that name in its shard, refusing a shard that lacks it.
//   3. For each file: the 8-byte header length, bounded by the file and by
//      kMaxHeaderBytes before anything is allocated; the JSON, parsed without
//      exceptions; each entry's dtype, shape and data_offsets, checked against
//      the data's size (and shape x dtype size, for every dtype with a known
//      size) with overflow-safe arithmetic. After this every tensor's bytes
//      lie inside its file, so read() needs only its own range check.
//
//===----------------------------------------------------------------------===//
#include "ti/Weights/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <set>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ti;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors are little-endian and read by memcpy");

namespace {

/// The Hugging Face reader's own limit; a larger header is hostile or broken.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
/// An index is a few hundred kilobytes even for the largest models.
constexpr uint64_t kMaxIndexBytes = 64ull << 20;

std::string quote(const std::string &s) { return "'" + s + "'"; }

std::string parentOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string joinPath(const std::string &dir, const std::string &name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string shapeText(const std::vector<uint64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Reads exactly `bytes` at `offset`, retrying short reads; "" or the reason.
std::string preadFully(int fd, void *out, uint64_t bytes, uint64_t offset) {
  auto *p = static_cast<char *>(out);
  while (bytes > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(bytes, 1ull << 30));
    ssize_t n = ::pread(fd, p, want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return std::strerror(errno);
    if (n == 0)
      return "the file ended early (was it changed while being read?)";
    p += n;
    bytes -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return {};
}

/// The whole of a small file (an index, a config.json).
Status readSmallFile(const std::string &path, std::string &out) {
  // O_NONBLOCK: a FIFO given as a file must not block the open (it is refused
  // below as not a regular file); reads of a regular file ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::error("cannot open " + quote(path) + ": " + std::strerror(errno));
  struct stat st;
  std::string error;
  if (::fstat(fd, &st) != 0)
    error = std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    error = "not a regular file";
  else if (static_cast<uint64_t>(st.st_size) > kMaxIndexBytes)
    error = std::to_string(st.st_size) + " bytes is too large for a JSON file of a checkpoint";
  if (error.empty()) {
    out.resize(static_cast<size_t>(st.st_size));
    error = preadFully(fd, out.data(), out.size(), 0);
  }
  ::close(fd);
  if (!error.empty())
    return Status::error("cannot read " + quote(path) + ": " + error);
  return Status();
}

} // namespace

unsigned ti::safeDTypeBytes(std::string_view d) {
  if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E4M3" || d == "F8_E5M2")
    return 1;
  if (d == "BF16" || d == "F16" || d == "I16" || d == "U16")
    return 2;
  if (d == "F32" || d == "I32" || d == "U32")
    return 4;
  if (d == "F64" || d == "I64" || d == "U64")
    return 8;
  return 0;
}

SafeDType ti::parseSafeDType(std::string_view d) {
  if (d == "BF16")
    return SafeDType::BF16;
  if (d == "F16")
    return SafeDType::F16;
  if (d == "F32")
    return SafeDType::F32;
  return SafeDType::Other;
}

uint64_t SafeTensorInfo::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape)
    n *= d;
  return n;
}

// --- Reading --------------------------------------------------------------===//

SafeTensorsCheckpoint::~SafeTensorsCheckpoint() {
  for (int fd : fds_)
    ::close(fd);
}

const SafeTensorInfo *SafeTensorsCheckpoint::find(std::string_view name) const {
  auto before = [](const SafeTensorInfo &t, std::string_view n) { return t.name < n; };
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name, before);
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

Status SafeTensorsCheckpoint::read(const SafeTensorInfo &t, uint64_t offset, void *out,
                                   uint64_t bytes) const {
  if (t.file >= fds_.size() || offset > t.bytes || bytes > t.bytes - offset)
    return Status::error("read of bytes [" + std::to_string(offset) + ", +" +
                         std::to_string(bytes) + ") outside tensor '" + t.name + "'");
  if (std::string e = preadFully(fds_[t.file], out, bytes, t.offset + offset); !e.empty())
    return Status::error("cannot read tensor '" + t.name + "' from " + quote(files_[t.file]) +
                         ": " + e);
  return Status();
}

/// Step 3: one file's header, its tensors added to `found`.
Status SafeTensorsCheckpoint::addFile(const std::string &path, const char *namedBy,
                                      std::map<std::string, SafeTensorInfo> &found) {
  // O_NONBLOCK: a FIFO given as a file must not block the open (it is refused
  // below as not a regular file); reads of a regular file ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::error("cannot open " + quote(path) + namedBy + ": " + std::strerror(errno));
  fds_.push_back(fd); // Closed by the destructor, even on failure below.
  files_.push_back(path);
  unsigned index = static_cast<unsigned>(files_.size() - 1);
  auto fail = [&](const std::string &what) { return Status::error(quote(path) + ": " + what); };

  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail("not a regular file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < 8)
    return fail("not a safetensors file: " + std::to_string(size) +
                " bytes, less than the 8-byte header length");
  unsigned char lengthBytes[8];
  if (std::string e = preadFully(fd, lengthBytes, 8, 0); !e.empty())
    return fail(e);
  uint64_t headerBytes;
  std::memcpy(&headerBytes, lengthBytes, 8);
  if (headerBytes > size - 8)
    return fail("truncated or not a safetensors file: the header length is " +
                std::to_string(headerBytes) + " bytes, the file holds " +
                std::to_string(size - 8) + " after it");
  if (headerBytes > kMaxHeaderBytes)
    return fail("the header length " + std::to_string(headerBytes) +
                " is over the 100 MiB limit");
  std::string text(static_cast<size_t>(headerBytes), '\0');
  if (std::string e = preadFully(fd, text.data(), text.size(), 8); !e.empty())
    return fail(e);
  uint64_t dataStart = 8 + headerBytes, dataBytes = size - dataStart;

  // A name given twice would be read as its last entry, the other silently
  // dropped: the callback sees every top-level key.
  std::set<std::string> keys;
  std::string duplicate;
  json::parser_callback_t seen = [&](int depth, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !keys.insert(parsed.get<std::string>()).second &&
        duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header = json::parse(text, seen, /*allow_exceptions=*/false);
  if (header.is_discarded())
    return fail("the safetensors header is not valid JSON");
  if (!duplicate.empty())
    return fail("the header names tensor '" + duplicate + "' twice");
  if (!header.is_object())
    return fail("the safetensors header is not a JSON object");
  for (auto &item : header.items()) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot
    // capture a binding in the lambda below.
    const std::string &name = item.key();
    auto &entry = item.value();
    if (name == "__metadata__") {
      if (!entry.is_object())
        return fail("__metadata__ is not an object");
      continue;
    }
    auto bad = [&](const std::string &what) { return fail("tensor '" + name + "': " + what); };
    if (!entry.is_object())
      return bad("its entry is not an object");
    auto dtype = entry.find("dtype"), shape = entry.find("shape"),
         offsets = entry.find("data_offsets");
    if (dtype == entry.end() || !dtype->is_string())
      return bad("no dtype string");
    if (shape == entry.end() || !shape->is_array())
      return bad("no shape array");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
      return bad("data_offsets is not [begin, end]");
    SafeTensorInfo t;
    t.name = name;
    t.dtypeName = dtype->get<std::string>();
    t.dtype = parseSafeDType(t.dtypeName);
    t.file = index;
    bool overflow = false;
    uint64_t elements = 1;
    for (const json &d : *shape) {
      if (!d.is_number_unsigned())
        return bad("the shape holds something other than non-negative integers");
      uint64_t v = d.get<uint64_t>();
      t.shape.push_back(v);
      if (v != 0 && elements > UINT64_MAX / v)
        overflow = true;
      elements *= v;
    }
    uint64_t begin = (*offsets)[0].get<uint64_t>(), end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > dataBytes)
      return bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                 "] are outside the " + std::to_string(dataBytes) + " data bytes");
    if (unsigned es = safeDTypeBytes(t.dtypeName)) {
      if (overflow || elements > UINT64_MAX / es || elements * es != end - begin)
        return bad("shape " + shapeText(t.shape) + " of " + t.dtypeName + " is not its " +
                   std::to_string(end - begin) + " bytes");
    }
    t.offset = dataStart + begin;
    t.bytes = end - begin;
    found[name] = std::move(t);
  }
  // No two tensors of this file share a byte (two views of one range would
  // pack the same data twice without a word).
  std::vector<const SafeTensorInfo *> inFile;
  for (const auto &[name, t] : found)
    if (t.file == index && t.bytes > 0)
      inFile.push_back(&t);
  std::sort(inFile.begin(), inFile.end(), [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 1; i < inFile.size(); ++i)
    if (inFile[i]->offset < inFile[i - 1]->offset + inFile[i - 1]->bytes)
      return fail("tensors '" + inFile[i - 1]->name + "' and '" + inFile[i]->name + "' overlap in the data");
  return Status();
}

StatusOr<std::unique_ptr<SafeTensorsCheckpoint>>
SafeTensorsCheckpoint::open(const std::string &path) {
  // 1. What the path is.
  std::unique_ptr<SafeTensorsCheckpoint> ckpt(new SafeTensorsCheckpoint());
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status::error("cannot open checkpoint " + quote(path) + ": " + std::strerror(errno));
  std::string index, single;
  if (S_ISDIR(st.st_mode)) {
    ckpt->directory_ = path;
    std::string candidate = joinPath(path, "model.safetensors.index.json");
    if (::stat(candidate.c_str(), &st) == 0)
      index = candidate;
    else if (candidate = joinPath(path, "model.safetensors"); ::stat(candidate.c_str(), &st) == 0)
      single = candidate;
    else
      return Status::error("checkpoint directory " + quote(path) +
                           " holds neither model.safetensors nor model.safetensors.index.json");
  } else {
    ckpt->directory_ = parentOf(path);
    (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0 ? index : single) = path;
  }

  std::map<std::string, SafeTensorInfo> found;
  if (!single.empty()) {
    if (Status s = ckpt->addFile(single, "", found); !s.ok())
      return s;
  } else {
    // 2. The index and its shards.
    std::string text;
    if (Status s = readSmallFile(index, text); !s.ok())
      return s;
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
      return Status::error(quote(index) + ": not a JSON object");
    auto map = j.find("weight_map");
    if (map == j.end() || !map->is_object())
      return Status::error(quote(index) + ": no weight_map object");
    std::map<std::string, std::map<std::string, SafeTensorInfo>> shards;
    for (auto &[name, file] : map->items()) {
      if (!file.is_string() || file.get<std::string>().empty())
        return Status::error(quote(index) + ": the weight_map entry of '" + name +
                             "' is not a file name");
      // A shard is a file beside the index: "../x" or "/etc/x" would read
      // outside the checkpoint's folder.
      const std::string &shard = file.get_ref<const std::string &>();
      if (shard.find('/') != std::string::npos || shard == "." || shard == "..")
        return Status::error(quote(index) + ": the weight_map entry of '" + name + "' names '" + shard +
                             "', not a file in the checkpoint's folder");
      shards[file.get<std::string>()];
    }
    std::string namedBy = " (named by " + quote(index) + ")";
    for (auto &[file, tensors] : shards)
      if (Status s = ckpt->addFile(joinPath(ckpt->directory_, file), namedBy.c_str(), tensors);
          !s.ok())
        return s;
    for (auto &[name, file] : map->items()) {
      auto &tensors = shards[file.get<std::string>()];
      auto it = tensors.find(name);
      if (it == tensors.end())
        return Status::error(quote(index) + " maps '" + name + "' to '" +
                             file.get<std::string>() + "', which does not hold it");
      found[name] = it->second;
    }
  }
  for (auto &[name, t] : found)
    ckpt->tensors_.push_back(std::move(t));
  return ckpt;
}

// --- Writing --------------------------------------------------------------===//

Status SafeTensorsWriter::begin(const std::string &path,
                                const std::vector<SafeTensorHeader> &tensors,
                                const std::map<std::string, std::string> &metadata) {
  path_ = path;
  expected_ = appended_ = 0;
  json header = json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  for (const SafeTensorHeader &t : tensors) {
    unsigned es = safeDTypeBytes(t.dtype);
    if (es == 0)
      return Status::error("cannot write tensor '" + t.name + "': unknown dtype '" + t.dtype + "'");
    if (t.name == "__metadata__" || header.contains(t.name))
      return Status::error("cannot write tensor '" + t.name + "' twice into " + quote(path));
    uint64_t bytes = es;
    for (uint64_t d : t.shape)
      bytes *= d;
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {expected_, expected_ + bytes}}};
    expected_ += bytes;
  }
  std::string text = header.dump();
  // Padded with spaces to a multiple of 8, as the Hugging Face writer does,
  // so that the data starts aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t length = text.size();
  char lengthBytes[8];
  std::memcpy(lengthBytes, &length, 8);
  if (std::string e = out_.open(path); !e.empty())
    return Status::error(e);
  if (std::string e = out_.write(lengthBytes, 8); !e.empty())
    return Status::error(e);
  if (std::string e = out_.write(text.data(), text.size()); !e.empty())
    return Status::error(e);
  return Status();
}

Status SafeTensorsWriter::append(const void *data, size_t bytes) {
  if (bytes > expected_ - appended_)
    return Status::error("more tensor data than the header of " + quote(path_) + " announced");
  if (std::string e = out_.write(data, bytes); !e.empty())
    return Status::error(e);
  appended_ += bytes;
  return Status();
}

Status SafeTensorsWriter::finish() {
  if (appended_ != expected_)
    return Status::error(quote(path_) + ": " + std::to_string(appended_) +
                         " bytes of tensor data, the header announced " +
                         std::to_string(expected_));
  if (std::string e = out_.commit(); !e.empty())
    return Status::error(e);
  return Status();
}

Status ti::writeSafeTensors(const std::string &path, const std::vector<SafeTensorData> &tensors,
                            const std::map<std::string, std::string> &metadata) {
  std::vector<SafeTensorHeader> headers;
  for (const SafeTensorData &t : tensors)
    headers.push_back(t.header);
  SafeTensorsWriter writer;
  if (Status s = writer.begin(path, headers, metadata); !s.ok())
    return s;
  for (const SafeTensorData &t : tensors)
    if (Status s = writer.append(t.bytes.data(), t.bytes.size()); !s.ok())
      return s;
  return writer.finish();
}

Status ti::writeSafeTensorsIndex(const std::string &path,
                                 const std::map<std::string, std::string> &weightMap,
                                 uint64_t totalSize) {
  json index = {{"metadata", {{"total_size", totalSize}}}, {"weight_map", weightMap}};
  if (std::string e = writeFileAtomically(path, index.dump(2) + "\n"); !e.empty())
    return Status::error(e);
  return Status();
}
