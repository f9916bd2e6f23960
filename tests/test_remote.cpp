// Remote checkpoints over a real HTTP server on loopback (tests/http_server.py): the hub layout,
// plain folders, misbehaving servers, the token, and the local hub cache.
#include "qcheck/inspect.hpp"
#include "qcheck/lint.hpp"
#include "qcheck/remote.hpp"

#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

constexpr const char* k_token = "hf_qcheckTestToken_9f2c41d7e0";

std::string
read_text(const fs::path& path)
{
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void
write_text(const fs::path& path, const std::string& text)
{
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The loopback server, started for the suite and stopped at its end. It also stops by itself
// when our end of its standard input closes, or after its lifetime.
class TestServer
{
public:
  bool start(const std::vector<std::string>& extra)
  {
    int in_pipe[2];
    int out_pipe[2];
    if (::pipe(in_pipe) != 0 || ::pipe(out_pipe) != 0) {
      return false;
    }
    const std::string script = std::string(QCHECK_SOURCE_DIR) + "/tests/http_server.py";
    std::vector<std::string> args{"python3", script, "--lifetime", "600"};
    args.insert(args.end(), extra.begin(), extra.end());
    m_pid = ::fork();
    if (m_pid == 0) {
      ::dup2(in_pipe[0], STDIN_FILENO);
      ::dup2(out_pipe[1], STDOUT_FILENO);
      ::close(in_pipe[1]);
      ::close(out_pipe[0]);
      std::vector<char*> argv;
      for (auto& a : args) {
        argv.push_back(a.data());
      }
      argv.push_back(nullptr);
      ::execvp("python3", argv.data());
      ::_exit(127);
    }
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    m_stdin = in_pipe[1];
    // The first line is the port; wait at most 20 s for it.
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_pipe[0], POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) {
        continue;
      }
      char buffer[64];
      const ssize_t n = ::read(out_pipe[0], buffer, sizeof buffer);
      if (n <= 0) {
        break;
      }
      line.append(buffer, static_cast<size_t>(n));
    }
    ::close(out_pipe[0]);
    m_port = std::atoi(line.c_str());
    return m_port > 0;
  }

  void stop()
  {
    if (m_stdin >= 0) {
      ::close(m_stdin);
      m_stdin = -1;
    }
    if (m_pid <= 0) {
      return;
    }
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(m_pid, nullptr, WNOHANG) == m_pid) {
        m_pid = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, nullptr, 0);
    m_pid = -1;
  }

  int port() const { return m_port; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(m_port); }

private:
  pid_t m_pid = -1;
  int m_stdin = -1;
  int m_port = 0;
};

