// Hostile inputs. Each CLI test writes a crafted model folder into a temporary directory, runs
// `qcheck lint --format json` on it with its address space and CPU time bounded (prlimit), and
// checks the exit code and the exact findings. A crash, a hang or an allocation beyond the bound
// ends the process abnormally, which fails the test: time and memory are asserted by the limits,
// not by a timer. The library tests below pin the parser fixes these inputs led to.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "builder.hpp"
#include "qcheck/input.hpp"
#include "qcheck/json_text.hpp"
#include "qcheck/quant_config.hpp"
#include "qcheck/safetensors.hpp"
#include "sanitizers.hpp"

namespace fs = std::filesystem;
using namespace qcheck;

namespace {

constexpr uint64_t k_mib = 1ull << 20;
constexpr uint64_t k_headroom = 256 * k_mib; // beyond the bytes of the folder
constexpr unsigned k_cpu_seconds = 60;
constexpr const char* k_tensor = R"({"dtype":"BF16","shape":[1],"data_offsets":[0,2]})";

struct Finding
{
  std::string rule;
  std::string severity;
  std::string file;
  std::string message;

  bool operator==(const Finding&) const = default;
};

void
PrintTo(const Finding& f, std::ostream* os)
{
  *os << "{" << f.rule << ", " << f.severity << ", " << f.file << ", \"" << f.message << "\"}";
}

struct LintRun
{
  int exit_code = -1; // -1: ended by a signal (a crash, or a limit was hit)
  int signal = 0;
  std::vector<Finding> findings;
  std::string stdout_text;
  std::string stderr_text;
};

// The command prefix that bounds a run to `bytes` of memory and k_cpu_seconds of CPU time.
std::string
limits(uint64_t bytes)
{
#ifdef QCHECK_TEST_ASAN
  // ASan reserves terabytes of address space for its shadow: bound the resident size instead
  // (ASan checks it), leaving room for redzones and its quarantine. Exit 86 when it is hit.
  const std::string mib = std::to_string(2 * (bytes / k_mib) + 512);
  const char* inherited = std::getenv("ASAN_OPTIONS");
  return "ASAN_OPTIONS='" + std::string(inherited ? inherited : "") +
         ":exitcode=86:hard_rss_limit_mb=" + mib + ":max_allocation_size_mb=" + mib +
         "' prlimit --cpu=" + std::to_string(4 * k_cpu_seconds) + " -- ";
#else
  // Two malloc arenas: address space is then what the program allocates, not what glibc
  // reserves for each thread.
  return "MALLOC_ARENA_MAX=2 prlimit --as=" + std::to_string(bytes) +
         " --cpu=" + std::to_string(k_cpu_seconds) + " -- ";
#endif
}

class Hostile : public ::testing::Test
{
protected:
  void SetUp() override
  {
    m_root =
      fs::temp_directory_path() / ("qcheck-hostile-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_root);
    fs::create_directories(m_root / "model");
    m_model = m_root / "model";
  }
  void TearDown() override
  {
    std::error_code ignored;
    fs::remove_all(m_root, ignored);
  }

  void write(const std::string& name, const std::string& bytes) const
  {
    std::ofstream out(m_model / name, std::ios::binary);
    out << bytes;
    ASSERT_TRUE(out.good()) << name;
  }

  // A shard from its header JSON, followed by `data_size` zero bytes.
  void shard(const std::string& name, const std::string& header, uint64_t data_size) const
  {
    write(name, test::raw_safetensors(header, data_size));
  }

  // A shard of one valid tensor, so that a folder always has weights.
  void valid_shard() const
  {
    shard("model.safetensors", std::string(R"({"w.weight":)") + k_tensor + "}", 2);
  }

  // `prefix`, then `fill` repeated to make `size` bytes in all, then `suffix`.
  void write_large(const std::string& name, const std::string& prefix, const std::string& fill,
                   uint64_t size, const std::string& suffix) const
  {
    uint64_t left = size - prefix.size() - suffix.size();
    ASSERT_EQ(left % fill.size(), 0u) << "the fill must repeat a whole number of times";
    std::string chunk;
    while (chunk.size() < k_mib) {
      chunk += fill;
    }
    std::ofstream out(m_model / name, std::ios::binary);
    out << prefix;
    while (left > 0) {
      const uint64_t n = std::min<uint64_t>(left, chunk.size());
      out.write(chunk.data(), static_cast<std::streamsize>(n));
      left -= n;
    }
    out << suffix;
    ASSERT_TRUE(out.good()) << name;
  }

  // `prefix` followed by a hole up to `size` bytes: instant, and takes no disk space.
  void write_sparse(const std::string& name, const std::string& prefix, uint64_t size) const
  {
    write(name, prefix);
    fs::resize_file(m_model / name, size);
  }

  uint64_t folder_bytes() const
  {
    uint64_t total = 0;
    for (const auto& entry : fs::directory_iterator(m_model)) {
      std::error_code error;
      if (entry.is_regular_file(error)) {
        total += entry.file_size(error);
      }
    }
    return total;
  }

  // Runs `qcheck lint --format json` on the folder with at most the folder's bytes plus
  // `headroom` of memory.
  LintRun lint(uint64_t headroom = k_headroom) const
  {
    const fs::path err = m_root / "stderr.txt";
    const std::string command = limits(folder_bytes() + headroom) + QCHECK_BINARY +
                                " lint --format json '" + m_model.string() + "' 2>'" +
                                err.string() + "'";
    LintRun r;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) {
      return r;
    }
    char buffer[4096];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) {
      r.stdout_text.append(buffer, n);
    }
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    std::ifstream in(err);
    r.stderr_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    const auto json = nlohmann::json::parse(r.stdout_text, nullptr, false);
    if (json.is_object() && json.contains("findings")) {
      for (const auto& f : json["findings"]) {
        r.findings.push_back({f.value("rule", ""), f.value("severity", ""), f.value("file", ""),
                              f.value("message", "")});
      }
    }
    return r;
  }

