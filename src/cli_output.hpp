// Where the qcheck command line writes a report or baseline named by -o / --write-baseline (not
// part of libqcheck, which never prints).
#pragma once

#include <string>
#include <string_view>

#include "qcheck/expected.hpp"

namespace qcheck::cli {

// Writes `text` to `path` so that a failed write never leaves a truncated file where the
// previous one was:
// - missing, or a regular file (through links): written to a temporary file in the same folder,
//   fsynced and renamed over it (keeping an existing file's permission bits; a new one gets
//   0666 less the umask); on failure the temporary file is removed and the target untouched.
//   An existing file this process may not write is refused, as opening it would be;
// - the file standard output is (`/dev/stdout`, `/proc/self/fd/1`): written to standard output;
// - a character device (`/dev/null`, a terminal): written in place;
// - anything else (a directory, a FIFO, a socket, a dangling link): refused without opening it,
//   so an unread FIFO never blocks.
// Errors are one line naming `path`.
Expected<void> write_output_file(const std::string& path, std::string_view text);

} // namespace qcheck::cli
