// Test helper: builds safetensors bytes in memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qcheck::test {

struct TensorSpec
{
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
};

inline uint64_t
spec_bytes(const TensorSpec& t)
{
  uint64_t n = 1;
  for (auto d : t.shape) {
    n *= d;
  }
  unsigned bits = 16;
  if (t.dtype == "U8" || t.dtype == "I8" || t.dtype.rfind("F8", 0) == 0 || t.dtype == "BOOL") {
    bits = 8;
  } else if (t.dtype == "F32" || t.dtype == "I32" || t.dtype == "U32") {
    bits = 32;
  } else if (t.dtype == "I64" || t.dtype == "F64" || t.dtype == "U64") {
    bits = 64;
  } else if (t.dtype == "F4") {
    bits = 4;
  }
  return n * bits / 8;
}

// Raw file from a header text and a data size.
inline std::string
raw_safetensors(const std::string& header, uint64_t data_size, uint64_t declared_length = ~0ull)
{
  const uint64_t length = declared_length == ~0ull ? header.size() : declared_length;
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  }
  out += header;
  out.append(data_size, '\0');
  return out;
}

// Header JSON with contiguous offsets for the given tensors.
inline std::string
header_json(const std::vector<TensorSpec>& tensors, uint64_t* data_size = nullptr)
{
  std::string json = "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    const uint64_t size = spec_bytes(t);
    json += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      json += (i ? "," : "") + std::to_string(t.shape[i]);
    }
    json +=
      "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + size) + "]}";
    offset += size;
  }
  json += "}";
  if (data_size) {
    *data_size = offset;
  }
  return json;
}

inline std::string
safetensors(const std::vector<TensorSpec>& tensors)
{
  uint64_t data_size = 0;
  const std::string json = header_json(tensors, &data_size);
  return raw_safetensors(json, data_size);
}

// A small deterministic generator for property tests (Knuth's MMIX linear congruential step):
// the same sequence everywhere, unlike the standard distributions. next(n) is in [0, n).
class Lcg
{
public:
  explicit Lcg(uint64_t seed) : m_state(seed) {}
  size_t operator()(size_t n)
  {
    m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((m_state >> 33) % n);
  }

private:
  uint64_t m_state;
};

} // namespace qcheck::test