// A GET on loopback without libcurl: status line, headers and body as one string.
std::string
raw_get(int port, const std::string& path)
{
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return {};
  }
  const std::string request =
    "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  (void)!::write(fd, request.data(), request.size());
  std::string out;
  char buffer[8192];
  for (int i = 0; i < 100000; ++i) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) {
      break;
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string
body_of(const std::string& response)
{
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : response.substr(end + 4);
}

struct CliRun
{
  int exit_code = -1;
  std::string out;
  std::string err;
};

uint64_t
header_size_of(const fs::path& file)
{
  std::ifstream in(file, std::ios::binary);
  std::array<unsigned char, 8> prefix{};
  in.read(reinterpret_cast<char*>(prefix.data()), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | prefix[static_cast<size_t>(i)];
  }
  return n;
}

// A safetensors file: one BF16 tensor [rows, 64] of zeros.
std::string
safetensors_file(uint64_t rows)
{
  const uint64_t data = rows * 64 * 2;
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"},\"model.embed_tokens.weight\":"
                       "{\"dtype\":\"BF16\",\"shape\":[" +
                       std::to_string(rows) + ",64],\"data_offsets\":[0," + std::to_string(data) +
                       "]}}";
  while (header.size() % 8 != 0) {
    header += ' ';
  }
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) {
    out[static_cast<size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  out += header;
  out.append(static_cast<size_t>(data), '\0');
  return out;
}

class RemoteTest : public ::testing::Test
{
public:
  static void SetUpTestSuite()
  {
    s_tmp = fs::temp_directory_path() / ("qcheck-remote-" + std::to_string(::getpid()));
    fs::remove_all(s_tmp);
    // A 24 MiB checkpoint whose header is tiny: what a server that ignores Range would send.
    write_text(s_tmp / "repos/big/config.json",
               "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
               "\"num_hidden_layers\": 1}\n");
    write_text(s_tmp / "repos/big/model.safetensors", safetensors_file(24 * 8192));
    const std::string fixtures = QCHECK_FIXTURES;
    s_server = new TestServer;
    s_started = s_server->start(
      {"--mount", "fixtures=" + fixtures, "--mount", "formats=" + fixtures + "/formats", "--mount",
       "tmp=" + (s_tmp / "repos").string(), "--token", k_token, "--page-size", "4"});
  }

  static void TearDownTestSuite()
  {
    s_server->stop();
    delete s_server;
    s_server = nullptr;
    fs::remove_all(s_tmp);
  }

  void SetUp() override { ASSERT_TRUE(s_started) << "the loopback HTTP server did not start"; }

  static std::string endpoint(const std::string& mode = "hub")
  {
    return s_server->base() + "/" + mode;
  }

  static qcheck::HttpOptions options(const std::string& mode = "hub")
  {
    qcheck::HttpOptions o;
    o.endpoint = endpoint(mode);
    o.token = k_token;
    o.first_backoff = std::chrono::milliseconds(20);
    o.max_backoff = std::chrono::milliseconds(200);
    o.connect_timeout = std::chrono::milliseconds(5000);
    o.read_timeout = std::chrono::milliseconds(10000);
    return o;
  }

  static nlohmann::json stats()
  {
    return nlohmann::json::parse(body_of(raw_get(s_server->port(), "/_stats")));
  }
  static void reset_stats() { raw_get(s_server->port(), "/_reset"); }

  // Lint JSON of one report with the folder blanked, for comparisons.
  static nlohmann::json lint_json(const qcheck::FileSystem& files, const std::string& path)
  {
    auto run = qcheck::lint_path(files, path, qcheck::LintOptions{});
    EXPECT_TRUE(run.has_value()) << path << ": " << (run ? "" : run.error());
    if (!run) {
      return {};
    }
    auto j = nlohmann::json::parse(qcheck::render_json({run->report}));
    for (auto& f : j["findings"]) {
      f["folder"] = "";
    }
    return j;
  }

  static nlohmann::json local_lint(const std::string& folder)
  {
    qcheck::DiskFileSystem disk;
    return lint_json(disk, folder);
  }

  // The qcheck binary with the hub environment pointed at the loopback server.
  static CliRun cli(const std::string& args, const std::string& env = "",
                    const std::string& mode = "hub")
  {
    const fs::path out = s_tmp / "cli.out";
    const fs::path err = s_tmp / "cli.err";
    const std::string command = "env " + env + " HF_ENDPOINT='" + endpoint(mode) + "' HF_HOME='" +
                                (s_tmp / "hf-home").string() + "' NO_PROXY='*' " + QCHECK_BINARY +
                                " " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    CliRun r;
    const int status = std::system(command.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
  }

  static nlohmann::json without_folder(const std::string& text)
  {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) {
      return j;
    }
    for (auto& f : j["findings"]) {
      f["folder"] = "";
    }
    return j;
  }

  static std::vector<std::string> fixture_names()
  {
    std::vector<std::string> names;
    for (const char* group : {"", "formats/"}) {
      for (const auto& entry : fs::directory_iterator(fs::path(QCHECK_FIXTURES) / group)) {
        if (!entry.is_directory() || entry.path().filename() == "formats") {
          continue;
        }
        names.push_back(group + entry.path().filename().string());
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // hf://fixtures/NAME or hf://formats/NAME
  static std::string hub_path(const std::string& fixture)
  {
    return fixture.starts_with("formats/") ? "hf://" + fixture : "hf://fixtures/" + fixture;
  }

  static std::string fixture_dir(const std::string& fixture)
  {
    return std::string(QCHECK_FIXTURES) + "/" + fixture;
  }

  static inline fs::path s_tmp;
  static inline TestServer* s_server = nullptr;
  static inline bool s_started = false;
};

// What a lint of `folder` must read: every shard header and every JSON file.
struct Needed
{
  uint64_t header_bytes = 0;
  uint64_t json_bytes = 0;
  size_t shards = 0;
};

Needed
needed_for(const fs::path& folder)
{
  Needed n;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file()) {
      continue;
    }
    if (name.ends_with(".safetensors")) {
      ++n.shards;
      const uint64_t size = entry.file_size();
      const uint64_t length = size >= 8 ? header_size_of(entry.path()) : 0;
      n.header_bytes += size < 8 ? size : std::min(size, 8 + std::min<uint64_t>(length, size));
    } else if (name.ends_with(".json")) {
      n.json_bytes += entry.file_size();
    }
  }
  return n;
}

} // namespace

TEST(RemoteParse, HubPaths)
{
  auto r = qcheck::parse_remote_path("hf://owner/name");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->kind, qcheck::RemoteKind::hub);
  EXPECT_EQ(r->repo, "owner/name");
  EXPECT_EQ(r->revision, "main");
  EXPECT_EQ(r->root, "hf://owner/name");
  EXPECT_EQ(r->file, "");

  r = qcheck::parse_remote_path("hf://Org-1/Model.v2_x@refs%2Fpr%2F3/model.safetensors");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->repo, "Org-1/Model.v2_x");
  EXPECT_EQ(r->revision, "refs/pr/3");
  EXPECT_EQ(r->root, "hf://Org-1/Model.v2_x@refs%2Fpr%2F3");
  EXPECT_EQ(r->file, "model.safetensors");

  EXPECT_FALSE(qcheck::parse_remote_path("hf://owner"));
  EXPECT_FALSE(qcheck::parse_remote_path("hf://owner/na me"));
  EXPECT_FALSE(qcheck::parse_remote_path("hf://owner/name@"));
  EXPECT_FALSE(qcheck::parse_remote_path("hf://../name"));
  EXPECT_FALSE(qcheck::parse_remote_path("hf://owner/name/../x"));
  // The refusal says why, as a local index path's does (uncontained_reason()).
  EXPECT_EQ(qcheck::parse_remote_path("hf://owner/name/../x").error(),
            "hf://owner/name/../x: '../x' is not a path inside the repository: a path outside "
            "the model folder");
  EXPECT_EQ(qcheck::parse_remote_path("hf://owner/name/a/../b").error(),
            "hf://owner/name/a/../b: 'a/../b' is not a path inside the repository: a path with a "
            "'..' component");
  EXPECT_EQ(qcheck::parse_remote_path("hf://owner/name/a//b").error(),
            "hf://owner/name/a//b: 'a//b' is not a path inside the repository: a path with an "
            "empty component ('//' or a final '/')");
}

