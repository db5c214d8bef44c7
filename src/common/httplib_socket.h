// The socket of a cpp-httplib client connection, for common::idle_connection_open(). Include only from a
// translation unit that already builds against cpp-httplib (PkgConfig::HTTPLIB and its CPPHTTPLIB_* flags).
#pragma once

#include <httplib.h>

namespace kubex::common {

// cpp-httplib keeps the connection's socket in a protected member; a pointer to that member, formed
// through a derived class, reads it from any client without changing the library's class layout.
struct HttplibSocket : httplib::ClientImpl {
  static int fd(const httplib::ClientImpl& client) {
    return static_cast<int>((client.*(&HttplibSocket::socket_)).sock);
  }
};

}  // namespace kubex::common