  void expect_lint(int exit_code, const std::vector<Finding>& findings,
                   uint64_t headroom = k_headroom) const
  {
    const LintRun r = lint(headroom);
    EXPECT_EQ(r.exit_code, exit_code) << "signal " << r.signal << "\n" << r.stderr_text;
    EXPECT_EQ(r.findings, findings) << r.stdout_text.substr(0, 4000);
  }

  fs::path m_root;
  fs::path m_model;
};

Finding
header_error(const std::string& message, const std::string& file = "model.safetensors")
{
  return {"QC001", "error", file, message};
}

Finding
config_error(const std::string& message)
{
  return {"QC009", "error", "config.json", message};
}

// A 64-bit little-endian header length.
std::string
length_bytes(uint64_t length)
{
  std::string out(8, '\0');
  for (size_t i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  }
  return out;
}

std::string
tensor(const std::string& dtype, const std::string& shape, const std::string& offsets)
{
  return R"({"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}";
}

// A compressed-tensors config.json whose ignore list is `entries` (JSON strings, comma-separated).
std::string
config_ignoring(const std::string& entries)
{
  return R"({"model_type":"llama","quantization_config":{)"
         R"("quant_method":"compressed-tensors","ignore":[)" +
         entries + R"(],"config_groups":{"group_0":{"targets":["Linear"]}}}})";
}

} // namespace

// ---- Header lengths ----

// A tensor named as a NextN draft root itself ("model.layers.1.weight"): SGLang's name for it is
// "model.decoder"; the lint reports it, where it once aborted on an out-of-range substring.
TEST_F(Hostile, TensorAtTheDraftRootItself)
{
  write("config.json",
        R"({"model_type": "deepseek_v3", "num_hidden_layers": 1, "num_nextn_predict_layers": 1,
            "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
                                    "activation_scheme": "dynamic"}})");
  shard("model.safetensors",
        R"({"model.layers.0.self_attn.o_proj.weight":
              {"dtype": "BF16", "shape": [8, 8], "data_offsets": [0, 128]},
            "model.layers.1.weight":
              {"dtype": "BF16", "shape": [8, 8], "data_offsets": [128, 256]},
            "model.layers.1.eh_proj.weight":
              {"dtype": "BF16", "shape": [8, 8], "data_offsets": [256, 384]}})",
        384);
  const LintRun r = lint();
  EXPECT_EQ(r.signal, 0) << r.stderr_text;
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("'model.decoder'"), std::string::npos) << r.stdout_text;
}

