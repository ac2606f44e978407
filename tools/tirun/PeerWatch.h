//===- PeerWatch.h - Whether a request's client has closed its connection -*- C++ -*-===//
//
// tirun serve cancels a generation whose client has gone (issue #15: within
// a launch). A streamed reply learns it when a write fails; a whole reply
// writes nothing until the end, so the handler asks after every launch.
// httplib 0.11 (Debian 12's) does not say (later versions'
// Request::is_connection_closed does, the same way): this finds the
// request's socket among the process's descriptors by its two addresses,
// which name one open TCP connection, and peeks at it without reading. A
// client that half-closes its side after the request (rare for HTTP) reads
// as gone.
//
// Construct it in the request's handler, while httplib holds the socket
// open; use it from that handler's thread (or its content provider).
//
//===----------------------------------------------------------------------===//
#ifndef TI_TOOLS_TIRUN_PEERWATCH_H
#define TI_TOOLS_TIRUN_PEERWATCH_H

namespace httplib {
struct Request;
}

namespace ti::tirun {

class PeerWatch {
public:
  explicit PeerWatch(const httplib::Request &req);
  /// Whether the client closed the connection (or it broke). False when the
  /// socket was not found: then the generation runs to its end.
  bool gone() const;
  bool found() const { return fd >= 0; }

private:
  int fd = -1;
};

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_PEERWATCH_H
