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