// One FP8 block-quantized module (F8_E4M3 weight [8, 8], weight_scale_inv [1, 1]) under an fp8
// config whose weight_block_size is `blocks`.
class HostileBlocks : public Hostile
{
protected:
  void fp8_block_checkpoint(const std::string& blocks) const
  {
    write("config.json",
          R"({"model_type": "llama", "quantization_config": {"quant_method": "fp8",
              "weight_block_size": )" +
            blocks + R"(, "activation_scheme": "dynamic"}})");
    shard("model.safetensors",
          R"({"model.layers.0.self_attn.o_proj.weight":
                {"dtype": "F8_E4M3", "shape": [8, 8], "data_offsets": [0, 64]},
              "model.layers.0.self_attn.o_proj.weight_scale_inv":
                {"dtype": "F32", "shape": [1, 1], "data_offsets": [64, 68]}})",
          68);
  }
};

// A block of 0 elements: the layout check divided by it (SIGFPE, exit 136); the configuration
// is now reported and the layout left unchecked.
TEST_F(HostileBlocks, WeightBlockSizeOfZero)
{
  fp8_block_checkpoint("[128, 0]");
  expect_lint(1, {config_error("quantization_config: weight_block_size [128, 0] has a block of 0 "
                               "elements; engines divide each weight dimension by it")});
}

// Blocks of 2^64 - 1 elements: one block per dimension. Rounding up as (n + b - 1) / b wrapped
// and asked for a weight_scale_inv of [0, 0] (a false QC114).
TEST_F(HostileBlocks, WeightBlockSizeAtTheLimit)
{
  fp8_block_checkpoint("[18446744073709551615, 18446744073709551615]");
  expect_lint(0, {});
}

// Empty names in the lists: an empty compressed-tensors ignore entry and an empty
// block_name_to_quantize entry were read at [0] and back() (undefined; libstdc++'s assertions,
// on in the sanitizer build, abort there). The entry is reported as matching nothing.
TEST_F(Hostile, EmptyIgnoreEntry)
{
  write("config.json",
        R"({"model_type": "llama", "quantization_config": {"quant_method": "compressed-tensors",
            "format": "float-quantized", "config_groups": {"group_0": {"targets": ["Linear"],
            "weights": {"num_bits": 8, "type": "float"}}}, "ignore": [""]}})");
  shard("model.safetensors",
        R"({"model.layers.0.self_attn.o_proj.weight":
              {"dtype": "BF16", "shape": [8, 8], "data_offsets": [0, 128]}})",
        128);
  const LintRun r = lint();
  EXPECT_EQ(r.signal, 0) << r.stderr_text;
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_NE(std::find(r.findings.begin(), r.findings.end(),
                      Finding{"QC112", "warning", "config.json",
                              "ignore entry '' matches no module of the checkpoint"}),
            r.findings.end())
    << r.stdout_text;
}

TEST_F(Hostile, EmptyBlockName)
{
  write("config.json",
        R"({"model_type": "llama", "quantization_config": {"quant_method": "gptq", "bits": 4,
            "group_size": 128, "block_name_to_quantize": [""]}})");
  shard("model.safetensors",
        R"({"model.layers.0.self_attn.o_proj.weight":
              {"dtype": "BF16", "shape": [8, 8], "data_offsets": [0, 128]}})",
        128);
  // The BF16 o_proj: vLLM infers it unquantized; SGLang reads dynamic alone.
  expect_lint(1, {{"QC101", "error", "config.json",
                   "model.layers.0: 1 module (1 tensor, BF16) stored unquantized but declared "
                   "gptq quantized; SGLang has no parameter for the BF16 weight: depending on "
                   "the model its loader stops with a `KeyError` or skips the weight (logging "
                   "`Parameter <module>.weight not found in params_dict`, or silently), the "
                   "packed layer left unloaded (garbage output)"},
                  {"QC116", "info", "config.json",
                   "no explicit module list: vLLM infers which Linear layers are quantized from "
                   "the stored dtypes"}});
}

TEST_F(Hostile, HeaderLengthOfTwoToThe64Minus1)
{
  write("model.safetensors", std::string(8, '\xff') + std::string(16, '\0'));
  expect_lint(1, {header_error("header length 18446744073709551615 exceeds the format's limit of "
                               "100000000 bytes")});
}

