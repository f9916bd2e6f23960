#include "qcheck/quant_config.hpp"

#include "qcheck/json_text.hpp"
#include "qcheck/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <simdjson.h>
#include <unordered_map>

namespace qcheck {

EntryList::EntryList(std::initializer_list<std::string_view> entries)
{
  reserve(entries.size());
  for (const std::string_view e : entries) {
    push_back(e);
  }
}

EntryList::EntryList(const std::vector<std::string>& entries)
{
  reserve(entries.size());
  for (const std::string& e : entries) {
    push_back(e);
  }
}

EntryList::Entries&
EntryList::own()
{
  if (!m_entries) {
    m_entries = std::make_shared<Entries>();
  } else if (m_entries.use_count() > 1) {
    const std::shared_ptr<const Entries> shared = std::move(m_entries);
    m_entries = std::make_shared<Entries>();
    m_entries->views.reserve(shared->views.size());
    for (const std::string_view e : shared->views) {
      push_back(e);
    }
  }
  // About to be written: no longer what any text holds.
  m_entries->read_text = {};
  m_entries->twins.clear();
  return *m_entries;
}

void
EntryList::reserve(size_t entries)
{
  own().views.reserve(entries);
}

void
EntryList::push_back(std::string_view entry)
{
  Entries& e = own();
  if (entry.size() > e.left) {
    // Blocks of 64 KiB: a 50,000-entry list in about 40 of them; a longer entry gets its own.
    constexpr size_t k_block = size_t{64} << 10;
    const size_t size = std::max(k_block, entry.size());
    e.blocks.push_back(std::make_unique_for_overwrite<char[]>(size));
    e.free = e.blocks.back().get();
    e.left = size;
  }
  if (!entry.empty()) {
    std::memcpy(e.free, entry.data(), entry.size());
  }
  e.views.emplace_back(e.free, entry.size());
  e.free += entry.size();
  e.left -= entry.size();
}

void
EntryList::keep_text(std::shared_ptr<const void> owner)
{
  Entries& e = own();
  if (e.texts.empty() || e.texts.back() != owner) {
    e.texts.push_back(std::move(owner));
  }
}

void
EntryList::mark_read_from(std::string_view text, TextSpan span)
{
  Entries& e = own();
  e.read_text = text;
  e.read = std::move(span);
}

namespace {

bool
read_from(const std::string_view& read_text, std::string_view text)
{
  return read_text.data() != nullptr && read_text.data() == text.data() &&
         read_text.size() == text.size();
}

} // namespace

const EntryList::Entries*
EntryList::reading(std::string_view text) const
{
  if (!m_entries) {
    return nullptr;
  }
  if (read_from(m_entries->read_text, text)) {
    return m_entries.get();
  }
  for (const auto& twin : m_entries->twins) {
    if (read_from(twin->read_text, text)) {
      return twin.get();
    }
  }
  return nullptr;
}

const EntryList::TextSpan*
EntryList::read_span(std::string_view text) const
{
  const Entries* read = reading(text);
  return read != nullptr ? &read->read : nullptr;
}

std::optional<std::pair<size_t, size_t>>
EntryList::element_token(std::string_view text, size_t i) const
{
  const Entries* read = i < size() ? reading(text) : nullptr;
  if (read == nullptr) {
    return std::nullopt;
  }
  const auto& escaped = read->read.escaped;
  const auto copied = std::lower_bound(escaped.begin(), escaped.end(), i,
                                       [](const auto& e, size_t k) { return e.index < k; });
  if (copied != escaped.end() && copied->index == i) {
    return std::pair{copied->begin, copied->end};
  }
  // A view into the text, between its quotes.
  const std::string_view entry = read->views[i];
  const auto address = reinterpret_cast<uintptr_t>(entry.data());
  const auto start = reinterpret_cast<uintptr_t>(text.data());
  if (address <= start || address - start + entry.size() >= text.size()) {
    return std::nullopt;
  }
  const size_t at = address - start;
  return std::pair{at - 1, at + entry.size() + 1};
}

void
EntryList::share_entries(const EntryList& equal)
{
  std::shared_ptr<Entries> mine = std::move(m_entries);
  m_entries = equal.m_entries;
  if (mine && mine != m_entries && mine->read_text.data() != nullptr && m_entries) {
    m_entries->twins.push_back(std::move(mine));
  }
}

void
EntryList::insert(size_t at, std::string_view entry)
{
  push_back(entry);
  std::vector<std::string_view>& views = m_entries->views;
  std::rotate(views.begin() + static_cast<std::ptrdiff_t>(at), views.end() - 1, views.end());
}

bool
EntryList::operator==(const EntryList& other) const
{
  return m_entries == other.m_entries || std::equal(begin(), end(), other.begin(), other.end());
}

bool
EntryList::operator==(const std::vector<std::string>& other) const
{
  return std::equal(begin(), end(), other.begin(), other.end());
}

namespace {

using Json = nlohmann::ordered_json;

// Builds an ordered_json document in linear time. nlohmann's own parser inserts each member
// through ordered_map::operator[], a linear search of the members before it, so one object of
// n keys costs O(n^2) (100,000 keys: 17 s). Here every open object keeps a hash index of its
// keys. A repeated key overwrites the value in place: Python's json keeps the last value at the
// first key's position, as nlohmann does.
class OrderedBuilder final : public nlohmann::json_sax<Json>
{
public:
  bool null() override { return put(Json(nullptr)); }
  bool boolean(bool value) override { return put(Json(value)); }
  bool number_integer(number_integer_t value) override { return put(Json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return put(Json(value)); }
  bool number_float(number_float_t value, const string_t& /*text*/) override
  {
    return put(Json(value));
  }
  bool string(string_t& value) override { return put(Json(std::move(value))); }
  bool binary(binary_t& /*value*/) override { return false; } // never in JSON text
  bool start_object(std::size_t /*elements*/) override { return open(Json::object()); }
  bool start_array(std::size_t /*elements*/) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& value) override
  {
    m_key = std::move(value);
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*error*/) override
  {
    return false;
  }

  Json& root() { return m_root; }
  // Some object held a key twice.
  bool repeated() const { return m_repeated; }

private:
  struct Frame
  {
    Json* value;
    std::unordered_map<std::string, size_t> index; // objects: key -> member position
  };

