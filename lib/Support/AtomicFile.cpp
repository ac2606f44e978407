//===- AtomicFile.cpp - Write a file whole or not at all ------------------===//
#include "ti/Support/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

std::string ti::writeFileAtomically(const std::string &path, std::string_view contents) {
  if (path == "-") {
    if (std::fwrite(contents.data(), 1, contents.size(), stdout) != contents.size() ||
        std::fflush(stdout) != 0)
      return "cannot write to standard output: " + std::string(std::strerror(errno));
    return {};
  }
  // mkstemp in the destination's directory, so the rename stays on one file system.
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0)
    return "cannot create a temporary file beside '" + path + "': " + std::strerror(errno);
  auto fail = [&](const char *what) {
    std::string message = std::string(what) + " '" + tmp + "': " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return message;
  };
  const char *p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail("cannot write");
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0)
    return fail("cannot finish");
  if (::close(fd) != 0) {
    std::string message = "cannot close '" + tmp + "': " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return message;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string message = "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return message;
  }
  return {};
}

ti::AtomicFileWriter::~AtomicFileWriter() { abandon(); }

void ti::AtomicFileWriter::abandon() {
  if (fd >= 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fd = -1;
  }
}

std::string ti::AtomicFileWriter::open(const std::string &target) {
  abandon();
  path = target;
  tmp = path + ".tmp.XXXXXX";
  fd = mkstemp(tmp.data());
  written = 0;
  if (fd < 0)
    return "cannot create a temporary file beside '" + path + "': " + std::strerror(errno);
  return {};
}

std::string ti::AtomicFileWriter::write(const void *data, size_t bytes) {
  if (fd < 0)
    return "write to a file that is not open";
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      std::string message = "cannot write '" + tmp + "': " + std::strerror(errno);
      abandon();
      return message;
    }
    p += n;
    bytes -= static_cast<size_t>(n);
    written += static_cast<uint64_t>(n);
  }
  return {};
}

std::string ti::AtomicFileWriter::writeZeros(size_t bytes) {
  static const char zeros[4096] = {};
  while (bytes > 0) {
    size_t n = bytes < sizeof zeros ? bytes : sizeof zeros;
    if (std::string e = write(zeros, n); !e.empty())
      return e;
    bytes -= n;
  }
  return {};
}

std::string ti::AtomicFileWriter::commit() {
  if (fd < 0)
    return "commit of a file that is not open";
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) {
    std::string message = "cannot finish '" + tmp + "': " + std::strerror(errno);
    abandon();
    return message;
  }
  int closing = fd;
  fd = -1;
  if (::close(closing) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string message = "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return message;
  }
  return {};
}
