// Remote checkpoints: lint a model repository without downloading it.
//
// HttpFileSystem serves one model root over HTTP(S) through the FileSystem interface: the Hugging
// Face Hub (hf://OWNER/NAME[@REVISION]) or a plain folder (http(s)://HOST/PATH/). It fetches the
// configuration files whole and, of each safetensors shard, only the header: one range request
// sized from the index, and a second one only when the header turned out longer. Reads are served
// from a cache of fetched ranges, so the lint code cannot tell a byte from disk from one fetched.
//
// RoutingFileSystem is what the CLI uses: the disk, plus an HttpFileSystem for every remote root
// it meets. resolve_model_argument() turns OWNER/NAME into a snapshot of the local Hugging Face
// cache. Nothing here prints; errors are data (errors(), Expected).
//
// libcurl is not linked: it is loaded with dlopen() when a remote root first fetches, so local
// runs do not load it and its ~35 dependencies. Without it, remote roots fail with one line.
#pragma once

#include "qcheck/expected.hpp"
#include "qcheck/input.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qcheck {

inline constexpr const char* k_default_hub_endpoint = "https://huggingface.co";
inline constexpr const char* k_curl_library = "libcurl.so.4";

// Loads `library` (RTLD_NOW | RTLD_LOCAL) and resolves every libcurl function used here: the
// error line remote roots would report when it cannot. A library that loads stays loaded for the
// rest of the process, as after a remote read. For tests and diagnostics.
Expected<void> check_curl_library(const std::string& library);

// The Hugging Face environment: where the hub is, the token, where the local cache lies.
struct HubEnvironment
{
  std::string endpoint = k_default_hub_endpoint; // HF_ENDPOINT
  std::string token;     // HF_TOKEN, else the token file; sent only to `endpoint`, never printed
  std::string hub_cache; // HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub
};

// Reads HF_ENDPOINT, HF_TOKEN, HF_TOKEN_PATH, HF_HOME, HF_HUB_CACHE, XDG_CACHE_HOME and HOME, and
// the token file ($HF_TOKEN_PATH, else $HF_HOME/token, else ~/.cache/huggingface/token).
HubEnvironment hub_environment();

struct FetchProgress
{
  size_t done = 0;    // requests finished in the current batch
  size_t total = 0;   // requests in the current batch
  uint64_t bytes = 0; // body bytes received so far by this file system
};

