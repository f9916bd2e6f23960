// A set of names for the hundreds of thousands a checkpoint holds: open addressing in one flat
// table, no allocation per name. It views the names, which must outlive it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "qcheck/text_hash.hpp"

namespace qcheck {

class NameSet
{
public:
  NameSet() = default;
  // Sized for `expected` names without growing.
  explicit NameSet(size_t expected) { reserve(expected); }

  // Makes room for `expected` names in all.
  void reserve(size_t expected)
  {
    size_t capacity = 16;
    while (capacity * k_max_load_num < expected * k_max_load_den) {
      capacity *= 2;
    }
    if (capacity > m_slots.size()) {
      rehash(capacity);
    }
  }

  // Adds `name`; true when it was not in the set.
  bool insert(std::string_view name)
  {
    if ((m_size + 1) * k_max_load_den > m_slots.size() * k_max_load_num) {
      rehash(m_slots.empty() ? 16 : 2 * m_slots.size());
    }
    const uint64_t hash = keyed_hash(name, m_key);
    Slot& slot = m_slots[find(name, hash)];
    if (slot.data != nullptr) {
      return false;
    }
    slot = {name.empty() ? k_empty_text : name.data(), static_cast<uint32_t>(name.size()),
            static_cast<uint32_t>(hash >> 32)};
    ++m_size;
    return true;
  }

  bool contains(std::string_view name) const
  {
    if (m_size == 0) {
      return false;
    }
    return m_slots[find(name, keyed_hash(name, m_key))].data != nullptr;
  }

  // insert() of each name in turn, each slot fetched a few names ahead: a table larger than
  // the cache costs a miss per name, which these overlap. Returns how many were new.
  size_t insert_all(std::span<const std::string_view> names)
  {
    reserve(m_size + names.size());
    size_t added = 0;
    for_each_ahead(names, [&](std::string_view name, uint64_t hash) {
      Slot& slot = m_slots[find(name, hash)];
      if (slot.data == nullptr) {
        slot = {name.empty() ? k_empty_text : name.data(), static_cast<uint32_t>(name.size()),
                static_cast<uint32_t>(hash >> 32)};
        ++m_size;
        ++added;
      }
    });
    return added;
  }

  // contains() of each name into out[i] (1 or 0), the slots fetched ahead as insert_all() does.
  // `out` holds at least names.size() elements.
  void contains_all(std::span<const std::string_view> names, std::span<char> out) const
  {
    if (m_size == 0) {
      std::fill_n(out.begin(), names.size(), char{0});
      return;
    }
    size_t i = 0;
    for_each_ahead(names, [&](std::string_view name, uint64_t hash) {
      out[i++] = m_slots[find(name, hash)].data != nullptr ? 1 : 0;
    });
  }

  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }

private:
  struct Slot
  {
    const char* data = nullptr; // null: the slot is free
    uint32_t size = 0;          // names are shorter than 4 GiB (headers are at most 100 MB)
    uint32_t tag = 0;           // the hash's top bits: most mismatches never compare text
  };
  static constexpr size_t k_max_load_num = 7; // at most 70% of the slots hold a name
  static constexpr size_t k_max_load_den = 10;
  static constexpr const char* k_empty_text = ""; // where an empty name's slot points

  static constexpr size_t k_ahead = 8; // names hashed and their slots fetched ahead

  // visit(name, hash) for each name in order; the table is not empty.
  template<typename Visit>
  void for_each_ahead(std::span<const std::string_view> names, Visit visit) const
  {
    const size_t mask = m_slots.size() - 1;
    std::array<uint64_t, k_ahead> ring{};
    const auto fetch = [&](size_t j) {
      ring[j % k_ahead] = keyed_hash(names[j], m_key);
      __builtin_prefetch(&m_slots[ring[j % k_ahead] & mask]);
    };
    for (size_t j = 0; j < std::min(k_ahead, names.size()); ++j) {
      fetch(j);
    }
    for (size_t j = 0; j < names.size(); ++j) {
      const uint64_t hash = ring[j % k_ahead];
      if (j + k_ahead < names.size()) {
        fetch(j + k_ahead);
      }
      visit(names[j], hash);
    }
  }

  // The slot holding `name`, or the free slot where it would go (linear probing).
  size_t find(std::string_view name, uint64_t hash) const
  {
    const size_t mask = m_slots.size() - 1;
    const auto tag = static_cast<uint32_t>(hash >> 32);
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot& slot = m_slots[i];
      if (slot.data == nullptr || (slot.tag == tag && slot.size == name.size() &&
                                   std::string_view(slot.data, slot.size) == name)) {
        return i;
      }
    }
  }

  void rehash(size_t capacity)
  {
    if (m_slots.empty()) {
      m_key = random_key(); // drawn with the first table, before any name is hashed
    }
    std::vector<Slot> old = std::move(m_slots);
    m_slots.assign(capacity, Slot{});
    for (const Slot& slot : old) {
      if (slot.data != nullptr) {
        const std::string_view name(slot.data, slot.size);
        m_slots[find(name, keyed_hash(name, m_key))] = slot;
      }
    }
  }

  std::vector<Slot> m_slots; // a power of two in size, or empty
  size_t m_size = 0;
  uint64_t m_key = 0; // keyed_hash()'s: names cannot be chosen to collide
};

} // namespace qcheck
