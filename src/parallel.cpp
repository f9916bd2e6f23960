#include "qcheck/parallel.hpp"

#include <algorithm>

namespace qcheck {

unsigned
thread_count(unsigned threads)
{
  return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

} // namespace qcheck
