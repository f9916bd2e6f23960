// Hostile headers never make the reader allocate beyond the file's size plus a constant.
// A separate binary: it replaces the global allocator to track the peak of live bytes.
#include <atomic>
#include <cstdlib>
#include <gtest/gtest.h>
#include <new>

#include "builder.hpp"
#include "qcheck/engines.hpp"
#include "qcheck/input.hpp"
#include "qcheck/modules.hpp"
#include "qcheck/quant_config.hpp"
#include "qcheck/safetensors.hpp"

namespace {

std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};

void*
counted_alloc(size_t size)
{
  auto* block = static_cast<size_t*>(std::malloc(size + sizeof(std::max_align_t)));
  if (!block) {
    throw std::bad_alloc();
  }
  *block = size;
  const size_t live = g_live += size;
  size_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return reinterpret_cast<char*>(block) + sizeof(std::max_align_t);
}

void
counted_free(void* p)
{
  if (!p) {
    return;
  }
  auto* block = reinterpret_cast<size_t*>(static_cast<char*>(p) - sizeof(std::max_align_t));
  g_live -= *block;
  std::free(block);
}

// Peak bytes allocated while reading the header of `bytes`, above what was live before.
size_t
peak_while_reading(const std::string& bytes)
{
  qcheck::MemoryFileSystem fs;
  fs.add_file("x.safetensors", bytes);
  auto source = fs.open("x.safetensors");
  const size_t base = g_live.load();
  g_peak = base;
  const qcheck::Header header = qcheck::read_header(**source);
  EXPECT_FALSE(header.problems.empty());
  return g_peak.load() - base;
}

// The reader's fixed overhead: a parser, a few problem strings.
constexpr size_t k_constant = 64 * 1024;

} // namespace

void*
operator new(size_t size)
{
  return counted_alloc(size);
}
void*
operator new[](size_t size)
{
  return counted_alloc(size);
}
void
operator delete(void* p) noexcept
{
  counted_free(p);
}
void
operator delete[](void* p) noexcept
{
  counted_free(p);
}
void
operator delete(void* p, size_t) noexcept
{
  counted_free(p);
}
void
operator delete[](void* p, size_t) noexcept
{
  counted_free(p);
}

TEST(Allocation, HostileHeadersStayWithinTheFileSize)
{
  using qcheck::test::raw_safetensors;
  const std::string nested = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::vector<std::pair<std::string, std::string>> files{
    {"length 2^64-1", std::string(8, '\xff') + "{}      "},
    {"length beyond file", raw_safetensors("{}", 0, 4096)},
    {"100000 nested brackets", raw_safetensors(nested, 0)},
    {"overflowing offsets",
     raw_safetensors(R"({"t":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551615]}})",
                     1)},
    {"shape product overflow",
     raw_safetensors(
       R"({"t":{"dtype":"U8","shape":[4294967296,4294967296,2],"data_offsets":[0,1]}})", 1)},
  };
  for (const auto& [label, bytes] : files) {
    const size_t peak = peak_while_reading(bytes);
    EXPECT_LE(peak, bytes.size() + k_constant) << label << ": peak " << peak;
  }
}

// Candidates are kept per module only for a list long enough to be searched by its index: a
// short one is tried entry by entry, and its slots (16 bytes a module) would be written for
// nothing.
TEST(Allocation, ShortListsKeepNoCandidateSlots)
{
  qcheck::Inventory inventory;
  inventory.modules.resize(100000);
  for (const size_t entries : {size_t{2}, size_t{40}}) {
    qcheck::ConfigSource s;
    s.format = qcheck::QuantFormat::modelopt;
    for (size_t i = 0; i < entries; ++i) {
      s.excludes.push_back("model.layers." + std::to_string(i) + ".mlp.gate");
    }
    std::vector<qcheck::CompiledList> lists =
      qcheck::CompiledList::compile(qcheck::k_all_engines, s);
    const size_t base = g_live.load();
    g_peak = base;
    lists.front().keep_module_candidates(inventory);
    const size_t peak = g_peak.load() - base;
    if (entries < 16) {
      EXPECT_LT(peak, k_constant) << entries;
    } else {
      EXPECT_GE(peak, inventory.modules.size() * 16) << entries;
    }
  }
}