TEST(RemoteParse, HttpPaths)
{
  auto r = qcheck::parse_remote_path("http://127.0.0.1:8080/models/m/");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->kind, qcheck::RemoteKind::http);
  EXPECT_EQ(r->root, "http://127.0.0.1:8080/models/m");
  EXPECT_EQ(r->file, "");

  r = qcheck::parse_remote_path("https://host/a/model-00001-of-00002.safetensors");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->root, "https://host/a");
  EXPECT_EQ(r->file, "model-00001-of-00002.safetensors");

  EXPECT_FALSE(qcheck::parse_remote_path("https://host/a?x=1"));
  EXPECT_FALSE(qcheck::parse_remote_path("https:///a"));
  EXPECT_TRUE(qcheck::is_remote_path("https://x"));
  EXPECT_FALSE(qcheck::is_remote_path("owner/name"));
}

TEST(RemoteParse, RepoIds)
{
  EXPECT_TRUE(qcheck::looks_like_repo_id("nvidia/GLM-5.3-Flash-NVFP4"));
  EXPECT_TRUE(qcheck::looks_like_repo_id("o/n@v1.0"));
  EXPECT_FALSE(qcheck::looks_like_repo_id("fixtures/formats/x"));
  EXPECT_FALSE(qcheck::looks_like_repo_id("./model"));
  EXPECT_FALSE(qcheck::looks_like_repo_id("name"));
  EXPECT_FALSE(qcheck::looks_like_repo_id("hf://o/n"));
  EXPECT_FALSE(qcheck::looks_like_repo_id("/abs/path"));
}

TEST(RemoteCurl, UnloadableLibraryIsOneErrorLine)
{
  const std::string suffix = "; install the libcurl4 package to read remote repositories";
  const auto missing = qcheck::check_curl_library("libqcheck-no-such-curl.so.4");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(missing.error().starts_with("libqcheck-no-such-curl.so.4 could not be loaded: "))
    << missing.error();
  EXPECT_TRUE(missing.error().ends_with(suffix)) << missing.error();
  EXPECT_EQ(missing.error().find('\n'), std::string::npos);

  // A library that loads but holds no curl functions.
  const auto other = qcheck::check_curl_library("libm.so.6");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("curl_global_init"), std::string::npos) << other.error();
  EXPECT_TRUE(other.error().ends_with(suffix)) << other.error();

  const auto real = qcheck::check_curl_library(qcheck::k_curl_library);
  EXPECT_TRUE(real) << (real ? "" : real.error());
}

