//===- PeerWatch.cpp - Whether a request's client has closed its connection ===//
#include "PeerWatch.h"

#include <httplib.h>

#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <netdb.h>
#include <string>
#include <sys/socket.h>

namespace ti::tirun {

namespace {

/// A socket's address as httplib writes a request's (numeric host, port).
bool describe(const sockaddr_storage &address, socklen_t length, std::string &host, int &port) {
  char name[NI_MAXHOST], service[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr *>(&address), length, name, sizeof name, service,
                  sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  host = name;
  port = std::atoi(service);
  return true;
}

} // namespace

PeerWatch::PeerWatch(const httplib::Request &req) {
  DIR *dir = opendir("/proc/self/fd");
  if (!dir)
    return;
  while (const dirent *entry = readdir(dir)) {
    char *end = nullptr;
    const long candidate = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end || candidate == dirfd(dir))
      continue;
    const int s = static_cast<int>(candidate);
    sockaddr_storage peer{}, local{};
    socklen_t peerLength = sizeof peer, localLength = sizeof local;
    if (getpeername(s, reinterpret_cast<sockaddr *>(&peer), &peerLength) != 0 ||
        getsockname(s, reinterpret_cast<sockaddr *>(&local), &localLength) != 0)
      continue; // Not a connected socket.
    std::string peerHost, localHost;
    int peerPort = -1, localPort = -1;
    if (describe(peer, peerLength, peerHost, peerPort) && describe(local, localLength, localHost, localPort) &&
        peerPort == req.remote_port && localPort == req.local_port && peerHost == req.remote_addr &&
        localHost == req.local_addr) {
      fd = s;
      break;
    }
  }
  closedir(dir);
}

bool PeerWatch::gone() const {
  if (fd < 0)
    return false;
  char byte;
  for (;;) {
    const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0)
      return false; // A next request, pipelined: still there.
    if (n == 0)
      return true; // The client closed its side.
    if (errno == EINTR)
      continue;
    return errno != EAGAIN && errno != EWOULDBLOCK; // Nothing to read: still there; else broken.
  }
}

} // namespace ti::tirun
