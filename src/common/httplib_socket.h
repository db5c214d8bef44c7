// The socket of a cpp-httplib client connection, for common::idle_connection_open(). Include only from a
// translation unit that already builds against cpp-httplib (PkgConfig::HTTPLIB and its CPPHTTPLIB_* flags).
#pragma once

#include <httplib.h>

#include "common/http_reuse.h"

namespace kubex::common {

// cpp-httplib keeps the connection's socket in a protected member; a pointer to that member, formed
// through a derived class, reads it from any client without changing the library's class layout.
struct HttplibSocket : httplib::ClientImpl {
  static int fd(const httplib::ClientImpl& client) {
    return static_cast<int>((client.*(&HttplibSocket::socket_)).sock);
  }
};

// common::IdlePool::take's check for a pooled cpp-httplib connection: its socket was not closed by the peer.
inline bool httplib_connection_open(const httplib::ClientImpl& client) {
  return idle_connection_open(HttplibSocket::fd(client));
}

}  // namespace kubex::common