  // Stores a value where the parser is and returns its address (stable while it is open: only
  // the innermost open container grows).
  Json* place(Json value)
  {
    if (m_stack.empty()) {
      m_root = std::move(value);
      return &m_root;
    }
    Frame& top = m_stack.back();
    if (top.value->is_array()) {
      auto& elements = top.value->get_ref<Json::array_t&>();
      elements.push_back(std::move(value));
      return &elements.back();
    }
    auto& members = top.value->get_ref<Json::object_t&>();
    const auto [it, inserted] = top.index.try_emplace(m_key, members.size());
    if (inserted) {
      members.emplace_back(std::move(m_key), std::move(value));
      return &members.back().second;
    }
    m_repeated = true;
    Json& existing = std::next(members.begin(), static_cast<std::ptrdiff_t>(it->second))->second;
    existing = std::move(value);
    return &existing;
  }

  bool put(Json value)
  {
    place(std::move(value));
    return true;
  }

  bool open(Json container)
  {
    m_stack.push_back({place(std::move(container)), {}});
    return true;
  }

  bool close()
  {
    m_stack.pop_back();
    return true;
  }

  Json m_root;
  std::vector<Frame> m_stack;
  std::string m_key;
  bool m_repeated = false;
};

// Gives `builder` the events nlohmann's SAX parser gives for the document at `e`. False when
// nesting passes `depth_left` (the caller then lets nlohmann parse).
bool
replay(simdjson::dom::element e, OrderedBuilder& builder, size_t depth_left)
{
  using Type = simdjson::dom::element_type;
  switch (e.type()) {
  case Type::ARRAY: {
    if (depth_left == 0) {
      return false;
    }
    const simdjson::dom::array array = e.get_array().value_unsafe();
    builder.start_array(array.size());
    for (simdjson::dom::element item : array) {
      if (!replay(item, builder, depth_left - 1)) {
        return false;
      }
    }
    return builder.end_array();
  }
  case Type::OBJECT: {
    if (depth_left == 0) {
      return false;
    }
    const simdjson::dom::object object = e.get_object().value_unsafe();
    builder.start_object(object.size());
    for (simdjson::dom::key_value_pair member : object) {
      std::string key(member.key);
      builder.key(key);
      if (!replay(member.value, builder, depth_left - 1)) {
        return false;
      }
    }
    return builder.end_object();
  }
  case Type::INT64: {
    // nlohmann reads an integer without '-' as unsigned.
    const int64_t value = e.get_int64().value_unsafe();
    return value >= 0 ? builder.number_unsigned(static_cast<uint64_t>(value))
                      : builder.number_integer(value);
  }
  case Type::UINT64:
    return builder.number_unsigned(e.get_uint64().value_unsafe());
  case Type::DOUBLE:
    return builder.number_float(e.get_double().value_unsafe(), {});
  case Type::STRING: {
    std::string value(e.get_string().value_unsafe());
    return builder.string(value);
  }
  case Type::BOOL:
    return builder.boolean(e.get_bool().value_unsafe());
  case Type::NULL_VALUE:
    return builder.null();
  }
  return false;
}

constexpr size_t k_max_replay_depth = 256;
constexpr size_t k_max_simdjson_text = size_t{8} << 20;
// check_json bounds the values by one plus the commas and brackets: never too many here.
constexpr size_t k_max_clean_text = k_json_max_values - 1;
static_assert(k_max_replay_depth < k_json_max_depth);

// Whether simdjson reads `text` as nlohmann would. It does not for a byte order mark, integers
// past 64 bits, numbers out of range, NaN (it refuses those) and "-0" (an integer to nlohmann,
// indistinguishable from 0 once simdjson has read it). simdjson reserves about ten times the
// text's size, so texts past k_max_simdjson_text (no real configuration) are left to nlohmann.
bool
simdjson_reads(std::string_view text)
{
  return text.size() <= k_max_simdjson_text && text.find("-0") == std::string_view::npos;
}

// simdjson's document at `root` replayed into an ordered_json document; nullopt when it nests
// deeper than k_max_replay_depth. `repeated`: some object holds a key twice.
std::optional<Json>
replayed(simdjson::dom::element root, bool& repeated)
{
  OrderedBuilder builder;
  if (!replay(root, builder, k_max_replay_depth)) {
    return std::nullopt;
  }
  repeated = builder.repeated();
  return std::move(builder.root());
}

// simdjson's reading of `text` replayed into an ordered_json document (a 50,000-entry list in a
// fraction of nlohmann's time); nullopt when simdjson refuses the text or it nests deeper than
// k_max_replay_depth. `text` gains capacity for simdjson's padding, so it is read in place
// rather than from a copy.
std::optional<Json>
parse_with_simdjson(std::string& text, bool& repeated)
{
  text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text).get(root)) {
    return std::nullopt;
  }
  return replayed(root, repeated);
}

// Parses JSON text into an ordered_json document; nullopt when it is not valid JSON. simdjson
// reads what it reads as nlohmann would; nlohmann parses the rest.
std::optional<Json>
parse_ordered(std::string text)
{
  if (simdjson_reads(text)) {
    bool repeated = false;
    if (auto json = parse_with_simdjson(text, repeated)) {
      return json;
    }
  }
  OrderedBuilder builder;
  if (!Json::sax_parse(text, &builder)) {
    return std::nullopt;
  }
  return std::move(builder.root());
}

