// Shared by the fuzz targets: a property check that names itself before trapping, so a crash
// report says which property failed.
#pragma once

#include <cstdio>

#define QCHECK_FUZZ_CHECK(condition)                                                               \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      std::fprintf(stderr, "property violated: %s (%s:%d)\n", #condition, __FILE__, __LINE__);     \
      __builtin_trap();                                                                            \
    }                                                                                              \
  } while (false)