struct HttpOptions
{
  std::string endpoint = k_default_hub_endpoint;
  std::string token;         // sent as "Authorization: Bearer" to URLs below `endpoint` only
  unsigned max_parallel = 8; // requests in flight at once
  unsigned max_tries = 4;    // per request, the first included
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds read_timeout{30'000};      // no byte received for this long: fail
  std::chrono::milliseconds transfer_timeout{600'000}; // one request, redirects included
  std::chrono::milliseconds first_backoff{500};        // doubled at each retry
  std::chrono::milliseconds max_backoff{8'000};
  std::chrono::milliseconds max_retry_after{60'000}; // a longer Retry-After fails at once
  unsigned max_tree_pages = 100;                     // pages of the hub's tree API followed
  // Called after each finished request, on the thread that fetches (may be empty).
  std::function<void(const FetchProgress&)> progress;
};

// Options for `environment`: endpoint and token; the rest default.
HttpOptions http_options(const HubEnvironment& environment);

struct TransferStats
{
  uint64_t requests = 0;     // HTTP requests sent (each redirect hop and retry counts)
  uint64_t retries = 0;      // requests repeated after a 429, a 5xx or a broken connection
  uint64_t body_bytes = 0;   // response body bytes received
  uint64_t header_bytes = 0; // response header bytes received
};

enum class RemoteKind
{
  hub,  // hf://OWNER/NAME[@REVISION]
  http, // http(s)://HOST/PATH
};

// A remote model root and, when the argument names one file below it, that file.
struct RemoteRoot
{
  RemoteKind kind = RemoteKind::hub;
  std::string root;     // the path prefix as the FileSystem sees it, without trailing '/'
  std::string repo;     // hub: OWNER/NAME
  std::string revision; // hub: as given (default "main")
  std::string url;      // http: the folder's URL, without trailing '/'
  std::string file;     // the path below `root` the argument names; "" for the root itself
};

// True for paths that start with hf://, http:// or https://.
bool is_remote_path(std::string_view path);

// Parses hf://OWNER/NAME[@REVISION][/FILE] or http(s)://HOST/PATH. A URL path ending in
// ".safetensors" or ".json" names one file of its parent folder; any other names a folder. A
// revision holding '/' (refs/pr/1) is written percent-encoded (refs%2Fpr%2F1).
Expected<RemoteRoot> parse_remote_path(std::string_view path);

// One remote model root. Paths given to it start with root().root; others are missing.
// Thread-safe; ByteSources it returns must not outlive it.
class HttpFileSystem final : public FileSystem
{
public:
  HttpFileSystem(RemoteRoot root, HttpOptions options);
  ~HttpFileSystem() override;
  HttpFileSystem(const HttpFileSystem&) = delete;
  HttpFileSystem& operator=(const HttpFileSystem&) = delete;

  // stat() of the root fetches the configuration files, the index and the tree listing (in
  // parallel); list_dir() of the root then fetches the header of every shard it lists.
  FileInfo stat(const std::string& path) const override;
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override;
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override;

  const RemoteRoot& root() const;
  // The commit that was read, when the server said (the hub's X-Repo-Commit).
  std::optional<std::string> revision() const;
  // One line per file that could not be fetched (missing files are not errors), in order.
  std::vector<std::string> errors() const;
  TransferStats stats() const;

  struct State; // implementation (src/remote.cpp)

private:
  std::unique_ptr<State> m_state;
};

// The disk, plus one HttpFileSystem per remote root (created on first use, kept for the life of
// this object). Paths that are not remote go to the disk.
class RoutingFileSystem final : public FileSystem
{
public:
  explicit RoutingFileSystem(HttpOptions options = {}, DiskFileSystem::Options disk = {});
  ~RoutingFileSystem() override;

  FileInfo stat(const std::string& path) const override;
  Expected<std::unique_ptr<ByteSource>> open(const std::string& path) const override;
  Expected<std::vector<std::string>> list_dir(const std::string& path) const override;
  Expected<std::unique_ptr<ByteSource>> open_described(const std::string& path,
                                                       FileInfo& info) const override;

  // The remote roots used so far, in order of first use.
  std::vector<const HttpFileSystem*> remotes() const;
  // What the CLI reports on stderr: every remote error line, and the revision each hub root was
  // read at ("hf://o/n: read revision <commit>"). Errors first.
  std::vector<std::string> remote_errors() const;
  std::vector<std::string> remote_notes() const;

private:
  const FileSystem* route(const std::string& path) const;

  DiskFileSystem m_disk;
  HttpOptions m_options;
  mutable std::mutex m_mutex;
  mutable std::vector<std::unique_ptr<HttpFileSystem>> m_remotes;
};

// OWNER/NAME[@REVISION] (no scheme, exactly one '/'), as the hub names repositories.
bool looks_like_repo_id(std::string_view text);

// The snapshot folder of OWNER/NAME[@REVISION] in a local hub cache:
// {hub_cache}/models--OWNER--NAME/snapshots/{commit}, the commit read from refs/{REVISION}
// (default main), or REVISION itself when it is a commit with a snapshot.
Expected<std::string> find_cached_snapshot(const FileSystem& fs, const std::string& hub_cache,
                                           std::string_view repo_id);

// What to lint for a command-line argument: remote paths and existing local paths as given;
// OWNER/NAME[@REVISION] with no such local path: its snapshot in the hub cache. Never goes to
// the network (hf:// does, later, when read).
Expected<std::string> resolve_model_argument(const FileSystem& disk, const std::string& argument,
                                             const HubEnvironment& environment);

} // namespace qcheck