TEST(RemoteCurl, BinaryDoesNotLinkLibcurl)
{
  // What ldd prints: the libraries loaded at start. libcurl must not be one (it is dlopen()ed).
  const std::string command = std::string("LD_TRACE_LOADED_OBJECTS=1 ") + QCHECK_BINARY;
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    out.append(buffer.data(), n);
  }
  ::pclose(pipe);
  EXPECT_NE(out.find("libc.so"), std::string::npos) << out;
  EXPECT_EQ(out.find("libcurl"), std::string::npos) << out;
}

TEST_F(RemoteTest, EveryFixtureLintsAsLocally)
{
  for (const auto& fixture : fixture_names()) {
    SCOPED_TRACE(fixture);
    qcheck::HttpFileSystem remote(*qcheck::parse_remote_path(hub_path(fixture)), options());
    EXPECT_EQ(lint_json(remote, hub_path(fixture)), local_lint(fixture_dir(fixture)));
    EXPECT_TRUE(remote.errors().empty()) << remote.errors().front();
    EXPECT_TRUE(remote.revision().has_value());
  }
}

TEST_F(RemoteTest, InspectMatchesLocal)
{
  for (const std::string fixture : {"glm-nvfp4-nextn", "qwen-w4a16-mtp", "malformed"}) {
    SCOPED_TRACE(fixture);
    qcheck::RoutingFileSystem routing(options());
    qcheck::DiskFileSystem disk;
    auto remote = qcheck::load_checkpoint(routing, hub_path(fixture));
    auto local = qcheck::load_checkpoint(disk, fixture_dir(fixture));
    ASSERT_TRUE(remote && local);
    const qcheck::InspectOptions inspect{};
    EXPECT_EQ(qcheck::render_inspect_json(*remote, qcheck::build_inventory(*remote), inspect),
              qcheck::render_inspect_json(*local, qcheck::build_inventory(*local), inspect));
    ASSERT_EQ(remote->problems.size(), local->problems.size());
    for (size_t i = 0; i < local->problems.size(); ++i) {
      EXPECT_EQ(remote->problems[i].message, local->problems[i].message);
    }
  }
}

TEST_F(RemoteTest, BytesAndRequestsStayNearTheHeaders)
{
  for (const auto& fixture : fixture_names()) {
    SCOPED_TRACE(fixture);
    const Needed needed = needed_for(fixture_dir(fixture));
    // The tree listing is metadata too: count its pages' bodies.
    uint64_t tree_bytes = 0;
    const std::string repo = hub_path(fixture).substr(5);
    std::string next = "/hub/api/models/" + repo + "/tree/main";
    for (int page = 0; page < 100 && !next.empty(); ++page) {
      const std::string response = raw_get(s_server->port(), next);
      tree_bytes += body_of(response).size();
      const size_t link = response.find("Link: <");
      next.clear();
      if (link != std::string::npos) {
        const std::string url = response.substr(link + 7, response.find('>', link) - link - 7);
        next = url.substr(url.find("/hub/"));
      }
    }
    reset_stats();
    qcheck::HttpFileSystem remote(*qcheck::parse_remote_path(hub_path(fixture)), options());
    ASSERT_TRUE(qcheck::lint_path(remote, hub_path(fixture), qcheck::LintOptions{}));
    // The client's own count of what it received: the server's tally of its last responses can
    // lag behind the client when the test reads it (seen under load), so it is not compared.
    const auto server = stats();
    const qcheck::TransferStats client = remote.stats();
    const uint64_t requests = client.requests;
    const uint64_t received = client.body_bytes + client.header_bytes;
    const uint64_t budget =
      static_cast<uint64_t>(
        1.1 * static_cast<double>(needed.header_bytes + needed.json_bytes + tree_bytes)) +
      1024 * requests;
    EXPECT_LE(received, budget) << "headers " << needed.header_bytes << ", json "
                                << needed.json_bytes << ", tree " << tree_bytes << ", requests "
                                << requests;
    // Per shard: the hub's redirect plus at most two reads from the CDN.
    const auto& kinds = server["by_kind"];
    const uint64_t cdn = kinds.contains("cdn") ? kinds["cdn"].get<uint64_t>() : 0;
    EXPECT_LE(cdn, 2 * needed.shards);
    EXPECT_EQ(client.retries, 0u);
  }
}

