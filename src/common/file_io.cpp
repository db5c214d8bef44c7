#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace kubex::common {
namespace {

std::unexpected<Error> fail_errno(const std::string& what, const std::string& path, int err) {
  return fail(what + " " + path + ": " + std::error_code(err, std::generic_category()).message());
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  // Closes now; returns the errno of close or 0.
  int reset() {
    int err = 0;
    if (fd_ >= 0 && ::close(fd_) != 0) err = errno;
    fd_ = -1;
    return err;
  }

 private:
  int fd_;
};

int write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

}  // namespace

Result<void> write_file_atomic(const std::string& path, const std::string& content, unsigned mode) {
  if (path.empty()) return fail("write_file_atomic: empty path");
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return fail("write_file_atomic: " + path + " names a directory");
  std::string tmp =
      (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + "." + base + ".tmp-XXXXXX";

  Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (fd.get() < 0) return fail_errno("cannot create temporary file for", path, errno);
  auto abandon = [&](const std::string& what, int err) {
    fd.reset();
    ::unlink(tmp.c_str());
    return fail_errno(what, path, err);
  };
  if (::fchmod(fd.get(), static_cast<mode_t>(mode & 07777)) != 0) return abandon("cannot chmod", errno);
  if (int err = write_all(fd.get(), content.data(), content.size())) return abandon("cannot write", err);
  if (::fsync(fd.get()) != 0) return abandon("cannot fsync", errno);
  if (int err = fd.reset()) return abandon("cannot close", err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return abandon("cannot rename temporary file to", errno);
  // Make the rename durable; failure here does not undo the (already visible) write.
  Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
  return {};
}

Result<std::string> read_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return fail_errno("cannot open", path, errno);
  std::string out;
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    out.reserve(static_cast<std::size_t>(st.st_size));
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("cannot read", path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace kubex::common