TEST_F(Hostile, HeaderLengthBeyondTheFile)
{
  write("model.safetensors", length_bytes(4096) + "{}");
  expect_lint(1, {header_error("header length 4096 exceeds the 2 bytes that follow it in the "
                               "file")});
}

TEST_F(Hostile, HeaderLengthAtTheLimitInATinyFile)
{
  write("model.safetensors", length_bytes(100'000'000) + "{}");
  expect_lint(1, {header_error("header length 100000000 exceeds the 2 bytes that follow it in "
                               "the file")});
}

TEST_F(Hostile, HeaderOf100MBIsReadWithAWarning)
{
  write_large("model.safetensors", length_bytes(100'000'000) + "{}", " ", 100'000'008, "");
  expect_lint(0, {{"QC001", "warning", "model.safetensors",
                   "header is 100000000 bytes; Hugging Face Hub clients refuse headers above "
                   "25000000 bytes"}});
}

TEST_F(Hostile, HeaderOneByteOverTheLimit)
{
  write_sparse("model.safetensors", length_bytes(100'000'001) + "{}", 100'000'009);
  expect_lint(1, {header_error("header length 100000001 exceeds the format's limit of 100000000 "
                               "bytes")});
}

TEST_F(Hostile, DenseHeaderWithoutTheMemoryToParseIt)
{
#ifdef QCHECK_TEST_ASAN
  GTEST_SKIP() << "needs an address-space limit, which ASan cannot run under";
#endif
  // 10 million dimensions in 20 MB: simdjson reserves about 13 bytes per header byte.
  std::string shape = "[1";
  for (int i = 1; i < 10'000'000; ++i) {
    shape += ",1";
  }
  shard("model.safetensors", R"({"a":)" + tensor("U8", shape + "]", "[0,1]") + "}", 1);
  expect_lint(1,
              {{"QC001", "error", "model.safetensors",
                "not enough memory to parse the 20000051-byte header"}},
              100 * k_mib);
}

// ---- Header JSON ----

TEST_F(Hostile, MillionNestedBracketsInAHeader)
{
  const std::string header =
    R"({"a":)" + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  shard("model.safetensors", header, 0);
  expect_lint(1, {header_error("header is not valid JSON: nested more than 64 levels deep")});
}

TEST_F(Hostile, DuplicateTensorInAHeader)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[1]", "[0,2]") + R"(,"a.weight":)" +
          tensor("BF16", "[1]", "[2,4]") + "}",
        4);
  expect_lint(1, {header_error("'a.weight' appears more than once in the header")});
}

TEST_F(Hostile, InvalidUtf8InATensorName)
{
  shard("model.safetensors", "{\"a.\xff.weight\":" + std::string(k_tensor) + "}", 2);
  expect_lint(1, {header_error("header is not valid JSON: not valid UTF-8")});
}

TEST_F(Hostile, TensorNamesWithSlashesDotsAndNulAreOnlyNames)
{
  shard("model.safetensors",
        R"({"../../etc/passwd.weight":)" + tensor("BF16", "[1]", "[0,2]") +
          R"(,"/abs/path.weight":)" + tensor("BF16", "[1]", "[2,4]") + R"(,"x\u0000y.weight":)" +
          tensor("BF16", "[1]", "[4,6]") + "}",
        6);
  expect_lint(0, {});
}

TEST_F(Hostile, OffsetsThatEndBeforeTheyBegin)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[1]", "[18446744073709551615,1]") + "}", 2);
  expect_lint(1, {header_error("tensor 'a.weight': data_offsets [18446744073709551615, 1] end "
                               "before they begin")});
}

TEST_F(Hostile, OffsetBeyondSixtyFourBits)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[1]", "[0,18446744073709551616]") + "}", 2);
  expect_lint(1, {header_error("header is not valid JSON: a number is malformed or does not fit "
                               "in 64 bits")});
}

TEST_F(Hostile, OffsetsAtTheTopOfTheRange)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[1]", "[18446744073709551614,18446744073709551615]") +
          "}",
        2);
  expect_lint(1, {header_error("tensor 'a.weight': data_offsets [18446744073709551614, "
                               "18446744073709551615] hold 1 bytes but BF16 [1] needs 2"),
                  header_error("tensor 'a.weight': data starts at byte 18446744073709551614, "
                               "leaving a gap of 18446744073709551614 bytes at the start of the "
                               "data region")});
}

