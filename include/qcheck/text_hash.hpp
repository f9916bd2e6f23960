// Hashes of names for tables that must stay fast on names chosen to collide: a 64-bit hash
// under a key drawn per run.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <sys/random.h>

namespace qcheck {

// A 64-bit hash of `text` under `key`: 16 bytes at a time (the last 16 overlapping the ones
// before), each pair of 8-byte words folded by a 128-bit product with the running value. Names
// that differ meet on one value about as rarely as random numbers do; the random key keeps
// anyone from choosing names that meet.
inline uint64_t
keyed_hash(std::string_view text, uint64_t key)
{
  constexpr uint64_t k_odd_a = 0x9E3779B97F4A7C15ull;
  constexpr uint64_t k_odd_b = 0xC2B2AE3D27D4EB4Full;
  const auto fold = [](uint64_t a, uint64_t b) {
    __extension__ using Wide = unsigned __int128; // GCC and Clang on 64-bit targets
    const Wide product = static_cast<Wide>(a) * b;
    return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
  };
  const auto load = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
  };
  const char* p = text.data();
  const size_t n = text.size();
  uint64_t h = key ^ (n * k_odd_a);
  uint64_t a = 0;
  uint64_t b = 0;
  if (n >= 16) {
    for (const char* const last = p + n - 16; p < last; p += 16) {
      h = fold(load(p) ^ h ^ k_odd_a, load(p + 8) ^ key ^ k_odd_b);
    }
    a = load(text.data() + n - 16);
    b = load(text.data() + n - 8);
  } else if (n >= 8) {
    a = load(p);
    b = load(p + n - 8);
  } else {
    for (size_t i = 0; i < n; ++i) {
      a |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
    }
  }
  h = fold(a ^ h ^ k_odd_a, b ^ key ^ k_odd_b);
  return fold(h ^ k_odd_b, key ^ k_odd_a);
}

// A key for keyed_hash() that differs from run to run.
inline uint64_t
random_key()
{
  uint64_t key = 0;
  if (::getrandom(&key, sizeof key, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof key)) {
    key = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
          reinterpret_cast<uintptr_t>(&key);
  }
  return key;
}

} // namespace qcheck