std::string
lower(std::string s)
{
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string
upper(std::string s)
{
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// A parsed JSON value, over nlohmann's ordered_json or simdjson's DOM: the declaration is read
// through this interface from either (DomValue below has the same members).
class JsonValue
{
public:
  explicit JsonValue(const Json& j) : m_j(&j) {}

  bool is_object() const { return m_j->is_object(); }
  bool is_array() const { return m_j->is_array(); }
  bool is_string() const { return m_j->is_string(); }
  bool is_null() const { return m_j->is_null(); }
  // An object's member; nullopt when the key is absent or this is no object.
  std::optional<JsonValue> find(std::string_view key) const
  {
    if (!m_j->is_object()) {
      return std::nullopt;
    }
    const auto it = m_j->find(std::string(key));
    return it == m_j->end() ? std::nullopt : std::optional(JsonValue(*it));
  }
  // Only when is_string().
  std::string_view string() const { return m_j->get_ref<const std::string&>(); }
  // An integer written without '-' (nlohmann's number_unsigned).
  std::optional<uint64_t> unsigned_number() const
  {
    return m_j->is_number_unsigned() ? std::optional(m_j->get<uint64_t>()) : std::nullopt;
  }
  std::optional<bool> boolean() const
  {
    return m_j->is_boolean() ? std::optional(m_j->get<bool>()) : std::nullopt;
  }
  bool empty_object() const { return m_j->empty(); }
  bool zero_number() const { return m_j->is_number() && m_j->get<double>() == 0.0; }
  // Any number, as a double.
  std::optional<double> number() const
  {
    return m_j->is_number() ? std::optional(m_j->get<double>()) : std::nullopt;
  }
  // Arrays only.
  size_t size() const { return m_j->size(); }
  template<typename F>
  void for_each_element(F&& f) const
  {
    for (const Json& e : *m_j) {
      f(JsonValue(e));
    }
  }
  // Objects only, in document order.
  template<typename F>
  void for_each_member(F&& f) const
  {
    for (auto it = m_j->begin(); it != m_j->end(); ++it) {
      f(std::string_view(it.key()), JsonValue(*it));
    }
  }

private:
  const Json* m_j;
};

class DomValue
{
public:
  // `text`: the text `e` was parsed from (with what keeps it alive), or null.
  explicit DomValue(simdjson::dom::element e, const PaddedBytes* text = nullptr)
    : m_e(e), m_text(text)
  {
  }

  const PaddedBytes* text() const { return m_text; }
  simdjson::dom::element element() const { return m_e; }

  bool is_object() const { return m_e.type() == Type::OBJECT; }
  bool is_array() const { return m_e.type() == Type::ARRAY; }
  bool is_string() const { return m_e.type() == Type::STRING; }
  bool is_null() const { return m_e.type() == Type::NULL_VALUE; }
  std::optional<DomValue> find(std::string_view key) const
  {
    if (!is_object()) {
      return std::nullopt;
    }
    const simdjson::dom::object object = m_e.get_object().value_unsafe();
    simdjson::dom::element value;
    if (object.at_key(key).get(value)) {
      return std::nullopt;
    }
    return DomValue(value, m_text);
  }
  std::string_view string() const { return m_e.get_string().value_unsafe(); }
  // simdjson keeps an integer that fits int64 as INT64, a larger one as UINT64.
  std::optional<uint64_t> unsigned_number() const
  {
    if (m_e.type() == Type::UINT64) {
      return m_e.get_uint64().value_unsafe();
    }
    if (m_e.type() == Type::INT64 && m_e.get_int64().value_unsafe() >= 0) {
      return static_cast<uint64_t>(m_e.get_int64().value_unsafe());
    }
    return std::nullopt;
  }
  std::optional<bool> boolean() const
  {
    return m_e.type() == Type::BOOL ? std::optional(m_e.get_bool().value_unsafe()) : std::nullopt;
  }
  bool empty_object() const { return m_e.get_object().value_unsafe().size() == 0; }
  std::optional<double> number() const
  {
    switch (m_e.type()) {
    case Type::INT64:
      return static_cast<double>(m_e.get_int64().value_unsafe());
    case Type::UINT64:
      return static_cast<double>(m_e.get_uint64().value_unsafe());
    case Type::DOUBLE:
      return m_e.get_double().value_unsafe();
    default:
      return std::nullopt;
    }
  }
  bool zero_number() const
  {
    switch (m_e.type()) {
    case Type::INT64:
      return m_e.get_int64().value_unsafe() == 0;
    case Type::UINT64:
      return m_e.get_uint64().value_unsafe() == 0;
    case Type::DOUBLE:
      return m_e.get_double().value_unsafe() == 0.0;
    default:
      return false;
    }
  }
  size_t size() const
  {
    const simdjson::dom::array array = m_e.get_array().value_unsafe();
    return array.size();
  }
  template<typename F>
  void for_each_element(F&& f) const
  {
    const simdjson::dom::array array = m_e.get_array().value_unsafe();
    for (simdjson::dom::element e : array) {
      f(DomValue(e, m_text));
    }
  }
  template<typename F>
  void for_each_member(F&& f) const
  {
    const simdjson::dom::object object = m_e.get_object().value_unsafe();
    for (simdjson::dom::key_value_pair member : object) {
      f(member.key, DomValue(member.value, m_text));
    }
  }

private:
  using Type = simdjson::dom::element_type;
  simdjson::dom::element m_e;
  const PaddedBytes* m_text;
};

// Whether the document at `e` nests no deeper than `depth_left` and no object in it repeats a
// key: then its DOM reads as the ordered_json replay of it would.
bool
plain_document(simdjson::dom::element e, size_t depth_left)
{
  using Type = simdjson::dom::element_type;
  if (e.type() == Type::ARRAY) {
    if (depth_left == 0) {
      return false;
    }
    const simdjson::dom::array array = e.get_array().value_unsafe();
    for (simdjson::dom::element item : array) {
      if (!plain_document(item, depth_left - 1)) {
        return false;
      }
    }
    return true;
  }
  if (e.type() != Type::OBJECT) {
    return true;
  }
  if (depth_left == 0) {
    return false;
  }
  const simdjson::dom::object object = e.get_object().value_unsafe();
  std::vector<std::string_view> keys;
  for (simdjson::dom::key_value_pair member : object) {
    if (!plain_document(member.value, depth_left - 1)) {
      return false;
    }
    keys.push_back(member.key);
  }
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
}

template<typename Value>
std::string
get_string(const Value& j, const char* key)
{
  const auto v = j.find(key);
  return v && v->is_string() ? std::string(v->string()) : std::string();
}

template<typename Value>
std::optional<uint64_t>
get_uint(const Value& j, const char* key)
{
  const auto v = j.find(key);
  return v ? v->unsigned_number() : std::nullopt;
}

// A JSON scalar as Python compares it (see LayerSettings): equal texts for equal values.
template<typename Value>
std::string
python_value_text(const Value& v)
{
  if (const auto b = v.boolean()) {
    return *b ? "1" : "0";
  }
  if (const auto n = v.number()) {
    if (std::abs(*n) < 9.0e15 && *n == std::trunc(*n)) {
      return fmt::format("{}", static_cast<int64_t>(*n));
    }
    return fmt::format("{}", *n);
  }
  if (v.is_string()) {
    return fmt::format("'{}'", v.string());
  }
  return v.is_null() ? "None" : v.is_array() ? "[...]" : "{...}";
}

template<typename Value>
LayerSettings
layer_settings(const Value& v)
{
  LayerSettings out;
  if (const auto bits = v.find("bits")) {
    out.bits = python_value_text(*bits);
  }
  if (const auto group_size = v.find("group_size")) {
    out.group_size = python_value_text(*group_size);
  }
  if (const auto sym = v.find("sym")) {
    out.sym = python_value_text(*sym);
  }
  return out;
}

// An extra_config key's bits as the engines compare them with 16 (check_quantized: bits < 16):
// 0 when absent or not a number, else at least 1 and below 16 exactly when the value is.
template<typename Value>
int
layer_bits(const Value& v)
{
  const auto bits = v.find("bits");
  if (!bits) {
    return 0;
  }
  const auto flag = bits->boolean(); // Python's True is 1
  const auto n = flag ? std::optional<double>(*flag ? 1 : 0) : bits->number();
  if (!n || std::isnan(*n)) {
    return 0;
  }
  if (*n >= 16) {
    return *n >= 1.0e9 ? 1'000'000'000 : static_cast<int>(*n);
  }
  return *n < 1 ? 1 : static_cast<int>(*n);
}

template<typename Value>
std::string_view
kind_of(const Value& v)
{
  if (v.is_null()) {
    return "null";
  }
  if (v.is_array()) {
    return "a list";
  }
  if (v.is_object()) {
    return "an object";
  }
  return v.boolean() ? "true or false" : "a number";
}

void
add_name(std::vector<std::string>& out, std::string_view name)
{
  out.emplace_back(name);
}

void
add_name(EntryList& out, std::string_view name)
{
  out.push_back(name);
}

// Whether a member whose key is `token` (with its quotes; lower-case letters, digits and
// underscores, which no escape but \u spells), whose value is the array of strings at
// [open, close) of `text`, is the only member so named in the text, knowing that `token` does
// not occur before it: neither `token` nor a \u escape occurs after the array, and no \u
// escape before it (within the array, they would be in its strings).
bool
only_member_named(std::string_view text, std::string_view token, size_t open, size_t close)
{
  const bool plain_key = std::all_of(token.begin() + 1, token.end() - 1, [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
  const auto escapes_u = [&](std::string_view part) {
    for (size_t at = part.find('\\'); at != std::string_view::npos; at = part.find('\\', at + 2)) {
      if (at + 1 < part.size() && part[at + 1] == 'u') {
        return true;
      }
    }
    return false;
  };
  const std::string_view after = text.substr(close);
  return plain_key && !escapes_u(text.substr(0, open)) && !escapes_u(after) &&
         after.find(token) == std::string_view::npos;
}

// How many places holding `"key"` read_in_place() tries before it copies the entries instead.
constexpr int k_max_list_places = 8;

// The array of strings `list`, member `key` of an object in `text` (which simdjson read into the
// DOM), with each entry the text spells without an escape kept as a view into the text: found
// where `"key": [` is followed by exactly those strings, each compared with the DOM's; the other
// entries are copied. Nullopt when no such place is found or an element is not a string (the
// caller then copies every entry, and names what is not a string).
std::optional<EntryList>
read_in_place(const PaddedBytes& text, std::string_view key, simdjson::dom::array list)
{
  const std::string_view all = text.bytes;
  const char* const end = all.data() + all.size();
  const std::string token = fmt::format("\"{}\"", key);
  size_t from = 0;
  for (int tries = 0; tries < k_max_list_places; ++tries) {
    // memmem, not find(): find() stops at every quote of the text.
    const void* const hit =
      from < all.size() ? ::memmem(all.data() + from, all.size() - from, token.data(), token.size())
                        : nullptr;
    if (hit == nullptr) {
      return std::nullopt;
    }
    const auto at = static_cast<size_t>(static_cast<const char*>(hit) - all.data());
    from = at + 1;
    const char* p = skip_json_space(all.data() + at + token.size(), end);
    if (p == end || *p != ':' || (p = skip_json_space(p + 1, end)) == end || *p != '[') {
      continue;
    }
    const auto open = static_cast<size_t>(p - all.data());
    p = skip_json_space(p + 1, end);
    EntryList out;
    out.keep_text(text.owner);
    out.reserve(list.size());
    std::vector<EntryList::TextSpan::Escaped> escaped;
    bool found = true;
    bool first = true;
    for (simdjson::dom::element e : list) {
      if (e.type() != simdjson::dom::element_type::STRING) {
        return std::nullopt;
      }
      const std::string_view entry = e.get_string().value_unsafe();
      if (!first) {
        if (p == end || *p != ',') {
          found = false;
          break;
        }
        p = skip_json_space(p + 1, end);
      }
      first = false;
      if (p == end || *p != '"') {
        found = false;
        break;
      }
      unsigned high = 0;
      const char* const begin = p + 1;
      const char* const stop = detail::find_string_special<false>(begin, end, high);
      if (stop != end && *stop == '"') {
        const auto length = static_cast<size_t>(stop - begin);
        if (length != entry.size() || std::memcmp(begin, entry.data(), length) != 0) {
          found = false;
          break;
        }
        out.push_back_kept(std::string_view(begin, length));
        p = skip_json_space(stop + 1, end);
      } else if (stop != end && *stop == '\\') {
        const auto open_quote = static_cast<size_t>(p - all.data());
        const size_t close = string_token_end(all, open_quote);
        if (close >= all.size()) {
          found = false;
          break;
        }
        escaped.push_back({static_cast<uint32_t>(out.size()), open_quote, close + 1});
        out.push_back(entry);
        p = skip_json_space(all.data() + close + 1, end);
      } else {
        found = false;
        break;
      }
    }
    if (found && p != end && *p == ']') {
      const size_t close = static_cast<size_t>(p - all.data()) + 1;
      if (tries == 0 && only_member_named(all, token, open, close)) {
        out.mark_read_from(all, {at, open, close, std::move(escaped)});
      }
      return out;
    }
  }
  return std::nullopt;
}

// An exclusion list's entries, each a string. Anything else (the list as one string, an entry
// that is a number, null or a list) is named in `errors` and left out: engines compare names
// with strings, and iterate a string's characters.
// With `positions`: once an element is left out, positions[i] is the index in the JSON list of
// the i-th name kept (left empty while they coincide).
template<typename List = std::vector<std::string>, typename Value>
List
get_names(const Value& j, const char* key, std::vector<std::string>& errors,
          bool* present = nullptr, std::vector<uint32_t>* positions = nullptr)
{
  List out;
  const auto list = j.find(key);
  if (!list || list->is_null()) {
    return out;
  }
  if (present) {
    *present = true;
  }
  if (!list->is_array()) {
    errors.push_back(fmt::format("'{}' is {}, not a list of names", key,
                                 list->is_string() ? "a string" : kind_of(*list)));
    if (list->is_string()) {
      add_name(out, list->string());
    }
    return out;
  }
  if constexpr (std::is_same_v<List, EntryList> && std::is_same_v<Value, DomValue>) {
    if (list->text() != nullptr && list->text()->owner) {
      if (auto kept =
            read_in_place(*list->text(), key, list->element().get_array().value_unsafe())) {
        return std::move(*kept);
      }
    }
  }
  out.reserve(list->size());
  uint32_t index = 0;
  bool dropped = false;
  list->for_each_element([&](const Value& e) {
    if (e.is_string()) {
      add_name(out, e.string());
      if (dropped && positions) {
        positions->push_back(index);
      }
    } else {
      errors.push_back(fmt::format("'{}' element {} is {}, not a name", key, index, kind_of(e)));
      if (!dropped && positions) {
        positions->resize(out.size());
        std::iota(positions->begin(), positions->end(), 0u);
      }
      dropped = true;
    }
    ++index;
  });
  return out;
}

// A list of strings; a comma-separated string is split (AutoRound accepts both).
template<typename Value>
std::vector<std::string>
get_strings(const Value& j, const char* key, bool* present = nullptr)
{
  std::vector<std::string> out;
  const auto list = j.find(key);
  if (!list || list->is_null()) {
    return out;
  }
  if (present) {
    *present = true;
  }
  if (list->is_string()) {
    const std::string_view s = list->string();
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      if (comma == std::string_view::npos) {
        comma = s.size();
      }
      if (comma > start) {
        out.emplace_back(s.substr(start, comma - start));
      }
      start = comma + 1;
    }
    return out;
  }
  if (list->is_array()) {
    out.reserve(list->size()); // exact unless it is a list of lists
    list->for_each_element([&](const Value& e) {
      if (e.is_string()) {
        out.emplace_back(e.string());
      } else if (e.is_array()) { // GPTQ list of lists
        e.for_each_element([&](const Value& inner) {
          if (inner.is_string()) {
            out.emplace_back(inner.string());
          }
        });
      }
    });
  }
  return out;
}

template<typename Value>
QuantFormat
format_of(const std::string& method, const Value& block)
{
  const std::string m = lower(method);
  if (m == "modelopt" || m == "modelopt_fp4" || m == "modelopt_mixed") {
    return QuantFormat::modelopt;
  }
  if (m.empty() && (block.find("quant_algo") || block.find("quantization"))) {
    return QuantFormat::modelopt;
  }
  if (m == "compressed-tensors" || m == "compressed_tensors") {
    return QuantFormat::compressed_tensors;
  }
  if (m == "gptq" || m == "gptq_marlin") {
    return QuantFormat::gptq;
  }
  if (m == "auto-round" || m == "autoround" || m == "auto_round" || m == "intel/auto-round" ||
      m == "inc") {
    return QuantFormat::auto_round;
  }
  if (m == "awq" || m == "awq_marlin") {
    return QuantFormat::awq;
  }
  if (m == "fp8" || m == "fbgemm_fp8") {
    return QuantFormat::fp8;
  }
  if (m == "quark") {
    return QuantFormat::quark;
  }
  if (m == "bitsandbytes") {
    return QuantFormat::bitsandbytes;
  }
  if (m == "mxfp4") {
    return QuantFormat::mxfp4;
  }
  return QuantFormat::unknown;
}

// Python's truth value of a JSON value, as a loader's `if not value` tests it: null, an empty
// list, string or object, false and 0 (0.0) are false.
template<typename Value>
bool
python_truthy(const Value& v)
{
  if (v.is_null()) {
    return false;
  }
  if (v.is_array()) {
    return v.size() > 0;
  }
  if (v.is_string()) {
    return !v.string().empty();
  }
  if (const auto b = v.boolean()) {
    return *b;
  }
  if (v.is_object()) {
    return !v.empty_object();
  }
  return !v.zero_number();
}

// `block` is at `block_pointer` in its file; sets src.pointer to where the block's settings are
// (the block's, or its nested "quantization" object's when that is an object).
template<typename Value>
void
fill_source(ConfigSource& src, const Value& block, std::string_view block_pointer)
{
  // ModelOpt's legacy file nests everything under "quantization".
  const std::optional<Value> nested = block.find("quantization");
  const bool in_nested = nested && nested->is_object();
  const Value body = in_nested ? *nested : block;
  src.pointer =
    in_nested ? fmt::format("{}/quantization", block_pointer) : std::string(block_pointer);
  src.method = get_string(block, "quant_method");
  src.format = format_of(src.method, block);
  if (src.format == QuantFormat::modelopt && src.method.empty()) {
    src.method = "modelopt";
  }
  src.algo = upper(get_string(body, "quant_algo"));
  src.group_size = static_cast<int>(get_uint(body, "group_size").value_or(0));
  src.bits = static_cast<int>(get_uint(body, "bits").value_or(get_uint(body, "w_bit").value_or(0)));
  src.not_convert = get_strings(body, "modules_to_not_convert");
  if (src.format == QuantFormat::auto_round) {
    src.settings = layer_settings(body);
  }
  if (const auto lm_head = body.find("lm_head"); lm_head && lm_head->boolean()) {
    src.lm_head = *lm_head->boolean();
  }

  switch (src.format) {
  case QuantFormat::modelopt:
    for (const char* key : {"ignore", "exclude_modules"}) {
      bool present = false;
      auto list = get_names<EntryList>(body, key, src.type_errors, &present, &src.positions);
      if (present) {
        src.list_key = key;
        src.has_list = true;
        src.excludes = std::move(list);
        break;
      }
    }
    if (src.list_key.empty()) {
      src.list_key = nested ? "exclude_modules" : "ignore";
    }
    if (const auto layers = body.find("quantized_layers"); layers && layers->is_object()) {
      layers->for_each_member([&](std::string_view name, const Value& cfg) {
        src.quantized_layers.emplace_back(name, upper(get_string(cfg, "quant_algo")));
      });
    }
    break;
  case QuantFormat::compressed_tensors:
    src.list_key = "ignore";
    src.excludes =
      get_names<EntryList>(body, "ignore", src.type_errors, &src.has_list, &src.positions);
    src.ct_format = get_string(body, "format");
    if (const auto groups = body.find("config_groups"); groups && groups->is_object()) {
      groups->for_each_member([&](std::string_view name, const Value& group) {
        CtGroup g;
        g.name = name;
        g.targets = get_names(group, "targets", src.type_errors);
        g.format = get_string(group, "format");
        if (const auto weights = group.find("weights"); weights && weights->is_object()) {
          g.num_bits = static_cast<int>(get_uint(*weights, "num_bits").value_or(0));
          g.type = get_string(*weights, "type");
        }
        src.groups.push_back(std::move(g));
      });
    }
    break;
  case QuantFormat::gptq:
  case QuantFormat::auto_round:
    if (const auto dynamic = body.find("dynamic"); dynamic && dynamic->is_object()) {
      dynamic->for_each_member([&](std::string_view key, const Value& /*value*/) {
        DynamicRule rule;
        rule.key = key;
        rule.negative = key.starts_with("-:");
        rule.regex = key.starts_with("-:") || key.starts_with("+:") ? key.substr(2) : key;
        src.dynamic.push_back(std::move(rule));
      });
    }
    src.modules_in_block = get_strings(body, "modules_in_block_to_quantize");
    src.block_names = get_strings(body, "block_name_to_quantize");
    if (src.block_names.empty()) {
      src.block_names = get_strings(body, "to_quant_block_names");
    }
    if (const auto extra = body.find("extra_config"); extra && extra->is_object()) {
      extra->for_each_member([&](std::string_view key, const Value& value) {
        src.extra_config.push_back({std::string(key), layer_bits(value), layer_settings(value)});
        // check_quantized() compares bits with 16: any value but a number (or a bool) raises.
        if (const auto bits = value.find("bits");
            bits && !bits->number() && !bits->boolean() && src.format == QuantFormat::auto_round) {
          src.value_errors.push_back(
            {fmt::format("{}/extra_config/{}/bits", src.pointer, escape_pointer_token(key)),
             fmt::format("extra_config[\"{}\"] gives bits as {}: vLLM's INC and SGLang's "
                         "AutoRound compare it with 16 and raise TypeError",
                         clipped(key),
                         bits->is_string() ? std::string_view("a string") : kind_of(*bits))});
        }
      });
    }
    src.list_key = src.format == QuantFormat::gptq ? "dynamic" : "extra_config";
    src.has_list = body.find(src.list_key).has_value();
    if (src.format == QuantFormat::auto_round && !src.dynamic.empty()) {
      src.unread.push_back(
        {fmt::format("{}/dynamic", src.pointer),
         "dynamic is read by no engine for auto-round: vLLM's INC and SGLang's AutoRound loaders "
         "decide by extra_config and block_name_to_quantize, so its keys change no layer"});
    }
    break;
  case QuantFormat::awq:
  case QuantFormat::mxfp4:
    src.list_key = "modules_to_not_convert";
    src.excludes = get_names<EntryList>(body, "modules_to_not_convert", src.type_errors,
                                        &src.has_list, &src.positions);
    break;
  case QuantFormat::fp8: {
    // vLLM's Fp8Config reads ignored_layers and falls back to modules_to_not_convert when that
    // is missing or empty (from_config); SGLang's reads the first of the two keys present, even
    // an empty one. excludes is the list vLLM reads; list_key stays ignored_layers when both
    // are empty (fix appends there, which both engines then read). FBGEMM's reads
    // modules_to_not_convert alone, in both engines.
    const auto ignored =
      lower(src.method) != "fbgemm_fp8" ? body.find("ignored_layers") : std::nullopt;
    const auto not_convert = body.find("modules_to_not_convert");
    const bool ignored_read = ignored && python_truthy(*ignored);
    const bool falls_back = ignored && !ignored_read && not_convert && python_truthy(*not_convert);
    src.list_key = ignored && !falls_back ? "ignored_layers" : "modules_to_not_convert";
    src.excludes = get_names<EntryList>(body, src.list_key.c_str(), src.type_errors, &src.has_list,
                                        &src.positions);
    const auto at = [&](const char* key) { return fmt::format("{}/{}", src.pointer, key); };
    if (ignored_read && not_convert) {
      std::vector<std::string> unread_errors; // of a list no engine reads: not reported
      const EntryList unread = get_names<EntryList>(body, "modules_to_not_convert", unread_errors);
      // Only entries the read list lacks change anything.
      if (std::any_of(unread.begin(), unread.end(), [&](std::string_view e) {
            return std::find(src.excludes.begin(), src.excludes.end(), e) == src.excludes.end();
          })) {
        src.unread.push_back(
          {at("modules_to_not_convert"),
           "modules_to_not_convert is read by no engine: vLLM and SGLang read ignored_layers, "
           "which is given and not empty"});
      }
    } else if (falls_back) {
      src.sglang_reads_empty = true;
      src.unread.push_back(
        {at("ignored_layers"),
         fmt::format("ignored_layers is {}: SGLang reads it and excludes no module, vLLM falls "
                     "back to modules_to_not_convert",
                     ignored->is_null() ? "null" : "empty")});
    }
    if (const auto sizes = body.find("weight_block_size"); sizes && sizes->is_array()) {
      sizes->for_each_element([&](const Value& v) {
        if (const auto n = v.unsigned_number()) {
          src.weight_block_size.push_back(*n);
        }
      });
    }
    break;
  }
  case QuantFormat::quark:
    src.list_key = "exclude";
    src.excludes =
      get_names<EntryList>(body, "exclude", src.type_errors, &src.has_list, &src.positions);
    break;
  case QuantFormat::bitsandbytes:
    src.list_key = "llm_int8_skip_modules";
    src.excludes = get_names<EntryList>(body, "llm_int8_skip_modules", src.type_errors,
                                        &src.has_list, &src.positions);
    break;
  case QuantFormat::unknown:
    break;
  }
}

// One config file's JSON. Clean text (simdjson reads it as nlohmann would, it nests no deeper
// than k_max_replay_depth and no object repeats a key) is kept as simdjson's DOM: a long list
// is read straight into the declaration. Any other text becomes an ordered_json document.
struct ParsedConfig
{
  std::unique_ptr<simdjson::dom::parser> parser; // owns `dom` (which points into it)
  simdjson::dom::element dom;
  std::optional<Json> json; // set instead of the DOM
  PaddedBytes text{};       // the DOM's text: its lists' entries are views into it

  template<typename F>
  void visit(F&& f) const
  {
    if (json) {
      f(JsonValue(*json));
    } else {
      f(DomValue(dom, &text));
    }
  }
};

std::optional<ParsedConfig>
parse_file(const FileSystem& fs, const std::string& root, const std::string& name, Declaration& out)
{
  const std::string path = join_path(root, name);
  const FileInfo info = fs.stat(path);
  if (info.kind == FileKind::missing) {
    return std::nullopt;
  }
  // Read with simdjson's padding after it (a disk file is mapped, not copied).
  auto source = fs.open_at_most(path, k_max_config_size);
  auto bytes = source ? (*source)->read_all_padded(simdjson::SIMDJSON_PADDING)
                      : Expected<PaddedBytes>(unexpected(source.error()));
  if (!bytes) {
    const size_t colon = bytes.error().find(": ");
    out.problems.push_back(
      {name, colon == std::string::npos ? bytes.error() : bytes.error().substr(colon + 2),
       ConfigIssue::invalid});
    return std::nullopt;
  }
  const std::string_view text = bytes->bytes;
  // The parsers here skip a byte order mark; Python's json.loads (transformers, and so every
  // engine) refuses the text. The rest is still read, for the other findings.
  if (text.starts_with("\xEF\xBB\xBF")) {
    out.problems.push_back({name,
                            "starts with a UTF-8 byte order mark, which Python's json (and so "
                            "transformers and every engine) refuses; save it without one",
                            ConfigIssue::python_refuses});
  }
  std::optional<Json> json;
  bool repeated = false;
  // Text simdjson reads whole, no deeper than the replay depth and without a repeated key, is
  // text check_json accepts without a reason (it refuses nesting past 512 levels, and more
  // values than k_max_clean_text bytes can hold): only other text is scanned.
  if (text.size() <= k_max_clean_text && simdjson_reads(text)) {
    ParsedConfig parsed{std::make_unique<simdjson::dom::parser>(), {}, std::nullopt, {}};
    if (!parsed.parser->parse(text.data(), text.size(), false).get(parsed.dom)) {
      if (plain_document(parsed.dom, k_max_replay_depth)) {
        if (!parsed.dom.is_object()) {
          out.problems.push_back({name, "is not a JSON object", ConfigIssue::invalid});
          return std::nullopt;
        }
        parsed.text = *bytes;
        out.texts.emplace_back(name, *std::move(bytes));
        return parsed;
      }
      // A repeated key (the last value wins, at the first one's place) or deep nesting: the
      // same parse, replayed into the tree (not past the replay depth).
      json = replayed(parsed.dom, repeated);
    }
  }
  if (!json || repeated) {
    // The positional scanner explains syntax errors (line, column) and refuses deep nesting
    // before the tree parser runs; the same scan finds NaN and duplicate keys.
    const auto checked = check_json(text);
    if (!checked) {
      out.problems.push_back({name, checked.error(), ConfigIssue::invalid});
      return std::nullopt;
    }
    const std::optional<std::string>& why = *checked;
    if (!json) {
      // A copy with room for simdjson's padding; the mapping goes first (a config can be tens
      // of MB, and the copy is all the parse needs).
      std::string copy;
      copy.reserve(text.size() + simdjson::SIMDJSON_PADDING);
      copy.assign(text);
      bytes->owner.reset(); // `text` views it: not read from here on
      json = parse_ordered(std::move(copy));
    }
    if (!json) {
      out.problems.push_back({name, why ? *why : "not valid JSON", ConfigIssue::invalid});
      return std::nullopt;
    }
    if (why && why->starts_with("duplicate key")) {
      out.problems.push_back({name,
                              fmt::format("{}; engines (Python's json) keep the last value", *why),
                              ConfigIssue::duplicate_key});
    }
  }
  if (!json->is_object()) {
    out.problems.push_back({name, "is not a JSON object", ConfigIssue::invalid});
    return std::nullopt;
  }
  if (bytes->owner) {
    out.texts.emplace_back(name, *std::move(bytes));
  }
  return ParsedConfig{nullptr, {}, std::move(json), {}};
}

template<typename Value>
void
read_model_info(const Value& config, ModelInfo& info)
{
  info.model_type = get_string(config, "model_type");
  info.architectures = get_strings(config, "architectures");
  std::optional<Value> text = config.find("text_config");
  if (text && !text->is_object()) {
    text.reset();
  }
  if (text) {
    info.text_model_type = get_string(*text, "model_type");
  }
  info.num_hidden_layers = text ? get_uint(*text, "num_hidden_layers") : std::nullopt;
  if (!info.num_hidden_layers) {
    info.num_hidden_layers = get_uint(config, "num_hidden_layers");
  }
  struct Key
  {
    const Value* object;
    const char* key;
    const char* label;
  };
  const std::optional<Value> mtp_config = config.find("mtp_config");
  const Value* text_object = text ? &*text : nullptr;
  const std::vector<Key> keys{
    {text_object, "mtp_num_hidden_layers", "text_config.mtp_num_hidden_layers"},
    {text_object, "num_nextn_predict_layers", "text_config.num_nextn_predict_layers"},
    {&config, "num_nextn_predict_layers", "num_nextn_predict_layers"},
    {&config, "mtp_num_hidden_layers", "mtp_num_hidden_layers"},
    {&config, "num_mtp_modules", "num_mtp_modules"},
    {mtp_config ? &*mtp_config : nullptr, "num_nextn_predict_layers",
     "mtp_config.num_nextn_predict_layers"}};
  // MiniMax-M2's configs declare num_mtp_modules, but no engine builds its drafter (vLLM's
  // minimax_m2.py skips those layers; only minimax_m3 has one): nothing is declared to load.
  const bool no_drafter = info.model_type == "minimax_m2";
  for (const auto& k : keys) {
    if (k.object == nullptr || (no_drafter && std::string_view(k.key) == "num_mtp_modules")) {
      continue;
    }
    if (auto n = get_uint(*k.object, k.key); n && *n > 0) {
      info.num_mtp_layers = *n;
      info.mtp_key = k.label;
      break;
    }
  }
  info.disable_quant_module = get_strings(config, "disable_quant_module");
}

// config.json: the model facts and the first quantization block found.
template<typename Value>
void
read_config(const Value& config, Declaration& out)
{
  read_model_info(config, out.model);
  std::optional<Value> block;
  std::string pointer;
  for (const char* key : {"quantization_config", "compression_config"}) {
    const auto b = config.find(key);
    if (b && b->is_object()) {
      block = b;
      pointer = std::string("/") + key;
      break;
    }
    // Anything but an object or null: transformers and the engines read its keys and stop
    // (a string has no .get()); null reads as no quantization.
    if (b && !b->is_null()) {
      out.problems.push_back(
        {"config.json",
         fmt::format("'{}' is {}, not an object: transformers and the engines read its keys "
                     "and stop",
                     key, b->is_string() ? std::string_view("a string") : kind_of(*b)),
         ConfigIssue::invalid});
    }
  }
  if (!block) {
    if (const auto text = config.find("text_config"); text && text->is_object()) {
      if (const auto q = text->find("quantization_config"); q && q->is_object()) {
        block = q;
        pointer = "/text_config/quantization_config";
      }
    }
  }
  if (block) {
    ConfigSource src;
    src.file = "config.json";
    fill_source(src, *block, pointer);
    out.sources.push_back(std::move(src));
  }
}

} // namespace

std::string_view
to_string(QuantFormat format)
{
  switch (format) {
  case QuantFormat::modelopt:
    return "modelopt";
  case QuantFormat::compressed_tensors:
    return "compressed-tensors";
  case QuantFormat::gptq:
    return "gptq";
  case QuantFormat::auto_round:
    return "auto-round";
  case QuantFormat::awq:
    return "awq";
  case QuantFormat::fp8:
    return "fp8";
  case QuantFormat::quark:
    return "quark";
  case QuantFormat::bitsandbytes:
    return "bitsandbytes";
  case QuantFormat::mxfp4:
    return "mxfp4";
  case QuantFormat::unknown:
    return "unknown";
  }
  return "unknown";
}

const ConfigSource*
Declaration::find(std::string_view file) const
{
  for (const auto& s : sources) {
    if (s.file == file) {
      return &s;
    }
  }
  return nullptr;
}

ConfigSource
parse_quant_block(const std::string& file, const std::string& pointer, const std::string& text)
{
  ConfigSource src;
  src.file = file;
  src.pointer = pointer;
  const std::optional<Json> json = parse_ordered(text);
  if (json && json->is_object()) {
    fill_source(src, JsonValue(*json), pointer);
  }
  return src;
}

Declaration
read_declaration(const FileSystem& fs, const std::string& root)
{
  Declaration out;
  if (const auto config = parse_file(fs, root, "config.json", out)) {
    out.has_config = true;
    config->visit([&](const auto& json) { read_config(json, out); });
  }
  for (const char* name : {"hf_quant_config.json", "quantization_config.json"}) {
    if (const auto file = parse_file(fs, root, name, out)) {
      file->visit([&](const auto& json) {
        ConfigSource src;
        src.file = name;
        fill_source(src, json, "");
        out.sources.push_back(std::move(src));
      });
    }
  }
  // config.json and hf_quant_config.json often carry one list: kept once.
  for (size_t j = 1; j < out.sources.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      if (out.sources[j].excludes == out.sources[i].excludes) {
        out.sources[j].excludes.share_entries(out.sources[i].excludes);
        break;
      }
    }
  }
  for (const auto& src : out.sources) {
    // Messages about a block start with its place in the file ("quantization_config: ").
    const std::string in_block =
      src.pointer.empty() ? std::string() : fmt::format("{}: ", src.pointer.substr(1));
    const auto& blocks = src.weight_block_size;
    if (std::find(blocks.begin(), blocks.end(), uint64_t{0}) != blocks.end()) {
      out.problems.push_back(
        {src.file,
         fmt::format("{}weight_block_size [{}] has a block of 0 elements; engines divide each "
                     "weight dimension by it",
                     in_block, fmt::join(blocks, ", ")),
         ConfigIssue::invalid});
    }
    for (const auto& [pointer, message] : src.unread) {
      out.problems.push_back({src.file, in_block + message, ConfigIssue::unread_list, pointer});
    }
    for (const auto& [pointer, message] : src.value_errors) {
      out.problems.push_back({src.file, in_block + message, ConfigIssue::wrong_type, pointer});
    }
    for (const std::string& error : src.type_errors) {
      out.problems.push_back(
        {src.file,
         fmt::format("{}{}; engines compare module names with strings only", in_block, error),
         ConfigIssue::wrong_type});
    }
    if (src.format == QuantFormat::unknown) {
      out.problems.push_back(
        {src.file,
         src.method.empty()
           ? fmt::format("{} has no quant_method; its quantization cannot be checked",
                         src.pointer.empty() ? "the file" : src.pointer.substr(1))
           : fmt::format("unknown quant_method '{}'; its quantization cannot be checked",
                         src.method),
         ConfigIssue::unknown_method});
    }
  }
  out.model.quark = std::any_of(out.sources.begin(), out.sources.end(), [](const ConfigSource& s) {
    return s.format == QuantFormat::quark;
  });
  return out;
}

} // namespace qcheck