TEST_F(Hostile, OverlappingOffsets)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[2]", "[0,4]") + R"(,"b.weight":)" +
          tensor("BF16", "[2]", "[2,6]") + "}",
        6);
  expect_lint(1, {header_error("tensor 'b.weight': data [2, 6) overlaps 'a.weight', which ends "
                               "at byte 4")});
}

TEST_F(Hostile, GapBetweenOffsets)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[1]", "[0,2]") + R"(,"b.weight":)" +
          tensor("BF16", "[1]", "[4,6]") + "}",
        6);
  expect_lint(1, {header_error("tensor 'b.weight': data starts at byte 4, leaving a gap of 2 "
                               "bytes after 'a.weight'")});
}

TEST_F(Hostile, ShapeWithMoreElementsThanSixtyFourBits)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[4294967296,4294967296]", "[0,2]") + "}", 2);
  expect_lint(1, {header_error("tensor 'a.weight': shape [4294967296, 4294967296] has more "
                               "elements than fit in 64 bits")});
}

TEST_F(Hostile, ShapeWithMoreBitsThanSixtyFourBits)
{
  shard("model.safetensors",
        R"({"a.weight":)" + tensor("BF16", "[4294967296,4294967295]", "[0,2]") + "}", 2);
  expect_lint(1, {header_error("tensor 'a.weight': BF16 [4294967296, 4294967295] is larger than "
                               "2^64 bits")});
}

TEST_F(Hostile, ScalarAndEmptyTensorsAreValid)
{
  shard("model.safetensors",
        R"({"scale":)" + tensor("F32", "[]", "[0,4]") + R"(,"empty.weight":)" +
          tensor("BF16", "[0,4096]", "[4,4]") + R"(,"none":)" + tensor("U8", "[0]", "[4,4]") + "}",
        4);
  expect_lint(0, {});
}

// ---- Files that are not what their names say ----

TEST_F(Hostile, FifoDirectoryAndDanglingLinkNamedSafetensors)
{
  valid_shard();
  ASSERT_EQ(::mkfifo((m_model / "fifo.safetensors").c_str(), 0600), 0);
  fs::create_directory(m_model / "dir.safetensors");
  fs::create_symlink(m_root / "missing", m_model / "dangling.safetensors");
  expect_lint(
    1, {{"QC008", "error", "dangling.safetensors",
         "is a dangling or looping symbolic link, not a regular file; not read"},
        {"QC008", "error", "dir.safetensors", "is a directory, not a regular file; not read"},
        {"QC008", "error", "fifo.safetensors",
         "is a special file (FIFO, socket or device), not a regular file; not read"}});
}

TEST_F(Hostile, ShardThatLinksToATextFile)
{
  {
    std::ofstream(m_root / "notes.txt") << "hello world, this is not a checkpoint\n";
  }
  fs::create_symlink(m_root / "notes.txt", m_model / "model.safetensors");
  expect_lint(1, {header_error("starts with the text \"hello wo\" where the 8-byte header length "
                               "belongs; not a safetensors file")});
}

