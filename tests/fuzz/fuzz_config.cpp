// Fuzzes the configuration reader: the input is stored as config.json, then as
// hf_quant_config.json, of an in-memory model folder and read with read_declaration; it is also
// parsed as a bare quantization block with parse_quant_block. Checks the Declaration invariants;
// that config.json reads the same from simdjson's DOM as from nlohmann's tree; that the block
// reads the same as nlohmann's own ordered parse of it, re-serialised (which keeps a repeated key
// at its first position with its last value, as Python does); and that the file's JSON problems
// are check_json's verdict on it.
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "qcheck/input.hpp"
#include "qcheck/json_text.hpp"
#include "qcheck/quant_config.hpp"

using namespace qcheck;

namespace {

bool
known_file(std::string_view file)
{
  return file == "config.json" || file == "hf_quant_config.json" ||
         file == "quantization_config.json";
}

void
check_declaration(const Declaration& declaration, const std::string& file)
{
  bool invalid = false;
  for (const ConfigProblem& problem : declaration.problems) {
    QCHECK_FUZZ_CHECK(problem.file == file);
    QCHECK_FUZZ_CHECK(!problem.message.empty());
    invalid |= problem.issue == ConfigIssue::invalid;
  }
  for (const ConfigSource& source : declaration.sources) {
    QCHECK_FUZZ_CHECK(source.file == file);
    QCHECK_FUZZ_CHECK(source.pointer.empty() || source.pointer[0] == '/');
    QCHECK_FUZZ_CHECK(!invalid); // an unreadable file declares nothing
    QCHECK_FUZZ_CHECK(!source.has_list || !source.list_key.empty());
  }
  if (file == "config.json") {
    QCHECK_FUZZ_CHECK(declaration.has_config == !invalid);
    QCHECK_FUZZ_CHECK(declaration.sources.size() <= 1);
  } else {
    QCHECK_FUZZ_CHECK(!declaration.has_config);
  }
}

// Every field of a block, as one string.
std::string
summary(const ConfigSource& s)
{
  std::string out = s.method + "|" + std::string(to_string(s.format)) + "|" + s.algo + "|" +
                    s.list_key + "|" + (s.has_list ? "1" : "0") + "|" + s.ct_format + "|" +
                    std::to_string(s.group_size) + "|" + std::to_string(s.bits) + "|" +
                    (s.lm_head ? "1" : "0") + "|";
  const auto list = [&](const auto& items) {
    for (const auto& item : items) {
      out += std::string(item) + ",";
    }
    out += "|";
  };
  list(s.excludes);
  list(s.modules_in_block);
  list(s.block_names);
  list(s.not_convert);
  for (const auto& g : s.groups) {
    out += g.name + ":" + g.format + ":" + std::to_string(g.num_bits) + ":" + g.type + ":";
    list(g.targets);
  }
  for (const auto& rule : s.dynamic) {
    out += rule.key + (rule.negative ? "-" : "+") + rule.regex + ",";
  }
  const auto settings = [&](const LayerSettings& l) {
    out += "(" + l.bits + ";" + l.group_size + ";" + l.sym + ")";
  };
  settings(s.settings);
  for (const auto& entry : s.extra_config) {
    out += entry.key + "=" + std::to_string(entry.bits);
    settings(entry.written);
    out += ",";
  }
  for (const auto& [module, algo] : s.quantized_layers) {
    out += module + "=" + algo + ",";
  }
  for (const uint64_t size : s.weight_block_size) {
    out += std::to_string(size) + ",";
  }
  return out;
}

// The model facts and the block config.json declares, as one string.
std::string
config_summary(const Declaration& d)
{
  const ModelInfo& m = d.model;
  std::string out = m.model_type + "|" + m.text_model_type + "|" +
                    (m.num_hidden_layers ? std::to_string(*m.num_hidden_layers) : "-") + "|" +
                    std::to_string(m.num_mtp_layers) + "|" + m.mtp_key + "|";
  for (const auto& items : {m.architectures, m.disable_quant_module}) {
    for (const auto& item : items) {
      out += item + ",";
    }
    out += "|";
  }
  for (const ConfigSource& s : d.sources) {
    out += s.pointer + ":" + summary(s) + "|";
  }
  return out;
}

// config.json as read from simdjson's DOM (clean text) and from nlohmann's tree: the same root
// object with one more member holding "-0", which simdjson is never given. Compared when the
// text is a readable object (other text has problems whose columns the member would move).
void
check_readers_agree(const std::string& text, const Declaration& declaration)
{
  const size_t open = text.find_first_not_of(" \t\r\n");
  if (open == std::string::npos || text[open] != '{' || !declaration.has_config ||
      text.find("qcheck_pad") != std::string::npos) {
    return;
  }
  const size_t next = text.find_first_not_of(" \t\r\n", open + 1);
  const bool empty = next != std::string::npos && text[next] == '}';
  const std::string padded = text.substr(0, open + 1) + R"("qcheck_pad": "-0")" +
                             (empty ? "" : ", ") + text.substr(open + 1);
  MemoryFileSystem fs;
  fs.add_file("model/config.json", padded);
  const Declaration tree = read_declaration(fs, "model");
  QCHECK_FUZZ_CHECK(tree.has_config);
  QCHECK_FUZZ_CHECK(config_summary(tree) == config_summary(declaration));
}

// The file's JSON problems are the positional scan's verdict, whichever parser read the file:
// its syntax error, else (when the text is not JSON to nlohmann) its reason, else a repeated
// key, else none. A byte order mark is reported beside them, once.
void
check_json_verdict(const Declaration& declaration, std::string_view text, bool json)
{
  std::vector<const ConfigProblem*> invalid, repeated;
  size_t marks = 0;
  for (const ConfigProblem& problem : declaration.problems) {
    if (problem.issue == ConfigIssue::python_refuses) {
      ++marks;
    } else if (problem.issue == ConfigIssue::invalid && problem.message != "is not a JSON object") {
      invalid.push_back(&problem);
    } else if (problem.issue == ConfigIssue::duplicate_key) {
      repeated.push_back(&problem);
    }
  }
  QCHECK_FUZZ_CHECK(marks == (text.starts_with("\xEF\xBB\xBF") ? 1u : 0u));
  const auto checked = check_json(text);
  if (!checked) {
    QCHECK_FUZZ_CHECK(invalid.size() == 1 && invalid[0]->message == checked.error());
    QCHECK_FUZZ_CHECK(repeated.empty());
  } else if (!json) {
    QCHECK_FUZZ_CHECK(invalid.size() == 1 &&
                      invalid[0]->message == checked->value_or("not valid JSON"));
  } else {
    QCHECK_FUZZ_CHECK(invalid.empty());
    const bool duplicate = checked->has_value() && (*checked)->starts_with("duplicate key");
    QCHECK_FUZZ_CHECK(repeated.size() == (duplicate ? 1u : 0u));
    QCHECK_FUZZ_CHECK(!duplicate || repeated[0]->message.starts_with(**checked));
  }
}

// A list read in place (EntryList::read_span()) is where its block's pointer names it: its span,
// its key and each element's string token are those locate_all() finds at the same pointers.
void
check_read_spans(const Declaration& declaration)
{
  for (const ConfigSource& s : declaration.sources) {
    const auto kept = std::find_if(declaration.texts.begin(), declaration.texts.end(),
                                   [&](const auto& t) { return t.first == s.file; });
    if (kept == declaration.texts.end()) {
      continue;
    }
    const std::string_view text = kept->second.bytes;
    const EntryList::TextSpan* span = s.excludes.read_span(text);
    if (span == nullptr) {
      continue;
    }
    QCHECK_FUZZ_CHECK(s.has_list && s.positions.empty());
    QCHECK_FUZZ_CHECK(text.substr(span->key).starts_with("\"" + s.list_key + "\""));
    const std::string list = s.pointer + "/" + s.list_key;
    std::vector<std::string> pointers{list};
    for (size_t i = 0; i < s.excludes.size(); ++i) {
      pointers.push_back(list + "/" + std::to_string(i));
    }
    const auto spans = locate_all(text, pointers);
    QCHECK_FUZZ_CHECK(spans[0] && spans[0]->begin == span->begin && spans[0]->end == span->end);
    for (size_t i = 0; i < s.excludes.size(); ++i) {
      const auto token = s.excludes.element_token(text, i);
      QCHECK_FUZZ_CHECK(token && spans[i + 1] && token->first == spans[i + 1]->begin &&
                        token->second == spans[i + 1]->end);
    }
  }
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto reference = nlohmann::ordered_json::parse(text, nullptr, false);

  const ConfigSource block = parse_quant_block("config.json", "/quantization_config", text);
  std::string file_block; // hf_quant_config.json's block as read_declaration reads the file
  for (const char* name : {"config.json", "hf_quant_config.json"}) {
    MemoryFileSystem fs;
    fs.add_file(std::string("model/") + name, text);
    const Declaration declaration = read_declaration(fs, "model");
    check_declaration(declaration, name);
    check_read_spans(declaration);
    check_json_verdict(declaration, text, !reference.is_discarded());
    if (std::string_view(name) == "config.json") {
      check_readers_agree(text, declaration);
    }
    for (const ConfigSource& source : declaration.sources) {
      QCHECK_FUZZ_CHECK(known_file(source.file));
      if (source.file == "hf_quant_config.json") {
        file_block = summary(source);
      }
    }
  }
  // The file is read from simdjson's DOM when its text is clean, the block always from an
  // ordered_json tree: the same fields either way.
  QCHECK_FUZZ_CHECK(file_block.empty() || file_block == summary(block));

  QCHECK_FUZZ_CHECK(block.file == "config.json");
  // The block's own pointer, or its nested "quantization" object's, where its lists are read
  // (a6ab422).
  QCHECK_FUZZ_CHECK(block.pointer == "/quantization_config" ||
                    block.pointer == "/quantization_config/quantization");

  if (reference.is_discarded()) {
    QCHECK_FUZZ_CHECK(summary(block) == summary(ConfigSource{}));
    return 0;
  }
  const std::string canonical =
    reference.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  const ConfigSource again = parse_quant_block("config.json", "/quantization_config", canonical);
  QCHECK_FUZZ_CHECK(summary(block) == summary(again));
  return 0;
}