TEST_F(RemoteTest, OneRequestPerShardWhenTheIndexSizesTheHeaders)
{
  for (const std::string fixture : {"glm-nvfp4-nextn", "qwen-w4a16-mtp", "qwen-gptq-mtp",
                                    "formats/modelopt-nvfp4-deepseek-nextn"}) {
    SCOPED_TRACE(fixture);
    reset_stats();
    qcheck::HttpFileSystem remote(*qcheck::parse_remote_path(hub_path(fixture)), options());
    ASSERT_TRUE(qcheck::lint_path(remote, hub_path(fixture), qcheck::LintOptions{}));
    EXPECT_EQ(stats()["by_kind"]["cdn"].get<size_t>(), needed_for(fixture_dir(fixture)).shards);
  }
}

TEST_F(RemoteTest, PlainHttpFolderLintsAsLocally)
{
  for (const std::string fixture : {"glm-nvfp4-nextn", "qwen-w4a16-mtp", "plain-bf16",
                                    "formats/autoround-qwen3", "formats/awq-qwen2"}) {
    SCOPED_TRACE(fixture);
    const std::string owner = fixture.starts_with("formats/") ? "formats" : "fixtures";
    const std::string name = fixture.substr(fixture.find('/') + 1);
    const std::string url =
      s_server->base() + "/hub/files/" + owner + "/" + (owner == "formats" ? name : fixture) + "/";
    qcheck::RoutingFileSystem routing(options());
    EXPECT_EQ(lint_json(routing, url), local_lint(fixture_dir(fixture)));
    EXPECT_TRUE(routing.remote_errors().empty());
  }
}

TEST_F(RemoteTest, SingleShardUrl)
{
  qcheck::RoutingFileSystem routing(options());
  const std::string local = fixture_dir("plain-bf16") + "/model.safetensors";
  EXPECT_EQ(lint_json(routing, "hf://fixtures/plain-bf16/model.safetensors"), local_lint(local));
  EXPECT_EQ(
    lint_json(routing, s_server->base() + "/hub/files/fixtures/plain-bf16/model.safetensors"),
    local_lint(local));
}

TEST_F(RemoteTest, ServerIgnoringRangeIsCutOffAfterTheHeader)
{
  const fs::path big = s_tmp / "repos/big/model.safetensors";
  const uint64_t header = 8 + header_size_of(big);
  const uint64_t file_size = fs::file_size(big);
  reset_stats();
  qcheck::HttpFileSystem remote(*qcheck::parse_remote_path("hf://tmp/big"), options("norange"));
  EXPECT_EQ(lint_json(remote, "hf://tmp/big"), local_lint((s_tmp / "repos/big").string()));
  const qcheck::TransferStats client = remote.stats();
  const uint64_t sent = stats()["bytes_sent"].get<uint64_t>();
  // The client keeps reading only until the header is complete, then hangs up.
  EXPECT_LE(client.body_bytes, header + 64 * 1024 + 4096) << "of a " << file_size << " byte file";
  EXPECT_LT(sent, file_size / 4);
  EXPECT_TRUE(remote.errors().empty());

  // The fixtures too: same findings, whole files never read.
  for (const std::string fixture : {"glm-nvfp4-nextn", "plain-bf16"}) {
    SCOPED_TRACE(fixture);
    qcheck::HttpFileSystem norange(*qcheck::parse_remote_path(hub_path(fixture)),
                                   options("norange"));
    EXPECT_EQ(lint_json(norange, hub_path(fixture)), local_lint(fixture_dir(fixture)));
    EXPECT_TRUE(norange.errors().empty());
  }
}

TEST_F(RemoteTest, TooManyRequestsIsRetriedAfterRetryAfter)
{
  reset_stats();
  qcheck::HttpFileSystem remote(*qcheck::parse_remote_path("hf://fixtures/glm-nvfp4-nextn"),
                                options("flaky"));
  EXPECT_EQ(lint_json(remote, "hf://fixtures/glm-nvfp4-nextn"),
            local_lint(fixture_dir("glm-nvfp4-nextn")));
  EXPECT_TRUE(remote.errors().empty());
  EXPECT_GT(remote.stats().retries, 0u);
  const auto gaps = stats()["retry_gaps"];
  ASSERT_FALSE(gaps.empty());
  for (const auto& gap : gaps) {
    EXPECT_GE(gap.get<double>(), 0.9) << "Retry-After: 1 not honoured";
  }
}