TEST_F(Hostile, ShardThatIsAGitLfsPointer)
{
  write("model.safetensors",
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 4920000000\n");
  expect_lint(1, {header_error("is a Git LFS pointer, not the tensor file: fetch the data with "
                               "`git lfs pull`")});
}

TEST_F(Hostile, IndexPathsThatLeaveTheFolder)
{
  valid_shard();
  write("model.safetensors.index.json",
        R"({"metadata":{},"weight_map":{"w.weight":"model.safetensors",)"
        R"("b.weight":"../../etc/passwd","c.weight":"/etc/passwd"}})");
  const std::string index = "model.safetensors.index.json";
  expect_lint(1, {{"QC007", "error", index,
                   "weight_map sends 'b.weight' to '../../etc/passwd', a path outside the model "
                   "folder; refused"},
                  {"QC007", "error", index,
                   "weight_map sends 'c.weight' to '/etc/passwd', an absolute path, outside the "
                   "model folder; refused"}});
}

// ---- Configs ----

TEST_F(Hostile, MillionNestedBracketsInConfig)
{
  valid_shard();
  write("config.json", std::string(1'000'000, '[') + std::string(1'000'000, ']'));
  expect_lint(1, {config_error("invalid JSON at line 1, column 513: nested more than 512 levels "
                               "deep")});
}

// Deeper than qcheck reads (512) yet within simdjson's 1,024: simdjson parses it, and the DOM
// must not be used in place of the positional scan that refuses it.
TEST_F(Hostile, ConfigNested600Deep)
{
  valid_shard();
  write("config.json",
        R"({"model_type":"llama","a":)" + std::string(600, '[') + std::string(600, ']') + "}");
  expect_lint(1, {config_error("invalid JSON at line 1, column 538: nested more than 512 levels "
                               "deep")});
}

TEST_F(Hostile, DuplicateKeyInConfig)
{
  valid_shard();
  write("config.json", R"({"model_type":"llama","model_type":"qwen3"})");
  expect_lint(0, {{"QC009", "warning", "config.json",
                   "duplicate key \"model_type\" in the root (line 1, column 23); engines "
                   "(Python's json) keep the last value"}});
}

TEST_F(Hostile, ConfigWithNanAndInfinity)
{
  valid_shard();
  write("config.json", R"({"model_type":"llama","rope_theta":NaN,"max":Infinity})");
  expect_lint(1, {config_error("contains NaN, which is not JSON (line 1, column 36)")});
}

TEST_F(Hostile, ConfigOf50MBOfTinyValues)
{
  // 25 million values: the positional scanner refuses them before allocating anything.
  valid_shard();
  write_large("config.json", R"({"model_type":"llama","x":[)", "0,", 50'000'000, "0]}");
  expect_lint(1, {config_error("more than 4194304 JSON values (line 1, column 8388629), far more "
                               "than any configuration holds; not read")});
}

TEST_F(Hostile, ConfigOfTooManyValuesThatSimdjsonWouldRead)
{
  // 6 MB, short enough for simdjson, which reads the 2.1 million empty arrays: the positional
  // scanner's refusal still holds.
  valid_shard();
  write_large("config.json", R"({"model_type":"llama","x":[)", "[],", 6'300'031, "[]]}");
  expect_lint(1, {config_error("more than 4194304 JSON values (line 1, column 6291478), far more "
                               "than any configuration holds; not read")});
}

TEST_F(Hostile, OutOfMemoryWhileShardsAreReadEndsWithOneLine)
{
#ifdef QCHECK_TEST_ASAN
  GTEST_SKIP() << "needs an address-space limit, which ASan cannot run under";
#endif
  // The index (100,000 entries naming tensors the shard lacks) is read while a helper thread
  // reads the shard, and 16 MiB leave no room for its findings. The shortage must end the run
  // with the CLI's line: it used to end in std::terminate, a joinable thread being destroyed.
  valid_shard();
  std::string index = R"({"metadata":{},"weight_map":{"w.weight":"model.safetensors")";
  for (int i = 0; i < 100'000; ++i) {
    index += ",\"model.layers." + std::to_string(i / 5000) + ".mlp.experts." +
             std::to_string(i % 5000) + ".gate_proj.weight\":\"model.safetensors\"";
  }
  write("model.safetensors.index.json", index + "}}");
  const LintRun r = lint(16 * k_mib);
  EXPECT_EQ(r.exit_code, 2) << "signal " << r.signal << "\n" << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "qcheck: error: out of memory\n");
}

TEST_F(Hostile, ConfigOf50MBWithALongStringIsRead)
{
  valid_shard();
  write_large("config.json", R"({"model_type":"llama","_name_or_path":")", "x", 50'000'000,
              R"("})");
  expect_lint(0, {});
}

TEST_F(Hostile, ConfigOverTheSizeLimit)
{
  valid_shard();
  write_sparse("config.json", "{", 70'000'000);
  expect_lint(1, {config_error("file is 70000000 bytes, more than the 67108864 bytes allowed")});
}

