#include "common/http_reuse.h"

#include <poll.h>

namespace kubex::common {

bool idle_connection_open(int fd) {
  if (fd < 0) return true;
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  int n = ::poll(&p, 1, 0);
  if (n < 0) return false;
  return n == 0;  // any event on an idle connection (data, EOF, hang-up, error) means it is done
}

bool resend_on_fresh_connection(std::string_view method, bool request_written) {
  if (!request_written) return true;
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "PUT" || method == "DELETE";
}

}  // namespace kubex::common