TEST_F(RemoteTest, ServiceUnavailableIsRetriedWithBackoff)
{
  qcheck::HttpFileSystem remote(*qcheck::parse_remote_path("hf://fixtures/qwen-w4a16-mtp"),
                                options("busy"));
  EXPECT_EQ(lint_json(remote, "hf://fixtures/qwen-w4a16-mtp"),
            local_lint(fixture_dir("qwen-w4a16-mtp")));
  EXPECT_TRUE(remote.errors().empty());
  EXPECT_GT(remote.stats().retries, 0u);

  // Bounded: with one try allowed, the 503 is an error, reported once per file.
  auto once = options("busy");
  once.max_tries = 1;
  qcheck::HttpFileSystem impatient(*qcheck::parse_remote_path("hf://fixtures/plain-bf16"), once);
  auto run = qcheck::lint_path(impatient, "hf://fixtures/plain-bf16", qcheck::LintOptions{});
  EXPECT_FALSE(impatient.errors().empty());
  for (const auto& line : impatient.errors()) {
    EXPECT_NE(line.find("HTTP 503"), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos);
  }
}

TEST_F(RemoteTest, ConnectionClosedMidHeaderIsRetried)
{
  reset_stats();
  qcheck::HttpFileSystem remote(*qcheck::parse_remote_path("hf://fixtures/glm-nvfp4-nextn"),
                                options("drop"));
  EXPECT_EQ(lint_json(remote, "hf://fixtures/glm-nvfp4-nextn"),
            local_lint(fixture_dir("glm-nvfp4-nextn")));
  EXPECT_TRUE(remote.errors().empty());
  EXPECT_GE(remote.stats().retries, 3u); // each of the three shards once
}

TEST_F(RemoteTest, UnreachableShardIsAFindingNotACrash)
{
  const std::string path = "hf://fixtures/glm-nvfp4-nextn";
  qcheck::HttpFileSystem remote(*qcheck::parse_remote_path(path), options("dropshard"));
  auto run = qcheck::lint_path(remote, path, qcheck::LintOptions{});
  ASSERT_TRUE(run) << run.error();
  size_t unreadable = 0;
  for (const auto& p : run->checkpoint.problems) {
    if (p.issue == qcheck::CheckpointIssue::shard_unreadable) {
      ++unreadable;
      EXPECT_EQ(p.file, "model-00002-of-00003.safetensors");
      EXPECT_NE(p.message.find("model-00002-of-00003.safetensors"), std::string::npos);
    }
  }
  EXPECT_EQ(unreadable, 1u);
  const auto j = nlohmann::json::parse(qcheck::render_json({run->report}));
  bool reported = false;
  for (const auto& f : j["findings"]) {
    reported |= f["file"] == "model-00002-of-00003.safetensors";
  }
  EXPECT_TRUE(reported) << j.dump(2);
  ASSERT_EQ(remote.errors().size(), 1u);
  EXPECT_NE(remote.errors()[0].find(path + "/model-00002-of-00003.safetensors: "),
            std::string::npos)
    << remote.errors()[0];

  // The same through the CLI: findings (exit 1), one error line, no crash.
  const CliRun r = cli("lint --format json " + path, "", "dropshard");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(without_folder(r.out).is_discarded()) << r.out;
  size_t lines = 0;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    lines += line.find("error") != std::string::npos &&
             line.find("model-00002-of-00003.safetensors") != std::string::npos;
  }
  EXPECT_EQ(lines, 1u) << r.err;
}

TEST_F(RemoteTest, CliLintAndInspectMatchLocal)
{
  for (const std::string fixture : {"glm-nvfp4-nextn", "qwen-w4a16-mtp", "plain-bf16"}) {
    SCOPED_TRACE(fixture);
    const CliRun local = cli("lint --format json " + fixture_dir(fixture));
    const CliRun remote = cli("lint --format json " + hub_path(fixture));
    EXPECT_EQ(remote.exit_code, local.exit_code) << remote.err;
    EXPECT_EQ(without_folder(remote.out), without_folder(local.out));
    EXPECT_NE(remote.err.find("read at revision "), std::string::npos) << remote.err;

    const CliRun local_inspect = cli("inspect --format json " + fixture_dir(fixture));
    const CliRun remote_inspect = cli("inspect --format json " + hub_path(fixture));
    EXPECT_EQ(remote_inspect.exit_code, local_inspect.exit_code) << remote_inspect.err;
    EXPECT_EQ(remote_inspect.out, local_inspect.out);
  }
  // A plain folder over HTTP, through the CLI.
  const CliRun local = cli("lint --format json " + fixture_dir("qwen-w4a16-mtp"));
  const CliRun folder =
    cli("lint --format json " + s_server->base() + "/hub/files/fixtures/qwen-w4a16-mtp/");
  EXPECT_EQ(folder.exit_code, local.exit_code) << folder.err;
  EXPECT_EQ(without_folder(folder.out), without_folder(local.out));
}

