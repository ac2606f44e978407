//===- WeightsFile.cpp - weights.bin: the packed weights of a plan --------===//
//
// Opening treats the file as hostile, in this order:
//   1. open, fstat: a regular file; at least the 8-byte magic, which must be
//      "TIWEIGHT" (a wrong file gets a plain answer, not "corrupt");
//   2. the fixed header present (40 bytes, 56 from version 3), the version
//      known (1 to 3), the reserved word of version 1 zero, H a nonzero
//      multiple of 4096 and at least the fixed header;
//   3. the file at least H + D bytes (overflow-safe);
//   4. map the whole file read-only (MAP_PRIVATE); from version 3, the
//      header's checksum: damage that steps 2 and 3 let through (a byte of
//      the tables, of the layout hash, of the payload's checksum) is
//      reported as a damaged header, not by whatever it makes of the table;
//      damage to H or D shows as a truncated file or trailing bytes first,
//      and a version turned into 1 or 2 is read without checksums;
//   5. the tensor table parsed entry by entry, each field's bytes proved to
//      lie inside the header before they are read, the count bounded by what H
//      can hold before anything is allocated; every tensor aligned, inside D,
//      and overlapping no other;
//   6. the attachment table the same way: names unique, printable ASCII, 1 to
//      255 bytes, each attachment right after the one before and at most
//      256 MiB; the rest of the header zero;
//   7. the file exactly H + D + S bytes: shorter is truncated, longer has
//      trailing bytes.
// checkAgainst then compares the layout hash first (the likely mismatch: a
// file packed for another plan), then the data size and the table.
//
//===----------------------------------------------------------------------===//
#include "ti/Weights/WeightsFile.h"

#include "ti/Support/Checksum.h"
#include "ti/Support/Hex.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ti;

static_assert(std::endian::native == std::endian::little,
              "weights files are little-endian and read by memcpy");

