// Whole-file reads and crash-safe writes (kubeconfigs, certificates and keys written by kubex-sim and tests).
#pragma once

#include <string>

#include "common/result.h"

namespace kubex::common {

// Replaces `path` with `content` atomically: writes a temporary file in the same directory with permissions
// exactly `mode` (e.g. 0600 for private keys, 0644 otherwise; not reduced by the umask), fsyncs it, renames
// it over `path` and fsyncs the directory. Readers see the old or the new content, never a partial file. On
// failure the temporary file is removed, `path` is unchanged, and the error names the path and the system
// error.
Result<void> write_file_atomic(const std::string& path, const std::string& content, unsigned mode);

// The whole content of `path`; the error names the path and the system error.
Result<std::string> read_file(const std::string& path);

}  // namespace kubex::common