TEST_F(RemoteTest, RevisionIsReportedAndPinned)
{
  const std::string response =
    raw_get(s_server->port(), "/hub/fixtures/qwen-w4a16-mtp/resolve/main/config.json");
  const size_t at = response.find("X-Repo-Commit: ");
  ASSERT_NE(at, std::string::npos);
  const std::string commit = response.substr(at + 15, 40);
  reset_stats();
  qcheck::HttpFileSystem remote(*qcheck::parse_remote_path("hf://fixtures/qwen-w4a16-mtp@v1.0"),
                                options());
  ASSERT_TRUE(qcheck::lint_path(remote, "hf://fixtures/qwen-w4a16-mtp@v1.0", {}));
  EXPECT_EQ(remote.revision().value_or(""), commit);
  // After the first round every file is read at that commit, not at the moving name.
  size_t pinned = 0;
  const auto server = stats();
  for (const auto& line : server["paths"]) {
    const std::string path = line.get<std::string>();
    if (path.find("/resolve/") != std::string::npos && path.ends_with(".safetensors")) {
      EXPECT_NE(path.find("/resolve/" + commit + "/"), std::string::npos) << path;
      ++pinned;
    }
  }
  EXPECT_EQ(pinned, 3u) << server.dump(1);
}

TEST_F(RemoteTest, TokenGoesToTheHubOnlyAndIsNeverPrinted)
{
  const std::string env = std::string("HF_TOKEN='") + k_token + "'";
  std::vector<CliRun> runs;
  reset_stats();
  runs.push_back(cli("lint " + hub_path("glm-nvfp4-nextn"), env));
  const auto s = stats();
  EXPECT_GT(s["auth_hub"].get<int>(), 0) << "the token was not sent to the hub";
  EXPECT_EQ(s["auth_cdn"].get<int>(), 0) << "the token followed a redirect to another host";
  runs.push_back(cli("lint --format json " + hub_path("glm-nvfp4-nextn"), env, "dropshard"));
  runs.push_back(cli("lint hf://fixtures/no-such-repo", env));
  runs.push_back(cli("lint hf://fixtures/glm-nvfp4-nextn@no-such-revision", env));
  runs.push_back(cli("inspect " + hub_path("qwen-w4a16-mtp"), env));
  runs.push_back(cli("lint hf://fixtures/plain-bf16", env, "busy"));
  for (const auto& r : runs) {
    EXPECT_EQ(r.out.find(k_token), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(k_token), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("hf_qcheck"), std::string::npos) << r.err;
  }

  // The token file the hub tools write, when HF_TOKEN is not set.
  write_text(s_tmp / "hf-home/token", std::string(k_token) + "\n");
  reset_stats();
  const CliRun from_file = cli("lint " + hub_path("plain-bf16"), "-u HF_TOKEN");
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_GT(stats()["auth_hub"].get<int>(), 0);
  EXPECT_EQ(from_file.err.find(k_token), std::string::npos);
  fs::remove(s_tmp / "hf-home/token");
}

TEST_F(RemoteTest, NothingReadableExitsTwo)
{
  const CliRun missing = cli("lint hf://fixtures/no-such-repo");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("hf://fixtures/no-such-repo: repository not found"), std::string::npos)
    << missing.err;

  const CliRun revision = cli("lint hf://fixtures/glm-nvfp4-nextn@no-such-revision");
  EXPECT_EQ(revision.exit_code, 2);
  EXPECT_NE(revision.err.find("revision 'no-such-revision' not found"), std::string::npos)
    << revision.err;

  const CliRun empty_folder = cli("lint " + s_server->base() + "/hub/files/fixtures/nothing/");
  EXPECT_EQ(empty_folder.exit_code, 2) << empty_folder.err;
  EXPECT_NE(empty_folder.err.find("nothing found"), std::string::npos) << empty_folder.err;

  // A port nobody listens on: connection refused, retried, then one line and exit 2.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  auto o = options();
  o.endpoint = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/hub";
  qcheck::HttpFileSystem dead(*qcheck::parse_remote_path("hf://o/n"), o);
  EXPECT_FALSE(qcheck::lint_path(dead, "hf://o/n", {}));
  ASSERT_FALSE(dead.errors().empty());
  for (const auto& line : dead.errors()) {
    EXPECT_NE(line.find("(4 tries)"), std::string::npos) << line;
  }
}