namespace {

/// The fixed header before the tensor table: versions 1 and 2 end at the
/// attachment count, version 3 adds the two checksums.
constexpr uint64_t kFixedHeaderBytes = 40;
constexpr uint64_t kChecksummedHeaderBytes = 56;
constexpr uint64_t kHeaderChecksumAt = 40, kPayloadChecksumAt = 48;
uint64_t fixedHeaderBytes(uint32_t version) {
  return version >= 3 ? kChecksummedHeaderBytes : kFixedHeaderBytes;
}

constexpr uint64_t kEntryFixedBytes = 20; // offset, bytes, name length.

std::string hex(uint64_t v) { return "0x" + hexDigits(v); }

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void store(std::string &out, T v) {
  char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  out.append(bytes, sizeof v);
}

std::string num(uint64_t v) { return std::to_string(v); }

// A name from the file as messages show it: bytes outside printable ASCII as
// \xNN, so that a damaged name cannot break the one-line error.
std::string shown(const std::string &name) {
  std::string out;
  for (unsigned char c : name) {
    if (c >= 0x20 && c <= 0x7E && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

} // namespace

uint64_t ti::weightsHeaderChecksum(const uint8_t *header, uint64_t bytes) {
  static const uint8_t zeros[8] = {};
  if (bytes < kChecksummedHeaderBytes)
    return 0; // No version 3 header is this short.
  Checksum c;
  c.update(header, kHeaderChecksumAt).update(zeros, sizeof zeros);
  c.update(header + kHeaderChecksumAt + 8, bytes - kHeaderChecksumAt - 8);
  return c.value();
}

WeightsHeader ti::weightsHeaderFor(const plan::Plan &plan) {
  WeightsHeader h;
  h.layoutHash = plan.layoutHash;
  h.dataBytes = plan.weightsBytes;
  for (const plan::PackedTensor &t : plan.weights)
    h.tensors.push_back({t.name, t.offset, t.bytes});
  return h;
}

std::string ti::serializeWeightsHeader(WeightsHeader &header) {
  std::string out(kWeightsMagic, sizeof kWeightsMagic);
  uint64_t used = fixedHeaderBytes(header.version);
  for (const WeightsTensorEntry &t : header.tensors)
    used += kEntryFixedBytes + t.name.size();
  uint64_t next = 0;
  for (WeightsAttachmentEntry &a : header.attachments) {
    used += kEntryFixedBytes + a.name.size();
    a.offset = next;
    next += a.bytes;
  }
  header.headerBytes = (used + kWeightsHeaderAlignment - 1) / kWeightsHeaderAlignment *
                       kWeightsHeaderAlignment;
  store<uint32_t>(out, header.version);
  store<uint32_t>(out, static_cast<uint32_t>(header.headerBytes));
  store<uint64_t>(out, header.layoutHash);
  store<uint64_t>(out, header.dataBytes);
  store<uint32_t>(out, static_cast<uint32_t>(header.tensors.size()));
  store<uint32_t>(out, static_cast<uint32_t>(header.attachments.size()));
  if (header.version >= 3) {
    store<uint64_t>(out, 0); // The header checksum, below.
    store<uint64_t>(out, header.payloadChecksum);
  }
  for (const WeightsTensorEntry &t : header.tensors) {
    store<uint64_t>(out, t.offset);
    store<uint64_t>(out, t.bytes);
    store<uint32_t>(out, static_cast<uint32_t>(t.name.size()));
    out += t.name;
  }
  for (const WeightsAttachmentEntry &a : header.attachments) {
    store<uint64_t>(out, a.offset);
    store<uint64_t>(out, a.bytes);
    store<uint32_t>(out, static_cast<uint32_t>(a.name.size()));
    out += a.name;
  }
  out.resize(header.headerBytes, '\0');
  if (header.version >= 3) {
    header.headerChecksum =
        weightsHeaderChecksum(reinterpret_cast<const uint8_t *>(out.data()), out.size());
    std::memcpy(out.data() + kHeaderChecksumAt, &header.headerChecksum, 8);
  }
  return out;
}

WeightsFile::~WeightsFile() {
  if (base_)
    ::munmap(const_cast<uint8_t *>(base_), mappedBytes_);
}

StatusOr<std::unique_ptr<WeightsFile>> WeightsFile::open(const std::string &path) {
  std::string who = "'" + path + "'";
  auto fail = [&](const std::string &what) { return Status::error(who + " " + what); };

  // 1. A regular file with the magic.
  // O_NONBLOCK: a FIFO given as a file must not block the open (it is refused
  // below as not a regular file); reads of a regular file ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::error("cannot open " + who + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("is not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  uint8_t fixed[kChecksummedHeaderBytes] = {};
  ssize_t got = size == 0 ? 0 : ::pread(fd, fixed, std::min<uint64_t>(size, sizeof fixed), 0);
  if (got < 0) {
    std::string e = std::strerror(errno);
    ::close(fd);
    return Status::error("cannot read " + who + ": " + e);
  }
  uint64_t have = static_cast<uint64_t>(got);
  if (have < sizeof kWeightsMagic || std::memcmp(fixed, kWeightsMagic, sizeof kWeightsMagic)) {
    ::close(fd);
    return fail("is not a weights file (bad magic)");
  }

  // 2. The fixed header.
  auto closeAndFail = [&](const std::string &what) {
    ::close(fd);
    return fail(what);
  };
  const uint32_t version = have >= 12 ? load<uint32_t>(fixed + 8) : 0;
  const uint64_t fixedBytes = fixedHeaderBytes(version);
  if (have < fixedBytes)
    return closeAndFail("is truncated: " + num(size) + " bytes, less than the " +
                        num(fixedBytes) + "-byte header");
  auto file = std::unique_ptr<WeightsFile>(new WeightsFile());
  file->path_ = path;
  WeightsHeader &h = file->header_;
  h.version = version;
  h.headerBytes = load<uint32_t>(fixed + 12);
  h.layoutHash = load<uint64_t>(fixed + 16);
  h.dataBytes = load<uint64_t>(fixed + 24);
  uint32_t count = load<uint32_t>(fixed + 32), reserved = load<uint32_t>(fixed + 36);
  if (h.version < 1 || h.version > kWeightsFormatVersion)
    return closeAndFail("has weights format version " + num(h.version) + "; this build reads 1 to " +
                        num(kWeightsFormatVersion));
  if (h.version == 1 && reserved != 0)
    return closeAndFail("has a nonzero reserved header word");
  uint32_t attachmentCount = h.version == 1 ? 0 : reserved;
  if (h.version >= 3) {
    h.headerChecksum = load<uint64_t>(fixed + kHeaderChecksumAt);
    h.payloadChecksum = load<uint64_t>(fixed + kPayloadChecksumAt);
  }
  if (h.headerBytes == 0 || h.headerBytes % kWeightsHeaderAlignment)
    return closeAndFail("has a header of " + num(h.headerBytes) + " bytes, not a multiple of " +
                        num(kWeightsHeaderAlignment));

  // 3. At least H + D bytes (the attachments' size is known after step 6).
  if (h.dataBytes > UINT64_MAX - h.headerBytes)
    return closeAndFail("has an impossible data size " + num(h.dataBytes));
  uint64_t total = h.headerBytes + h.dataBytes;
  if (size < total)
    return closeAndFail("is truncated: " + num(size) + " bytes, the header says " + num(total));
  if (attachmentCount == 0 && size > total)
    return closeAndFail("has " + num(size) + " bytes, the header says " + num(total) +
                        " (trailing bytes)");

  // 4. The mapping. The descriptor is not needed once it exists.
  void *map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int mapErrno = errno;
  ::close(fd);
  if (map == MAP_FAILED)
    return Status::error("cannot map " + who + ": " + std::strerror(mapErrno));
  file->base_ = static_cast<const uint8_t *>(map);
  file->mappedBytes_ = size;
  const uint8_t *base = file->base_;
  if (h.version >= 3)
    if (uint64_t sum = weightsHeaderChecksum(base, h.headerBytes); sum != h.headerChecksum)
      return fail("has a damaged header: its checksum is " + hex(h.headerChecksum) +
                  ", its bytes give " + hex(sum));

  // 5. The tensor table, inside [fixedBytes, H).
  uint64_t at = fixedBytes, end = h.headerBytes;
  if (count > (end - at) / kEntryFixedBytes)
    return fail("has " + num(count) + " tensors, more than its " + num(end) +
                "-byte header can hold");
  h.tensors.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (end - at < kEntryFixedBytes)
      return fail("has a tensor table that overruns its header at entry " + num(i));
    WeightsTensorEntry t;
    t.offset = load<uint64_t>(base + at);
    t.bytes = load<uint64_t>(base + at + 8);
    uint32_t length = load<uint32_t>(base + at + 16);
    at += kEntryFixedBytes;
    if (length > end - at)
      return fail("has a tensor table that overruns its header at entry " + num(i));
    t.name.assign(reinterpret_cast<const char *>(base + at), length);
    at += length;
    std::string entry = "tensor '" + shown(t.name) + "' (entry " + num(i) + ")";
    if (t.offset % plan::kWeightAlignment)
      return fail("has " + entry + " at offset " + num(t.offset) + ", not a multiple of " +
                  num(plan::kWeightAlignment));
    if (t.offset > h.dataBytes || t.bytes > h.dataBytes - t.offset)
      return fail("has " + entry + " [" + num(t.offset) + ", +" + num(t.bytes) +
                  ") outside its " + num(h.dataBytes) + " data bytes");
    h.tensors.push_back(std::move(t));
  }
  // 6. The attachment table.
  if (attachmentCount > kMaxAttachments)
    return fail("has " + num(attachmentCount) + " attachments, more than " + num(kMaxAttachments));
  if (attachmentCount > (end - at) / kEntryFixedBytes)
    return fail("has " + num(attachmentCount) + " attachments, more than its " + num(end) +
                "-byte header can hold");
  for (uint32_t i = 0; i < attachmentCount; ++i) {
    if (end - at < kEntryFixedBytes)
      return fail("has an attachment table that overruns its header at entry " + num(i));
    WeightsAttachmentEntry a;
    a.offset = load<uint64_t>(base + at);
    a.bytes = load<uint64_t>(base + at + 8);
    uint32_t length = load<uint32_t>(base + at + 16);
    at += kEntryFixedBytes;
    if (length > end - at)
      return fail("has an attachment table that overruns its header at entry " + num(i));
    a.name.assign(reinterpret_cast<const char *>(base + at), length);
    at += length;
    if (a.name.empty() || a.name.size() > kMaxAttachmentNameBytes)
      return fail("has an attachment name of " + num(a.name.size()) + " bytes (entry " + num(i) +
                  "; 1 to " + num(kMaxAttachmentNameBytes) + ")");
    for (char c : a.name)
      if (c < 0x20 || c > 0x7E)
        return fail("has an attachment name that is not printable ASCII (entry " + num(i) + ")");
    for (const WeightsAttachmentEntry &b : h.attachments)
      if (b.name == a.name)
        return fail("has two attachments named '" + a.name + "'");
    if (a.offset != h.attachmentBytes())
      return fail("has attachment '" + a.name + "' at " + num(a.offset) + ", not right after the one before (" +
                  num(h.attachmentBytes()) + ")");
    if (a.bytes > kMaxAttachmentBytes)
      return fail("has attachment '" + a.name + "' of " + num(a.bytes) + " bytes, more than " +
                  num(kMaxAttachmentBytes));
    h.attachments.push_back(std::move(a));
  }
  for (uint64_t i = at; i < end; ++i)
    if (base[i] != 0)
      return fail("has nonzero bytes after its tensor table, at " + num(i));
  std::vector<const WeightsTensorEntry *> sorted;
  for (const WeightsTensorEntry &t : h.tensors)
    sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(),
            [](auto *a, auto *b) { return a->offset < b->offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i]->offset - sorted[i - 1]->offset < sorted[i - 1]->bytes)
      return fail("has overlapping tensors '" + shown(sorted[i - 1]->name) + "' and '" +
                  shown(sorted[i]->name) + "'");
  // 7. Exactly H + D + S bytes. S is at most 2^28 entries of 2^28 bytes.
  if (h.attachmentBytes() > UINT64_MAX - total)
    return fail("has an impossible attachment size " + num(h.attachmentBytes()));
  total += h.attachmentBytes();
  if (size < total)
    return fail("is truncated: " + num(size) + " bytes, the header says " + num(total));
  if (size > total)
    return fail("has " + num(size) + " bytes, the header says " + num(total) + " (trailing bytes)");
  return file;
}

std::optional<std::string_view> WeightsFile::attachment(std::string_view name) const {
  for (const WeightsAttachmentEntry &a : header_.attachments)
    if (a.name == name)
      return std::string_view(reinterpret_cast<const char *>(base_ + header_.headerBytes + header_.dataBytes +
                                                             a.offset),
                              a.bytes);
  return std::nullopt;
}

Status WeightsFile::verifyPayload() const {
  std::string who = "'" + path_ + "'";
  if (header_.version < 3)
    return Status::error(who + " has no payload checksum (weights format " +
                         num(header_.version) + "; tipack writes format " +
                         num(kWeightsFormatVersion) + ")");
  const uint64_t payload = mappedBytes_ - header_.headerBytes;
  if (uint64_t sum = checksum(base_ + header_.headerBytes, payload); sum != header_.payloadChecksum)
    return Status::error(who + " is damaged: its " + num(payload) + " bytes of weights and attachments give checksum " + hex(sum) +
                         ", the header says " + hex(header_.payloadChecksum));
  return Status();
}

Status WeightsFile::checkAgainst(const plan::Plan &plan) const {
  std::string who = "'" + path_ + "'";
  if (header_.layoutHash != plan.layoutHash)
    return Status::error(who + " was packed for another plan (layout hash " +
                         hex(header_.layoutHash) + ", the plan needs " + hex(plan.layoutHash) +
                         ")");
  if (header_.dataBytes != plan.weightsBytes)
    return Status::error(who + " has " + num(header_.dataBytes) + " data bytes, the plan needs " +
                         num(plan.weightsBytes));
  if (header_.tensors.size() != plan.weights.size())
    return Status::error(who + " has " + num(header_.tensors.size()) +
                         " tensors, the plan needs " + num(plan.weights.size()));
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const WeightsTensorEntry &f = header_.tensors[i];
    const plan::PackedTensor &p = plan.weights[i];
    if (f.name != p.name || f.offset != p.offset || f.bytes != p.bytes)
      return Status::error(who + " tensor " + num(i) + " is '" + shown(f.name) + "' [" + num(f.offset) +
                           ", +" + num(f.bytes) + "), the plan needs '" + p.name + "' [" +
                           num(p.offset) + ", +" + num(p.bytes) + ")");
  }
  return Status();
}
