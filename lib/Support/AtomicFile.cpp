//===- AtomicFile.cpp - Write a file whole or not at all ------------------===//
#include "ti/Support/AtomicFile.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

// The temporary files being written, for the signal handler: heap copies of
// their names, owned by the slot. unlink() is async-signal-safe.
constexpr int kSlots = 16;
std::atomic<char *> pending[kSlots];

extern "C" void removeTemporariesAndDie(int signal) {
  for (auto &slot : pending)
    if (char *name = slot.load())
      ::unlink(name);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void installHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
        struct sigaction action {};
        action.sa_handler = removeTemporariesAndDie;
        sigemptyset(&action.sa_mask);
        ::sigaction(signal, &action, nullptr);
      }
    }
  });
}

int registerTemporary(const std::string &name) {
  installHandlers();
  char *copy = ::strdup(name.c_str());
  for (int i = 0; i < kSlots; ++i) {
    char *expected = nullptr;
    if (pending[i].compare_exchange_strong(expected, copy))
      return i;
  }
  std::free(copy); // more than kSlots at once: this one is removed on failure only
  return -1;
}

void unregisterTemporary(int slot) {
  if (slot >= 0)
    std::free(pending[slot].exchange(nullptr));
}

// Temporary files of `path` left by processes that are gone (a SIGKILL).
void removeStaleTemporaries(const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string prefix = target.filename().string() + ".tmp.";
  for (const fs::directory_entry &entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0)
      continue;
    std::string rest = name.substr(prefix.size());
    std::size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || rest.find_first_not_of("0123456789") != dot)
      continue;
    long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
    if (pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      fs::remove(entry.path(), ec);
  }
}

std::string temporaryName(const std::string &path) {
  return path + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
}

} // namespace

std::string ti::writeFileAtomically(const std::string &path, std::string_view contents) {
  if (path == "-") {
    if (std::fwrite(contents.data(), 1, contents.size(), stdout) != contents.size() ||
        std::fflush(stdout) != 0)
      return "cannot write to standard output: " + std::string(std::strerror(errno));
    return {};
  }
  // mkstemp in the destination's directory, so the rename stays on one file system.
  removeStaleTemporaries(path);
  std::string tmp = temporaryName(path);
  int fd = mkstemp(tmp.data());
  if (fd < 0)
    return "cannot create a temporary file beside '" + path + "': " + std::strerror(errno);
  int slot = registerTemporary(tmp);
  auto fail = [&](const char *what) {
    std::string message = std::string(what) + " '" + tmp + "': " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    unregisterTemporary(slot);
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
    unregisterTemporary(slot);
    return message;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string message = "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno);
    ::unlink(tmp.c_str());
    unregisterTemporary(slot);
    return message;
  }
  unregisterTemporary(slot);
  return {};
}

ti::AtomicFileWriter::~AtomicFileWriter() { abandon(); }

void ti::AtomicFileWriter::abandon() {
  if (fd >= 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fd = -1;
  }
  unregisterTemporary(slot);
  slot = -1;
}

std::string ti::AtomicFileWriter::open(const std::string &target) {
  abandon();
  path = target;
  removeStaleTemporaries(path);
  tmp = temporaryName(path);
  fd = mkstemp(tmp.data());
  written = 0;
  if (fd < 0)
    return "cannot create a temporary file beside '" + path + "': " + std::strerror(errno);
  slot = registerTemporary(tmp);
  return {};
}

std::string ti::AtomicFileWriter::writeBytes(const void *data, size_t bytes, int64_t at) {
  if (fd < 0)
    return "write to a file that is not open";
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = at < 0 ? ::write(fd, p, bytes) : ::pwrite(fd, p, bytes, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      std::string message = "cannot write '" + tmp + "': " + std::strerror(errno);
      abandon();
      return message;
    }
    p += n;
    bytes -= static_cast<size_t>(n);
    if (at < 0)
      written += static_cast<uint64_t>(n);
    else
      at += n;
  }
  return {};
}

std::string ti::AtomicFileWriter::write(const void *data, size_t bytes) {
  return writeBytes(data, bytes, -1);
}

std::string ti::AtomicFileWriter::writeAt(uint64_t offset, const void *data, size_t bytes) {
  if (fd >= 0 && (offset > written || bytes > written - offset))
    return "cannot write over bytes not yet written in '" + tmp + "'";
  return writeBytes(data, bytes, static_cast<int64_t>(offset));
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
    unregisterTemporary(slot);
    slot = -1;
    return message;
  }
  unregisterTemporary(slot);
  slot = -1;
  return {};
}