TEST_F(Hostile, ConfigObjectWithThreeHundredThousandKeys)
{
  // nlohmann's ordered_json inserts in linear time per key: this took minutes before the config
  // reader indexed the keys of each object.
  valid_shard();
  std::string text = R"({"model_type":"llama","x":{)";
  for (int i = 0; i < 300'000; ++i) {
    text += (i == 0 ? "\"k" : ",\"k") + std::to_string(i) + "\":0";
  }
  write("config.json", text + "}}");
  expect_lint(0, {});
}

TEST_F(Hostile, BacktrackingBombInAnIgnoreRegex)
{
  // re:(a+)+$ against "aaa...a!" takes exponential time in a backtracking engine.
  const std::string name(100'000, 'a');
  shard("model.safetensors",
        "{\"" + name + "!.weight\":" + tensor("BF16", "[2,2]", "[0,8]") + ",\"" + name +
          ".weight\":" + tensor("BF16", "[2,2]", "[8,16]") + "}",
        16);
  write("config.json", R"({"model_type":"llama","quantization_config":{)"
                       R"("quant_method":"compressed-tensors","format":"float-quantized",)"
                       R"("ignore":["re:(a+)+$"],"config_groups":{"group_0":{)"
                       R"("targets":["Linear"],"weights":{"num_bits":8,"type":"float"}}}}})");
  expect_lint(1, {{"QC101", "error", "config.json",
                   name + "!: 1 module (1 tensor, BF16) stored unquantized but declared "
                          "compressed-tensors quantized; vLLM and SGLang fail with 8-bit "
                          "parameters receive BF16 values: no crash, garbage output"}});
}

// 20,000 unused ignore entries, each between two used ones (one QC112 warning each): positions
// are resolved with one scan of the config, not one per finding.
TEST_F(Hostile, ConfigWithTwentyThousandUnusedIgnoreEntries)
{
  valid_shard();
  std::string entries = "\"w\"";
  for (int i = 0; i < 20'000; ++i) {
    entries += ",\"model.layers." + std::to_string(i) + ".mlp\",\"w\"";
  }
  write("config.json", config_ignoring(entries));
  const LintRun r = lint();
  EXPECT_EQ(r.exit_code, 0) << "signal " << r.signal << "\n" << r.stderr_text;
  EXPECT_EQ(r.findings.size(), 20'000u);
}

// The same 20,000 in a row: one finding for the run.
TEST_F(Hostile, ConfigWithTwentyThousandUnusedIgnoreEntriesInARow)
{
  valid_shard();
  std::string entries = "\"w\"";
  for (int i = 0; i < 20'000; ++i) {
    entries += ",\"model.layers." + std::to_string(i) + ".mlp\"";
  }
  write("config.json", config_ignoring(entries));
  expect_lint(0, {{"QC112", "warning", "config.json",
                   "20000 ignore entries in a row match no module of the checkpoint, from "
                   "'model.layers.0.mlp' to 'model.layers.19999.mlp'"}});
}

// ---- The parser fixes, at the library level ----

TEST(HostileLibrary, JsonTextRefusesMoreValuesThanTheLimitBeforeAllocating)
{
  // The array and 2^22 - 1 elements: exactly the limit.
  std::string text = "[0";
  for (size_t i = 2; i < (size_t{1} << 22); ++i) {
    text += ",0";
  }
  EXPECT_TRUE(locate(text + "]", "/4194302"));
  const auto refused = locate(text + ",0]", "");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "more than 4194304 JSON values (line 1, column 8388607), far more "
                             "than any configuration holds; not read");
}

TEST(HostileLibrary, JsonTextCountsNoValuesInsideStrings)
{
  EXPECT_TRUE(locate("[\"" + std::string(5'000'000, ',') + "\"]", "/0"));
}

// Found by fuzz_json_patch: the new value was checked for NaN and Infinity but not for numbers
// that no double holds, which nlohmann refuses to read and Python reads as inf.
TEST(HostileLibrary, AddObjectMemberRefusesANumberOutOfRange)
{
  const auto added = add_object_member(R"({"dynamic":{}})", "/dynamic", "k", R"({"x":-1e400})");
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error(),
            "cannot add \"k\" to /dynamic: its value contains -1e400, which is out of range for a "
            "double");
  EXPECT_TRUE(add_object_member(R"({"dynamic":{}})", "/dynamic", "k", R"({"x":1e-400})"));
}