TEST_F(RemoteTest, PagedTreeAndUnindexedShardsAreListed)
{
  // The server pages the tree four entries at a time; a shard the index does not name is only
  // visible in the tree, and must be reported as locally.
  const fs::path repo = s_tmp / "repos/extra";
  fs::create_directories(repo);
  for (const auto& entry : fs::directory_iterator(fixture_dir("qwen-w4a16-mtp"))) {
    fs::copy_file(entry.path(), repo / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
  }
  write_text(repo / "stray.safetensors", safetensors_file(2));
  qcheck::HttpFileSystem remote(*qcheck::parse_remote_path("hf://tmp/extra"), options());
  const auto local = local_lint(repo.string());
  EXPECT_EQ(lint_json(remote, "hf://tmp/extra"), local);
  bool unindexed = false;
  for (const auto& f : local["findings"]) {
    unindexed |= f["file"] == "stray.safetensors";
  }
  EXPECT_TRUE(unindexed) << local.dump(2);
}

TEST(RemoteCache, OwnerNameLintsTheCachedSnapshot)
{
  const fs::path cache =
    fs::temp_directory_path() / ("qcheck-hub-cache-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  const fs::path repo = cache / "models--acme--glm-nvfp4";
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  const fs::path snapshot = repo / "snapshots" / commit;
  fs::create_directories(snapshot);
  fs::create_directories(repo / "blobs");
  int blob = 0;
  for (const auto& entry :
       fs::directory_iterator(std::string(QCHECK_FIXTURES) + "/glm-nvfp4-nextn")) {
    const std::string name = "blob" + std::to_string(blob++);
    fs::copy_file(entry.path(), repo / "blobs" / name);
    fs::create_symlink("../../blobs/" + name, snapshot / entry.path().filename());
  }
  write_text(repo / "refs/main", commit);
  write_text(repo / "refs/v1", commit + "\n");

  qcheck::DiskFileSystem disk;
  qcheck::HubEnvironment env;
  env.hub_cache = cache.string();
  auto resolved = qcheck::resolve_model_argument(disk, "acme/glm-nvfp4", env);
  ASSERT_TRUE(resolved) << resolved.error();
  EXPECT_EQ(*resolved, snapshot.string());
  EXPECT_EQ(*qcheck::resolve_model_argument(disk, "acme/glm-nvfp4@v1", env), snapshot.string());
  EXPECT_EQ(*qcheck::resolve_model_argument(disk, "acme/glm-nvfp4@" + commit, env),
            snapshot.string());
  auto missing_rev = qcheck::resolve_model_argument(disk, "acme/glm-nvfp4@v2", env);
  ASSERT_FALSE(missing_rev);
  EXPECT_NE(missing_rev.error().find("revision 'v2'"), std::string::npos) << missing_rev.error();
  auto unknown = qcheck::resolve_model_argument(disk, "acme/other", env);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("hf://acme/other"), std::string::npos) << unknown.error();
  // Remote and local paths pass through untouched; nothing goes to the network.
  EXPECT_EQ(*qcheck::resolve_model_argument(disk, "hf://acme/glm-nvfp4", env),
            "hf://acme/glm-nvfp4");
  const std::string fixture = std::string(QCHECK_FIXTURES) + "/plain-bf16";
  EXPECT_EQ(*qcheck::resolve_model_argument(disk, fixture, env), fixture);

  // Through the CLI, with HF_HUB_CACHE: the same findings as the fixture itself.
  const fs::path out = cache / "out.json";
  const std::string command = "cd '" + cache.string() + "' && env HF_HUB_CACHE='" + cache.string() +
                              "' " + QCHECK_BINARY + " lint --format json acme/glm-nvfp4 >'" +
                              out.string() + "' 2>/dev/null";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  auto remote = nlohmann::json::parse(read_text(out), nullptr, false);
  const std::string local_command = std::string(QCHECK_BINARY) + " lint --format json " +
                                    QCHECK_FIXTURES + "/glm-nvfp4-nextn >'" + out.string() +
                                    "' 2>/dev/null";
  (void)!std::system(local_command.c_str());
  auto local = nlohmann::json::parse(read_text(out), nullptr, false);
  ASSERT_FALSE(remote.is_discarded());
  ASSERT_FALSE(local.is_discarded());
  for (auto* j : {&remote, &local}) {
    for (auto& f : (*j)["findings"]) {
      f["folder"] = "";
    }
  }
  EXPECT_EQ(remote, local);
  fs::remove_all(cache);
}
