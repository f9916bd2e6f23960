// Process-level signal handling for the qcheck command line (not part of libqcheck, which never
// prints).
#pragma once

namespace qcheck::cli {

// Makes a SIGBUS raised by reading a mapped file that another process shrank end the process
// with one line on stderr naming the file, and exit code `exit_code`, instead of a crash. A
// SIGBUS at any other address keeps its default action.
void report_shrunk_files(int exit_code);

} // namespace qcheck::cli