TEST(HostileLibrary, ConfigKeysKeepTheirOrderAndTheLastDuplicateValue)
{
  const ConfigSource source =
    parse_quant_block("config.json", "/quantization_config",
                      R"({"quant_method":"gptq","dynamic":{"-:.*mtp.*":{},"+:.*layers\\.0\\.":)"
                      R"({"bits":8},"-:.*visual.*":{},"-:.*mtp.*":{"bits":16}},)"
                      R"("quant_method":"gptq"})");
  ASSERT_EQ(source.format, QuantFormat::gptq);
  std::vector<std::string> keys;
  for (const auto& rule : source.dynamic) {
    keys.push_back(rule.key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"-:.*mtp.*", "+:.*layers\\.0\\.", "-:.*visual.*"}));
}

TEST(HostileLibrary, ConfigReaderStillRefusesInvalidJson)
{
  MemoryFileSystem fs;
  fs.add_file("m/config.json", R"({"a":1} x)");
  const Declaration d = read_declaration(fs, "m");
  EXPECT_FALSE(d.has_config);
  ASSERT_EQ(d.problems.size(), 1u);
  EXPECT_EQ(d.problems[0].message,
            "invalid JSON at line 1, column 9: unexpected text after the end of the JSON value");
}

TEST(HostileLibrary, HeaderPaddingIsNotParsed)
{
  const Header h = parse_header("{}" + std::string(10'000'000, ' '), 0);
  EXPECT_TRUE(h.readable);
  EXPECT_TRUE(h.problems.empty());
  EXPECT_EQ(h.header_size, 10'000'002u);
}

TEST(HostileLibrary, TextWhereTheLengthBelongsIsNamed)
{
  MemoryFileSystem fs;
  fs.add_file("a.safetensors", "{\"a\":\t\"b\"}");
  fs.add_file("b.safetensors", "version https://git-lfs.github.com/spec/v1\noid sha256:00\n");
  fs.add_file("c.safetensors", "\r\n\r\n\"q\"\n");
  const auto message = [&](const std::string& path) {
    const Header h = read_header(**fs.open(path));
    EXPECT_EQ(h.problems.size(), 1u);
    EXPECT_EQ(h.problems[0].issue, HeaderIssue::length_over_limit);
    return h.problems[0].message;
  };
  EXPECT_EQ(message("a.safetensors"), "starts with the text \"{\\\"a\\\":\\t\\\"b\" where the "
                                      "8-byte header length belongs; not a safetensors file");
  EXPECT_EQ(message("b.safetensors"),
            "is a Git LFS pointer, not the tensor file: fetch the data with `git lfs pull`");
  EXPECT_EQ(message("c.safetensors"), "starts with the text \"\\r\\n\\r\\n\\\"q\\\"\\n\" where "
                                      "the 8-byte header length belongs; not a safetensors file");
}

// The nesting pre-scan runs only when the thread's parser must grow; a parser already large
// enough stops at the same depth, with the same message.
TEST(HostileLibrary, DeepNestingIsRefusedAfterALargeHeaderToo)
{
  MemoryFileSystem fs;
  std::string big = "{\"__metadata__\":{\"pad\":\"" + std::string(400'000, 'x') + "\"}}";
  fs.add_file("big.safetensors", test::raw_safetensors(big, 0));
  const std::string deep = "{\"a\":" + std::string(1000, '[') + std::string(1000, ']') + "}";
  fs.add_file("deep.safetensors", test::raw_safetensors(deep, 0));
  // Deep and never closed (fixtures/malformed/nested.safetensors): the large parser fails on
  // the brackets first, and must still say what the pre-scan says.
  fs.add_file("unclosed.safetensors", test::raw_safetensors("{\"a\":" + std::string(1000, '['), 0));
  for (int round = 0; round < 2; ++round) {
    for (const std::string file : {"deep.safetensors", "unclosed.safetensors"}) {
      SCOPED_TRACE(file);
      EXPECT_TRUE(read_header(**fs.open("big.safetensors")).readable);
      const Header h = read_header(**fs.open(file));
      EXPECT_FALSE(h.readable);
      ASSERT_EQ(h.problems.size(), 1u);
      EXPECT_EQ(h.problems[0].message, "header is not valid JSON: nested more than 64 levels deep");
    }
  }
}
