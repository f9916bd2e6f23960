#include "qcheck/remote.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <curl/curl.h> // types and constants only: libcurl is loaded by load_curl()
#include <deque>
#include <dlfcn.h>
#include <fmt/format.h>
#include <map>
#include <set>
#include <simdjson.h>
#include <thread>

#include "qcheck/checkpoint.hpp"
#include "qcheck/safetensors.hpp"

namespace qcheck {

namespace {

using Clock = std::chrono::steady_clock;

// Files the lint reads by name, fetched whole as soon as a root is touched.
constexpr std::array<const char*, 4> k_known_files{"config.json", "hf_quant_config.json",
                                                   "quantization_config.json", k_index_name};
constexpr const char* k_single_file = "model.safetensors";
// Whole fetches stop here; the lint refuses larger JSON files without reading them.
constexpr uint64_t k_max_whole = k_max_index_size;
// A shard's first request when nothing tells its header's size.
constexpr uint64_t k_min_guess = 4 << 10;
constexpr uint64_t k_max_guess = 64 << 10;
// Header size estimate from the index: per tensor, its name plus this much JSON; plus a margin
// for __metadata__. Calibrated on the first shard read.
constexpr double k_first_overhead = 80.0;
constexpr double k_min_overhead = 40.0;
constexpr double k_overhead_margin = 1.03;
constexpr uint64_t k_metadata_allowance = 128;
constexpr size_t k_max_message = 200;

// ------------------------------------------------------------------------------------------------
// Small text helpers.

std::string
get_env(const char* name)
{
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string
trim(std::string_view text)
{
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  const size_t last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::string
lower(std::string_view text)
{
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// One printable line of at most k_max_message characters.
std::string
one_line(std::string_view text)
{
  std::string out;
  for (char c : text) {
    if (out.size() >= k_max_message) {
      out += "...";
      break;
    }
    const bool printable = std::isprint(static_cast<unsigned char>(c)) != 0;
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : (printable ? c : '?');
  }
  return trim(out);
}

bool
is_unreserved(char c)
{
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

// Percent-encodes everything but unreserved characters (and '/' when keep_slash).
std::string
url_encode(std::string_view text, bool keep_slash)
{
  std::string out;
  for (char c : text) {
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
  }
  return out;
}

std::optional<std::string>
url_decode(std::string_view text)
{
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      return std::nullopt;
    }
    out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

bool
is_name_part(std::string_view part)
{
  if (part.empty() || part.size() > 96 || part == "." || part == "..") {
    return false;
  }
  return std::all_of(part.begin(), part.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

bool
is_commit(std::string_view text)
{
  return text.size() == 40 && std::all_of(text.begin(), text.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

std::optional<uint64_t>
parse_uint(std::string_view text)
{
  if (text.empty() || text.size() > 19) {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return std::nullopt;
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

uint64_t
read_le64(std::string_view bytes)
{
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  }
  return value;
}

std::string
human_bytes(uint64_t bytes)
{
  if (bytes < 10 * 1024) {
    return fmt::format("{} B", bytes);
  }
  if (bytes < 10 * 1024 * 1024) {
    return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0);
  }
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

// ------------------------------------------------------------------------------------------------
// libcurl, loaded on first use rather than linked.

// The libcurl functions used here, typed as declared (setopt and getinfo are variadic).
struct CurlApi
{
  void* handle = nullptr;
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_multi_init) multi_init = nullptr;
  decltype(&curl_multi_setopt) multi_setopt = nullptr;
  decltype(&curl_multi_add_handle) multi_add_handle = nullptr;
  decltype(&curl_multi_remove_handle) multi_remove_handle = nullptr;
  decltype(&curl_multi_perform) multi_perform = nullptr;
  decltype(&curl_multi_poll) multi_poll = nullptr;
  decltype(&curl_multi_info_read) multi_info_read = nullptr;
  decltype(&curl_multi_cleanup) multi_cleanup = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
  decltype(&curl_getdate) getdate = nullptr;
};

template<typename Function>
bool
resolve(void* handle, const char* name, Function& slot)
{
  slot = reinterpret_cast<Function>(::dlsym(handle, name));
  return slot != nullptr;
}

std::string
curl_load_error(const std::string& library, const char* reason)
{
  return fmt::format("{} could not be loaded: {}; install the libcurl4 package to read remote "
                     "repositories",
                     library, one_line(reason != nullptr ? reason : "unknown error"));
}

// dlopen()s `library` and resolves every function; the handle is the caller's.
Expected<CurlApi>
load_curl(const std::string& library)
{
  CurlApi api;
  api.handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api.handle == nullptr) {
    return unexpected(curl_load_error(library, ::dlerror()));
  }
  ::dlerror();
  void* h = api.handle;
  const bool ok = resolve(h, "curl_global_init", api.global_init) &&
                  resolve(h, "curl_easy_init", api.easy_init) &&
                  resolve(h, "curl_easy_setopt", api.easy_setopt) &&
                  resolve(h, "curl_easy_getinfo", api.easy_getinfo) &&
                  resolve(h, "curl_easy_cleanup", api.easy_cleanup) &&
                  resolve(h, "curl_easy_strerror", api.easy_strerror) &&
                  resolve(h, "curl_multi_init", api.multi_init) &&
                  resolve(h, "curl_multi_setopt", api.multi_setopt) &&
                  resolve(h, "curl_multi_add_handle", api.multi_add_handle) &&
                  resolve(h, "curl_multi_remove_handle", api.multi_remove_handle) &&
                  resolve(h, "curl_multi_perform", api.multi_perform) &&
                  resolve(h, "curl_multi_poll", api.multi_poll) &&
                  resolve(h, "curl_multi_info_read", api.multi_info_read) &&
                  resolve(h, "curl_multi_cleanup", api.multi_cleanup) &&
                  resolve(h, "curl_slist_append", api.slist_append) &&
                  resolve(h, "curl_slist_free_all", api.slist_free_all) &&
                  resolve(h, "curl_getdate", api.getdate);
  if (!ok) {
    std::string error = curl_load_error(library, ::dlerror());
    ::dlclose(h);
    return unexpected(std::move(error));
  }
  return api;
}

// The process's libcurl: loaded and initialised by the first caller, never unloaded.
const Expected<CurlApi>&
curl_api()
{
  static const Expected<CurlApi> api = []() -> Expected<CurlApi> {
    auto loaded = load_curl(k_curl_library);
    if (loaded) {
      const CURLcode code = loaded->global_init(CURL_GLOBAL_DEFAULT);
      if (code != CURLE_OK) {
        return unexpected(fmt::format("{} could not be initialised: {}", k_curl_library,
                                      loaded->easy_strerror(code)));
      }
    }
    return loaded;
  }();
  return api;
}

// ------------------------------------------------------------------------------------------------
// Requests and the curl multi loop.

enum class Want
{
  whole,  // the whole file (at most k_max_whole bytes kept)
  header, // [0, end), extended to the safetensors header's end when the server sends more
  range,  // [begin, end)
};

struct Request
{
  std::string name; // below the root; "" for the tree API
  std::string url;
  Want want = Want::whole;
  uint64_t begin = 0;
  uint64_t end = 0;
  bool token = false;
};

enum class Outcome
{
  ok,
  missing,
  failed
};

struct Response
{
  Outcome outcome = Outcome::failed;
  long status = 0;
  uint64_t begin = 0; // file offset of data[0]
  std::string data;
  std::optional<uint64_t> size; // the whole file's size, when known
  bool truncated = false;       // whole: stopped at k_max_whole
  std::string commit;           // X-Repo-Commit
  std::string next_link;        // Link: <...>; rel="next"
  std::string error_code;       // X-Error-Code
  std::string error;            // one line, for `failed`
  bool no_transport = false;    // failed before sending: libcurl missing or not starting
};

struct Transfer
{
  Request request;
  Response response;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::array<char, CURL_ERROR_SIZE> error_buffer{};
  unsigned tries = 0;
  Clock::time_point not_before{};
  // Per attempt, from the response being received (the last one after redirects).
  long status = 0;
  std::optional<uint64_t> range_first; // Content-Range: bytes FIRST-LAST/TOTAL
  std::optional<uint64_t> range_total;
  std::optional<uint64_t> content_length;
  bool encoded = false; // Content-Encoding other than identity
  std::string retry_after;
  std::string error_message; // X-Error-Message
  bool body_started = false;
  bool bad_start = false;
  uint64_t position = 0; // file offset of the next body byte
  uint64_t want_end = 0;
  bool stopped = false; // the write callback ended the transfer on purpose

  void reset_attempt()
  {
    response.data.clear();
    response.size.reset();
    response.truncated = false;
    response.next_link.clear();
    response.error_code.clear();
    status = 0;
    range_first.reset();
    range_total.reset();
    content_length.reset();
    encoded = false;
    retry_after.clear();
    error_message.clear();
    body_started = false;
    bad_start = false;
    position = 0;
    stopped = false;
    want_end = request.want == Want::whole ? k_max_whole : request.end;
    error_buffer[0] = '\0';
  }
};

void
parse_content_range(std::string_view value, Transfer& t)
{
  // "bytes FIRST-LAST/TOTAL" or "bytes */TOTAL"; TOTAL may be '*'.
  if (!value.starts_with("bytes ")) {
    return;
  }
  value.remove_prefix(6);
  const size_t slash = value.find('/');
  if (slash == std::string_view::npos) {
    return;
  }
  t.range_total = parse_uint(trim(value.substr(slash + 1)));
  const std::string_view span = value.substr(0, slash);
  const size_t dash = span.find('-');
  if (dash != std::string_view::npos) {
    t.range_first = parse_uint(trim(span.substr(0, dash)));
  }
}

std::string
parse_next_link(std::string_view value)
{
  // <url>; rel="next", <url>; rel="prev"
  size_t start = 0;
  while (start < value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string_view::npos) {
      end = value.size();
    }
    const std::string_view part = value.substr(start, end - start);
    const size_t open = part.find('<');
    const size_t close = part.find('>');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open &&
        part.find("rel=\"next\"") != std::string_view::npos) {
      return std::string(part.substr(open + 1, close - open - 1));
    }
    start = end + 1;
  }
  return {};
}

size_t
on_header(char* data, size_t size, size_t count, void* user)
{
  auto& t = *static_cast<Transfer*>(user);
  const size_t total = size * count;
  const std::string_view line(data, total);
  if (line.starts_with("HTTP/")) {
    // A new response (the first, or the next after a redirect): forget the previous one's
    // headers, but keep the commit the hub sent before redirecting.
    const std::string commit = t.response.commit;
    t.reset_attempt();
    t.response.commit = commit;
    const size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      t.status = static_cast<long>(parse_uint(line.substr(space + 1, 3)).value_or(0));
    }
    return total;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return total;
  }
  const std::string name = lower(trim(line.substr(0, colon)));
  const std::string value = trim(line.substr(colon + 1));
  if (name == "content-range") {
    parse_content_range(value, t);
  } else if (name == "content-length") {
    t.content_length = parse_uint(value);
  } else if (name == "content-encoding") {
    t.encoded = lower(value) != "identity";
  } else if (name == "retry-after") {
    t.retry_after = value;
  } else if (name == "x-repo-commit") {
    t.response.commit = value;
  } else if (name == "x-error-code") {
    t.response.error_code = one_line(value);
  } else if (name == "x-error-message") {
    t.error_message = one_line(value);
  } else if (name == "link") {
    t.response.next_link = parse_next_link(value);
  }
  return total;
}

size_t
on_body(char* data, size_t size, size_t count, void* user)
{
  auto& t = *static_cast<Transfer*>(user);
  const size_t total = size * count;
  if (t.status != 200 && t.status != 206) {
    return total; // the body of an error: not kept
  }
  if (!t.body_started) {
    t.body_started = true;
    t.position = t.status == 206 ? t.range_first.value_or(0) : 0;
    if (t.position > t.request.begin) {
      t.bad_start = true; // the server skipped bytes we asked for
      return 0;
    }
    t.response.begin = t.request.begin;
    t.response.data.reserve(static_cast<size_t>(std::min<uint64_t>(
      t.want_end > t.request.begin ? t.want_end - t.request.begin : 0, 1 << 20)));
  }
  std::string_view chunk(data, total);
  if (t.position < t.request.begin) {
    // A whole file in answer to a range request: skip to the range.
    const uint64_t skip = std::min<uint64_t>(chunk.size(), t.request.begin - t.position);
    chunk.remove_prefix(static_cast<size_t>(skip));
    t.position += skip;
  }
  if (t.position < t.want_end && !chunk.empty()) {
    const uint64_t keep = std::min<uint64_t>(chunk.size(), t.want_end - t.position);
    t.response.data.append(chunk.data(), static_cast<size_t>(keep));
  }
  t.position += chunk.size();
  if (t.request.want == Want::header && t.request.begin == 0 && t.response.data.size() >= 8) {
    // The length prefix tells where the header ends: read that far even if a server that
    // ignores ranges sends more, and never further.
    const uint64_t length = read_le64(t.response.data);
    if (length <= k_max_header_size) {
      t.want_end = std::max(t.want_end, 8 + length);
    }
  }
  if (t.position >= t.want_end) {
    const bool more =
      !t.content_length || t.encoded ||
      (t.status == 206 ? t.range_first.value_or(0) : 0) + *t.content_length > t.position;
    if (more) {
      if (t.request.want == Want::whole) {
        t.response.truncated = true;
      }
      t.stopped = true;
      return 0; // enough: end the transfer here
    }
  }
  return total;
}

bool
retryable(CURLcode code)
{
  switch (code) {
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_PARTIAL_FILE:
  case CURLE_RECV_ERROR:
  case CURLE_SEND_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR:
    return true;
  default:
    return false;
  }
}

bool
retryable_status(long status)
{
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504;
}

// Retry-After: seconds or an HTTP date. nullopt when absent or unreadable.
std::optional<std::chrono::milliseconds>
retry_after_delay(const CurlApi& curl, const std::string& value)
{
  if (value.empty()) {
    return std::nullopt;
  }
  if (auto seconds = parse_uint(value)) {
    return std::chrono::milliseconds(std::min<uint64_t>(*seconds, 1'000'000) * 1000);
  }
  const time_t when = curl.getdate(value.c_str(), nullptr);
  if (when < 0) {
    return std::nullopt;
  }
  const time_t now = std::time(nullptr);
  return std::chrono::milliseconds(when > now ? static_cast<int64_t>(when - now) * 1000 : 0);
}

std::string
status_text(long status)
{
  switch (status) {
  case 401:
    return "HTTP 401 Unauthorized";
  case 403:
    return "HTTP 403 Forbidden";
  case 404:
    return "HTTP 404 Not Found";
  case 408:
    return "HTTP 408 Request Timeout";
  case 416:
    return "HTTP 416 Range Not Satisfiable";
  case 429:
    return "HTTP 429 Too Many Requests";
  case 500:
    return "HTTP 500 Internal Server Error";
  case 502:
    return "HTTP 502 Bad Gateway";
  case 503:
    return "HTTP 503 Service Unavailable";
  case 504:
    return "HTTP 504 Gateway Timeout";
  default:
    return fmt::format("HTTP {}", status);
  }
}

// Runs batches of requests on one multi handle: at most max_parallel in flight, retries with
// backoff, connections kept between batches. libcurl is loaded by the first batch.
class Fetcher
{
public:
  explicit Fetcher(const HttpOptions& options) : m_options(options)
  {
    m_user_agent = fmt::format("qcheck/{}", QCHECK_VERSION);
  }
  ~Fetcher()
  {
    if (m_multi != nullptr) {
      m_curl->multi_cleanup(m_multi);
    }
  }
  Fetcher(const Fetcher&) = delete;
  Fetcher& operator=(const Fetcher&) = delete;

  // `account` is called after each finished attempt with (requests, retried, body, headers).
  std::vector<Response> run(std::vector<Request> requests,
                            const std::function<void(const TransferStats&)>& account)
  {
    std::vector<Transfer> transfers(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      transfers[i].request = std::move(requests[i]);
    }
    if (!open_multi()) {
      for (auto& t : transfers) {
        t.response.error = m_open_error;
        t.response.no_transport = true;
      }
      return collect(transfers);
    }
    std::deque<size_t> waiting;
    for (size_t i = 0; i < transfers.size(); ++i) {
      waiting.push_back(i);
    }
    size_t active = 0;
    size_t finished = 0;
    const size_t parallel = std::max(1u, m_options.max_parallel);
    while (finished < transfers.size()) {
      const auto now = Clock::now();
      // Start what may start, in order, skipping those still backing off.
      for (auto it = waiting.begin(); it != waiting.end() && active < parallel;) {
        Transfer& t = transfers[*it];
        if (t.not_before > now) {
          ++it;
          continue;
        }
        if (start(t)) {
          ++active;
        } else {
          ++finished;
        }
        it = waiting.erase(it);
      }
      int running = 0;
      m_curl->multi_perform(m_multi, &running);
      int left = 0;
      while (CURLMsg* message = m_curl->multi_info_read(m_multi, &left)) {
        if (message->msg != CURLMSG_DONE) {
          continue;
        }
        Transfer* t = nullptr;
        m_curl->easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &t);
        const CURLcode code = message->data.result;
        m_curl->multi_remove_handle(m_multi, message->easy_handle);
        --active;
        const bool again = finish(*t, code, account);
        if (again) {
          waiting.push_back(static_cast<size_t>(t - transfers.data()));
        } else {
          ++finished;
          if (m_options.progress) {
            m_options.progress({finished, transfers.size(), m_body_bytes});
          }
        }
      }
      if (finished == transfers.size()) {
        break;
      }
      // Wait for the network, or for the next backoff to expire when a slot is free (with no
      // free slot, only a finished transfer can let the next one start).
      auto wake = Clock::now() + std::chrono::milliseconds(1000);
      if (active < parallel) {
        for (size_t i : waiting) {
          wake = std::min(wake, transfers[i].not_before);
        }
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now());
      const int timeout = static_cast<int>(std::clamp<int64_t>(wait.count(), 0, 1000));
      if (active > 0) {
        m_curl->multi_poll(m_multi, nullptr, 0, timeout, nullptr);
      } else if (timeout > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(timeout));
      }
    }
    return collect(transfers);
  }

private:
  // Loads libcurl and makes the multi handle, once; false (and m_open_error) when it cannot.
  bool open_multi()
  {
    if (m_multi != nullptr) {
      return true;
    }
    if (!m_open_error.empty()) {
      return false;
    }
    const auto& api = curl_api();
    if (!api) {
      m_open_error = api.error();
      return false;
    }
    m_curl = &*api;
    m_multi = m_curl->multi_init();
    if (m_multi == nullptr) {
      m_open_error = "cannot start libcurl";
      return false;
    }
    const long parallel = std::max(1u, m_options.max_parallel);
    m_curl->multi_setopt(m_multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, parallel);
    m_curl->multi_setopt(m_multi, CURLMOPT_MAX_HOST_CONNECTIONS, parallel);
    m_curl->multi_setopt(m_multi, CURLMOPT_MAXCONNECTS, parallel);
    return true;
  }

  static std::vector<Response> collect(std::vector<Transfer>& transfers)
  {
    std::vector<Response> out;
    out.reserve(transfers.size());
    for (auto& t : transfers) {
      out.push_back(std::move(t.response));
    }
    return out;
  }

  bool start(Transfer& t)
  {
    ++t.tries;
    t.reset_attempt();
    t.easy = m_curl->easy_init();
    if (t.easy == nullptr) {
      t.response.outcome = Outcome::failed;
      t.response.error = "cannot start libcurl";
      return false;
    }
    CURL* e = t.easy;
    m_curl->easy_setopt(e, CURLOPT_URL, t.request.url.c_str());
    m_curl->easy_setopt(e, CURLOPT_PRIVATE, &t);
    m_curl->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    m_curl->easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    m_curl->easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    m_curl->easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    m_curl->easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    // The token goes to the hub only: libcurl drops a custom Authorization header when a
    // redirect leads to another host, port or scheme (no CURLOPT_UNRESTRICTED_AUTH).
    m_curl->easy_setopt(e, CURLOPT_UNRESTRICTED_AUTH, 0L);
    m_curl->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                        static_cast<long>(std::max<int64_t>(1, m_options.connect_timeout.count())));
    m_curl->easy_setopt(
      e, CURLOPT_TIMEOUT_MS,
      static_cast<long>(std::max<int64_t>(1, m_options.transfer_timeout.count())));
    m_curl->easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    m_curl->easy_setopt(
      e, CURLOPT_LOW_SPEED_TIME,
      static_cast<long>(std::max<int64_t>(1, (m_options.read_timeout.count() + 999) / 1000)));
    m_curl->easy_setopt(e, CURLOPT_USERAGENT, m_user_agent.c_str());
    m_curl->easy_setopt(e, CURLOPT_ERRORBUFFER, t.error_buffer.data());
    m_curl->easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    m_curl->easy_setopt(e, CURLOPT_HEADERDATA, &t);
    m_curl->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    m_curl->easy_setopt(e, CURLOPT_WRITEDATA, &t);
    if (t.request.want == Want::whole) {
      m_curl->easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); // JSON compresses well
    } else {
      const std::string range =
        fmt::format("{}-{}", t.request.begin, std::max(t.request.end, t.request.begin + 1) - 1);
      m_curl->easy_setopt(e, CURLOPT_RANGE, range.c_str()); // copied by libcurl
    }
    if (t.request.token && !m_options.token.empty()) {
      const std::string header = "Authorization: Bearer " + m_options.token;
      t.headers = m_curl->slist_append(nullptr, header.c_str());
      m_curl->easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
    }
    if (m_curl->multi_add_handle(m_multi, e) != CURLM_OK) {
      release(t);
      t.response.outcome = Outcome::failed;
      t.response.error = "cannot start libcurl";
      return false;
    }
    return true;
  }

  void release(Transfer& t)
  {
    if (t.easy != nullptr) {
      m_curl->easy_cleanup(t.easy);
      t.easy = nullptr;
    }
    if (t.headers != nullptr) {
      m_curl->slist_free_all(t.headers);
      t.headers = nullptr;
    }
  }

  // Classifies a finished attempt. Returns true when it is to be tried again.
  bool finish(Transfer& t, CURLcode code, const std::function<void(const TransferStats&)>& account)
  {
    long status = 0;
    long redirects = 0;
    long header_size = 0;
    curl_off_t body = 0;
    m_curl->easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    m_curl->easy_getinfo(t.easy, CURLINFO_REDIRECT_COUNT, &redirects);
    m_curl->easy_getinfo(t.easy, CURLINFO_HEADER_SIZE, &header_size);
    m_curl->easy_getinfo(t.easy, CURLINFO_SIZE_DOWNLOAD_T, &body);
    const std::string curl_error = t.error_buffer[0] != '\0'
                                     ? one_line(t.error_buffer.data())
                                     : std::string(m_curl->easy_strerror(code));
    release(t);
    m_body_bytes += static_cast<uint64_t>(std::max<curl_off_t>(0, body));

    Response& r = t.response;
    r.status = status;
    if (code == CURLE_WRITE_ERROR && t.stopped) {
      code = CURLE_OK; // we hung up on purpose
    }
    bool again = false;
    std::optional<std::chrono::milliseconds> delay;
    if (t.bad_start) {
      r.outcome = Outcome::failed;
      r.error = fmt::format("the server answered a range request with other bytes (from {})",
                            t.range_first.value_or(0));
    } else if (code != CURLE_OK) {
      r.outcome = Outcome::failed;
      r.error = curl_error;
      again = retryable(code);
    } else if (status == 200 || status == 206) {
      r.outcome = Outcome::ok;
      if (status == 206) {
        r.size = t.range_total;
      } else if (!t.stopped) {
        r.size = t.position; // the whole body arrived
      } else if (t.content_length && !t.encoded) {
        r.size = t.content_length;
      }
    } else if (status == 416) {
      r.outcome = Outcome::ok; // asked past the end: an empty (or short) file
      r.size = t.range_total;
      r.data.clear();
    } else if (status == 404 || status == 410) {
      r.outcome = Outcome::missing;
    } else {
      r.outcome = Outcome::failed;
      r.error = status_text(status);
      if (!t.error_message.empty()) {
        r.error += fmt::format(" ({})", t.error_message);
      }
      if (retryable_status(status)) {
        again = true;
        if (status == 429 || status == 503) {
          delay = retry_after_delay(*m_curl, t.retry_after);
          if (delay && *delay > m_options.max_retry_after) {
            r.error += fmt::format("; the server asked to retry after {} s", delay->count() / 1000);
            again = false;
          }
        }
      }
    }
    if (again && t.tries >= std::max(1u, m_options.max_tries)) {
      again = false;
    }
    if (!again && r.outcome == Outcome::failed && t.tries > 1) {
      r.error += fmt::format(" ({} tries)", t.tries);
    }
    if (again) {
      if (!delay) {
        const int64_t base = std::max<int64_t>(1, m_options.first_backoff.count());
        const int64_t backoff = base << std::min(t.tries - 1, 20u);
        delay =
          std::chrono::milliseconds(std::min<int64_t>(backoff, m_options.max_backoff.count()));
      }
      t.not_before = Clock::now() + *delay;
    }
    TransferStats delta;
    delta.requests = static_cast<uint64_t>(redirects) + 1;
    delta.retries = t.tries > 1 ? 1 : 0;
    delta.body_bytes = static_cast<uint64_t>(std::max<curl_off_t>(0, body));
    delta.header_bytes = static_cast<uint64_t>(std::max<long>(0, header_size));
    account(delta);
    return again;
  }

  const HttpOptions& m_options;
  const CurlApi* m_curl = nullptr; // set with m_multi
  CURLM* m_multi = nullptr;
  std::string m_open_error;
  std::string m_user_agent;
  uint64_t m_body_bytes = 0;
};

// ------------------------------------------------------------------------------------------------
// The cache of one remote root.

struct Entry
{
  enum class Kind
  {
    unknown,
    file,
    directory,
    missing,
    failed
  };
  Kind kind = Kind::unknown;
  std::optional<uint64_t> size;
  std::string error;
  std::map<uint64_t, std::string> chunks; // fetched bytes: merged, non-overlapping
  uint64_t index_tensors = 0;             // from the index: tensors and their names' bytes
  uint64_t index_name_bytes = 0;

  // End of the bytes held contiguously from `offset` (== offset when none).
  uint64_t covered_from(uint64_t offset) const
  {
    auto it = chunks.upper_bound(offset);
    if (it == chunks.begin()) {
      return offset;
    }
    --it;
    const uint64_t end = it->first + it->second.size();
    return end > offset ? end : offset;
  }

  void add(uint64_t begin, std::string data)
  {
    if (data.empty()) {
      return;
    }
    uint64_t end = begin + data.size();
    // Merge with every chunk that overlaps or touches [begin, end).
    auto it = chunks.upper_bound(begin);
    if (it != chunks.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second.size() >= begin) {
        it = prev;
      }
    }
    while (it != chunks.end() && it->first <= end) {
      const uint64_t c_begin = it->first;
      const uint64_t c_end = c_begin + it->second.size();
      if (c_begin < begin) {
        data.insert(0, it->second.substr(0, static_cast<size_t>(begin - c_begin)));
        begin = c_begin;
      }
      if (c_end > end) {
        data.append(it->second.substr(static_cast<size_t>(end - c_begin)));
        end = c_end;
      }
      it = chunks.erase(it);
    }
    chunks.emplace(begin, std::move(data));
  }
};

bool
ends_with(std::string_view text, std::string_view suffix)
{
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

class HttpSource;

} // namespace

struct HttpFileSystem::State
{
  RemoteRoot root;
  HttpOptions options;

  std::mutex fetch_mutex; // one batch at a time; taken before `mutex`
  std::unique_ptr<Fetcher> fetcher;

  mutable std::mutex mutex; // everything below
  std::map<std::string, Entry> entries;
  bool root_checked = false;
  bool root_exists = false;
  bool root_gone = false; // the hub said: no such repository or revision
  bool tree_complete = false;
  std::set<std::string> tree_names; // top-level names the tree listed
  bool listed = false;
  std::vector<std::string> listing;
  std::optional<std::string> commit;
  std::string url_revision; // the revision in file URLs: the commit once known
  double overhead = k_first_overhead;
  bool calibrated = false;
  std::vector<std::string> errors;
  std::set<std::string> error_names;
  TransferStats stats;

  State(RemoteRoot r, HttpOptions o) : root(std::move(r)), options(std::move(o))
  {
    url_revision = root.revision;
    fetcher = std::make_unique<Fetcher>(options);
  }

  std::string display(const std::string& name) const
  {
    return name.empty() ? root.root : root.root + "/" + name;
  }

  // Path relative to the root: "" for the root, nullopt when outside it.
  std::optional<std::string> relative(const std::string& path) const
  {
    std::string p = path;
    while (p.size() > root.root.size() && p.back() == '/') {
      p.pop_back();
    }
    if (p == root.root) {
      return std::string();
    }
    if (!p.starts_with(root.root + "/")) {
      return std::nullopt;
    }
    std::string rest = p.substr(root.root.size() + 1);
    if (!is_contained_path(rest)) {
      return std::nullopt;
    }
    return rest;
  }

  std::string url_for(const std::string& name) const
  {
    if (root.kind == RemoteKind::hub) {
      return fmt::format("{}/{}/resolve/{}/{}", options.endpoint, root.repo,
                         url_encode(url_revision, false), url_encode(name, true));
    }
    return root.url + "/" + url_encode(name, true);
  }

  bool token_for(const std::string& url) const
  {
    return root.kind == RemoteKind::hub && !options.token.empty() &&
           url.starts_with(options.endpoint + "/");
  }

  Request request_for(const std::string& name, Want want, uint64_t begin, uint64_t end) const
  {
    Request r;
    r.name = name;
    r.url = url_for(name);
    r.want = want;
    r.begin = begin;
    r.end = end;
    r.token = token_for(r.url);
    return r;
  }

  // The first request for a shard's header: sized from the index when it names the shard.
  Request header_request(const std::string& name) const
  {
    const Entry* e = nullptr;
    if (auto it = entries.find(name); it != entries.end()) {
      e = &it->second;
    }
    uint64_t guess = k_min_guess;
    if (e != nullptr && e->index_tensors > 0) {
      const double json =
        static_cast<double>(e->index_name_bytes) +
        static_cast<double>(e->index_tensors) * overhead * (calibrated ? k_overhead_margin : 1.0);
      guess = 8 + static_cast<uint64_t>(std::ceil(json)) + k_metadata_allowance;
    } else if (e != nullptr && e->size) {
      guess = std::clamp<uint64_t>(*e->size / 64, k_min_guess, k_max_guess);
    }
    if (e != nullptr && e->size) {
      guess = std::min(guess, std::max<uint64_t>(*e->size, 1));
    }
    return request_for(name, Want::header, 0, guess);
  }

  Request first_request(const std::string& name) const
  {
    if (ends_with(name, ".safetensors")) {
      return header_request(name);
    }
    if (ends_with(name, ".json")) {
      return request_for(name, Want::whole, 0, 0);
    }
    return request_for(name, Want::range, 0, k_min_guess); // learns the size
  }

  void record_error(const std::string& name, const std::string& message)
  {
    if (error_names.insert(name).second) {
      errors.push_back(fmt::format("{}: {}", display(name), message));
    }
  }

  std::string failure_text(const Response& r) const
  {
    std::string text = r.error;
    if ((r.status == 401 || r.status == 403) && root.kind == RemoteKind::hub) {
      text += options.token.empty() ? "; the repository may be gated or private: set HF_TOKEN"
                                    : "; the token was refused or has no access to this repository";
    }
    return text;
  }

  // The hub said the repository or the revision does not exist (or is hidden from us): nothing
  // below the root can be read. Called with `mutex` held.
  bool note_gone(const Response& r)
  {
    if (root.kind != RemoteKind::hub ||
        (r.error_code != "RepoNotFound" && r.error_code != "RevisionNotFound")) {
      return false;
    }
    root_gone = true;
    record_error("", r.error_code == "RepoNotFound"
                       ? "repository not found (or private or gated: set HF_TOKEN)"
                       : fmt::format("revision '{}' not found", root.revision));
    return true;
  }

  // Stores a response for `name` (called with `mutex` held).
  void apply(const std::string& name, Response& r)
  {
    if (!r.commit.empty() && !commit) {
      commit = r.commit;
    }
    if (note_gone(r)) {
      entries[name].kind = Entry::Kind::missing;
      return;
    }
    Entry& e = entries[name];
    switch (r.outcome) {
    case Outcome::missing:
      e.kind = Entry::Kind::missing;
      e.chunks.clear();
      return;
    case Outcome::failed:
      e.kind = Entry::Kind::failed;
      e.error = fmt::format("{}: {}", display(name), failure_text(r));
      // Without libcurl every file fails alike: one line, for the root.
      record_error(r.no_transport ? std::string() : name, failure_text(r));
      return;
    case Outcome::ok:
      break;
    }
    if (r.size) {
      e.size = r.size;
    }
    if (!e.size) {
      e.kind = Entry::Kind::failed;
      e.error = fmt::format("{}: the server did not tell the file's size", display(name));
      record_error(name, "the server did not tell the file's size");
      return;
    }
    e.kind = Entry::Kind::file;
    if (r.begin < *e.size) {
      if (r.data.size() > *e.size - r.begin) {
        r.data.resize(static_cast<size_t>(*e.size - r.begin));
      }
      e.add(r.begin, std::move(r.data));
    }
  }

  std::vector<Response> fetch(std::vector<Request> requests)
  {
    return fetcher->run(std::move(requests), [this](const TransferStats& d) {
      std::lock_guard lock(mutex);
      stats.requests += d.requests;
      stats.retries += d.retries;
      stats.body_bytes += d.body_bytes;
      stats.header_bytes += d.header_bytes;
    });
  }

  // Fetches and applies a batch; `fetch_mutex` must be held.
  void fetch_apply(std::vector<Request> requests)
  {
    if (requests.empty()) {
      return;
    }
    std::vector<std::string> names;
    for (const auto& r : requests) {
      names.push_back(r.name);
    }
    auto responses = fetch(std::move(requests));
    std::lock_guard lock(mutex);
    for (size_t i = 0; i < responses.size(); ++i) {
      apply(names[i], responses[i]);
    }
    if (root.kind == RemoteKind::hub && commit && !is_commit(url_revision)) {
      url_revision = *commit; // every later request reads the same commit
    }
  }

  void read_tree(Response first)
  {
    std::vector<std::string> names;
    std::map<std::string, Entry::Kind> kinds;
    std::map<std::string, uint64_t> sizes;
    Response page = std::move(first);
    for (unsigned pages = 0;; ++pages) {
      if (page.outcome != Outcome::ok) {
        return; // no tree: the index and the known names stand in
      }
      simdjson::dom::parser parser;
      simdjson::dom::array items;
      if (parser.parse(simdjson::padded_string(page.data)).get_array().get(items)) {
        return;
      }
      for (auto item : items) {
        std::string_view type, path;
        if (item["type"].get_string().get(type) || item["path"].get_string().get(path) ||
            path.empty() || path.find('/') != std::string_view::npos) {
          continue;
        }
        const std::string name(path);
        if (type == "directory") {
          kinds[name] = Entry::Kind::directory;
        } else if (type == "file") {
          kinds[name] = Entry::Kind::file;
          uint64_t size = 0;
          if (!item["size"].get_uint64().get(size)) {
            sizes[name] = size;
          }
        }
      }
      if (page.next_link.empty()) {
        break;
      }
      if (pages + 1 >= options.max_tree_pages) {
        return; // too many pages: not trusted as complete
      }
      Request next;
      next.url = page.next_link;
      next.token = token_for(next.url);
      page = std::move(fetch({next}).front());
    }
    std::lock_guard lock(mutex);
    tree_complete = true;
    for (const auto& [name, kind] : kinds) {
      tree_names.insert(name);
      Entry& e = entries[name];
      if (e.kind == Entry::Kind::unknown || e.kind == Entry::Kind::missing) {
        e.kind = kind;
      }
      if (auto it = sizes.find(name); it != sizes.end() && !e.size) {
        e.size = it->second;
      }
    }
    // The tree is the truth about the top level: what it does not list is missing.
    for (auto& [name, e] : entries) {
      if (name.find('/') == std::string::npos && !kinds.contains(name) &&
          e.kind == Entry::Kind::unknown) {
        e.kind = Entry::Kind::missing;
      }
    }
  }

  // Round 1: the known JSON files and the tree listing, in parallel.
  void ensure_root()
  {
    std::lock_guard fetching(fetch_mutex);
    {
      std::lock_guard lock(mutex);
      if (root_checked) {
        return;
      }
    }
    std::vector<Request> requests;
    size_t tree_slot = 0;
    {
      std::lock_guard lock(mutex);
      for (const char* name : k_known_files) {
        requests.push_back(request_for(name, Want::whole, 0, 0));
      }
      if (root.kind == RemoteKind::http) {
        requests.push_back(header_request(k_single_file)); // no listing: probe the usual name
      }
      tree_slot = requests.size();
      if (root.kind == RemoteKind::hub) {
        Request tree;
        tree.url = fmt::format("{}/api/models/{}/tree/{}", options.endpoint, root.repo,
                               url_encode(root.revision, false));
        tree.token = token_for(tree.url);
        requests.push_back(std::move(tree));
      }
    }
    std::vector<std::string> names;
    for (const auto& r : requests) {
      names.push_back(r.name);
    }
    auto responses = fetch(std::move(requests));
    bool tree_ok = false;
    {
      std::lock_guard lock(mutex);
      for (size_t i = 0; i < responses.size(); ++i) {
        if (i == tree_slot) {
          if (!responses[i].commit.empty() && !commit) {
            commit = responses[i].commit;
          }
          note_gone(responses[i]);
          continue;
        }
        apply(names[i], responses[i]);
      }
      if (tree_slot < responses.size()) {
        tree_ok = responses[tree_slot].outcome == Outcome::ok;
      }
    }
    if (tree_ok) {
      read_tree(std::move(responses[tree_slot]));
    }
    std::lock_guard lock(mutex);
    root_checked = true;
    root_exists = tree_complete;
    for (const auto& [name, e] : entries) {
      root_exists |= e.kind == Entry::Kind::file;
    }
    root_exists &= !root_gone;
    if (!root_exists && errors.empty()) {
      record_error("", root.kind == RemoteKind::hub
                         ? "nothing found: no config.json, index or tree listing"
                         : "nothing found: no config.json, model.safetensors.index.json or "
                           "model.safetensors at this URL");
    }
    if (root.kind == RemoteKind::hub && commit && !is_commit(url_revision)) {
      url_revision = *commit;
    }
  }

  // Reads the index's weight_map: which shards exist, and how many tensors (and name bytes)
  // each holds, to size the header requests. Called with `mutex` held.
  std::vector<std::string> index_files()
  {
    std::vector<std::string> files;
    auto it = entries.find(k_index_name);
    if (it == entries.end() || it->second.kind != Entry::Kind::file || !it->second.size ||
        it->second.covered_from(0) < *it->second.size) {
      return files;
    }
    const std::string& text = it->second.chunks.begin()->second;
    simdjson::dom::parser parser;
    simdjson::dom::object weight_map;
    if (parser.parse(simdjson::padded_string(text))["weight_map"].get_object().get(weight_map)) {
      return files;
    }
    std::map<std::string, std::pair<uint64_t, uint64_t>, std::less<>> per_file;
    for (auto field : weight_map) {
      std::string_view file;
      if (field.value.get_string().get(file) || !is_contained_path(file)) {
        continue;
      }
      auto found = per_file.find(file);
      if (found == per_file.end()) {
        found = per_file.emplace(std::string(file), std::pair<uint64_t, uint64_t>{0, 0}).first;
      }
      found->second.first += 1;
      found->second.second += field.key.size();
    }
    for (const auto& [file, counts] : per_file) {
      Entry& e = entries[file];
      e.index_tensors = counts.first;
      e.index_name_bytes = counts.second;
      files.push_back(file);
    }
    return files;
  }

  // Learns the per-tensor JSON overhead from a header that arrived whole.
  void calibrate(const std::string& name)
  {
    const Entry& e = entries[name];
    if (e.index_tensors == 0 || e.covered_from(0) < 8) {
      return;
    }
    const uint64_t length = read_le64(e.chunks.begin()->second);
    if (length > k_max_header_size) {
      return;
    }
    const double per_tensor =
      (static_cast<double>(length) - static_cast<double>(e.index_name_bytes) -
       static_cast<double>(k_metadata_allowance)) /
      static_cast<double>(e.index_tensors);
    overhead = std::max(k_min_overhead, per_tensor);
    calibrated = true;
  }

  // For each shard whose first bytes arrived, the rest of its header when it is longer.
  std::vector<Request> remainder_requests(const std::vector<std::string>& shards) const
  {
    std::vector<Request> requests;
    for (const auto& name : shards) {
      auto it = entries.find(name);
      if (it == entries.end() || it->second.kind != Entry::Kind::file || !it->second.size) {
        continue;
      }
      const Entry& e = it->second;
      const uint64_t have = e.covered_from(0);
      if (have < 8) {
        continue;
      }
      const uint64_t length = read_le64(e.chunks.begin()->second);
      if (length > k_max_header_size || length > *e.size - 8) {
        continue; // the reader rejects it without reading further
      }
      if (have < 8 + length) {
        requests.push_back(request_for(name, Want::range, have, 8 + length));
      }
    }
    return requests;
  }

  // Rounds 2 and 3: what the folder holds, and every shard's header.
  void ensure_listing()
  {
    ensure_root();
    std::lock_guard fetching(fetch_mutex);
    std::vector<std::string> shards;
    std::vector<Request> first_round;
    std::optional<Request> calibration;
    {
      std::lock_guard lock(mutex);
      if (listed) {
        return;
      }
      std::set<std::string> names;
      if (tree_complete) {
        names = tree_names;
      } else {
        for (const char* name : k_known_files) {
          names.insert(name);
        }
        names.insert(k_single_file);
      }
      std::set<std::string> candidates;
      for (const auto& file : index_files()) {
        names.insert(file.substr(0, file.find('/')));
        candidates.insert(file);
      }
      for (const auto& name : names) {
        if (ends_with(name, ".safetensors")) {
          candidates.insert(name);
        }
      }
      const bool has_index = entries[k_index_name].kind == Entry::Kind::file;
      for (const auto& name : candidates) {
        Entry& e = entries[name];
        if (tree_complete && name.find('/') == std::string::npos && !tree_names.contains(name)) {
          e.kind = Entry::Kind::missing; // named by the index, absent from the tree
          continue;
        }
        if (name == k_single_file && has_index && !tree_complete &&
            e.kind == Entry::Kind::unknown) {
          continue; // never probed: an index names the shards
        }
        if (e.kind == Entry::Kind::missing || e.kind == Entry::Kind::directory ||
            e.kind == Entry::Kind::failed) {
          continue;
        }
        shards.push_back(name);
        if (e.covered_from(0) >= 8 || (e.size && *e.size == 0)) {
          continue; // already has its first bytes (the single-file probe)
        }
        if (!calibration && e.index_tensors > 0) {
          calibration = header_request(name);
        } else {
          first_round.push_back(header_request(name));
        }
      }
      for (const auto& name : names) {
        const Entry& e = entries[name];
        if (e.kind == Entry::Kind::file || e.kind == Entry::Kind::directory ||
            e.kind == Entry::Kind::failed || (e.kind == Entry::Kind::unknown && tree_complete)) {
          listing.push_back(name);
        }
      }
    }
    if (calibration) {
      const std::string name = calibration->name;
      fetch_apply({*calibration});
      std::lock_guard lock(mutex);
      calibrate(name);
      // The other shards are sized with what the first one taught.
      for (auto& r : first_round) {
        if (entries[r.name].index_tensors > 0) {
          r = header_request(r.name);
        }
      }
    }
    fetch_apply(std::move(first_round));
    std::vector<Request> rest;
    {
      std::lock_guard lock(mutex);
      rest = remainder_requests(shards);
    }
    fetch_apply(std::move(rest));
    std::lock_guard lock(mutex);
    if (!tree_complete) {
      // Without a listing, show only what turned out to exist.
      std::vector<std::string> kept;
      for (const auto& name : listing) {
        const Entry::Kind kind = entries[name].kind;
        if (kind == Entry::Kind::file || kind == Entry::Kind::failed ||
            kind == Entry::Kind::directory) {
          kept.push_back(name);
        }
      }
      for (const auto& name : shards) {
        const Entry::Kind kind = entries[name].kind;
        if (name.find('/') == std::string::npos &&
            (kind == Entry::Kind::file || kind == Entry::Kind::failed) &&
            std::find(kept.begin(), kept.end(), name) == kept.end()) {
          kept.push_back(name);
        }
      }
      listing = std::move(kept);
    }
    std::sort(listing.begin(), listing.end());
    listing.erase(std::unique(listing.begin(), listing.end()), listing.end());
    listed = true;
  }

  // Makes sure `name` (not the root) has a known kind, fetching its first bytes if needed.
  void ensure_entry(const std::string& name)
  {
    {
      std::lock_guard lock(mutex);
      auto it = entries.find(name);
      if (it != entries.end() && it->second.kind != Entry::Kind::unknown &&
          (it->second.kind != Entry::Kind::file || it->second.size)) {
        return;
      }
      if (tree_complete && name.find('/') == std::string::npos && !tree_names.contains(name)) {
        entries[name].kind = Entry::Kind::missing;
        return;
      }
    }
    std::lock_guard fetching(fetch_mutex);
    Request request;
    {
      std::lock_guard lock(mutex);
      auto it = entries.find(name);
      if (it != entries.end() && it->second.kind == Entry::Kind::directory) {
        return;
      }
      if (it != entries.end() && it->second.kind != Entry::Kind::unknown &&
          it->second.kind != Entry::Kind::file) {
        return;
      }
      if (it != entries.end() && it->second.kind == Entry::Kind::file &&
          (it->second.covered_from(0) > 0 || (it->second.size && *it->second.size == 0))) {
        return;
      }
      request = first_request(name);
    }
    fetch_apply({request});
    if (ends_with(name, ".safetensors")) {
      std::vector<Request> rest;
      {
        std::lock_guard lock(mutex);
        rest = remainder_requests({name});
      }
      fetch_apply(std::move(rest));
    }
  }

  // Serves [offset, offset + out.size()) of `name`, fetching what is not held.
  Expected<void> read(const std::string& name, uint64_t offset, std::span<char> out)
  {
    const uint64_t end = offset + out.size();
    for (int attempt = 0; attempt < 2; ++attempt) {
      {
        std::lock_guard lock(mutex);
        Entry& e = entries[name];
        if (e.kind == Entry::Kind::failed) {
          return unexpected(e.error);
        }
        if (e.size && end > *e.size) {
          return unexpected(fmt::format("{}: file ended at byte {} while reading {} bytes at {}",
                                        display(name), *e.size, out.size(), offset));
        }
        if (out.empty()) {
          return {};
        }
        const uint64_t have = e.covered_from(offset);
        if (have >= end) {
          auto it = std::prev(e.chunks.upper_bound(offset));
          std::memcpy(out.data(), it->second.data() + (offset - it->first), out.size());
          return {};
        }
        if (attempt == 1) {
          break;
        }
      }
      std::lock_guard fetching(fetch_mutex);
      Request request;
      {
        std::lock_guard lock(mutex);
        const uint64_t from = entries[name].covered_from(offset);
        if (from >= end) {
          continue; // another thread fetched it meanwhile
        }
        request = request_for(name, Want::range, from, end);
      }
      auto responses = fetch({request});
      std::lock_guard lock(mutex);
      Response& r = responses.front();
      if (r.outcome == Outcome::missing) {
        return unexpected(fmt::format("{}: no longer on the server", display(name)));
      }
      if (r.outcome == Outcome::failed) {
        const std::string text = failure_text(r);
        record_error(r.no_transport ? std::string() : name, text);
        return unexpected(fmt::format("{}: {}", display(name), text));
      }
      apply(name, r);
    }
    return unexpected(
      fmt::format("{}: the server sent fewer bytes than asked at {}", display(name), offset));
  }
};

namespace {

class HttpSource final : public ByteSource
{
public:
  HttpSource(HttpFileSystem::State& state, std::string name, uint64_t size)
    : m_state(state), m_name(std::move(name)), m_size(size)
  {
  }
  uint64_t size() const override { return m_size; }
  Expected<void> read_at(uint64_t offset, std::span<char> out) const override
  {
    return m_state.read(m_name, offset, out);
  }

private:
  HttpFileSystem::State& m_state;
  std::string m_name;
  uint64_t m_size;
};

} // namespace

// ------------------------------------------------------------------------------------------------

Expected<void>
check_curl_library(const std::string& library)
{
  auto api = load_curl(library);
  if (!api) {
    return unexpected(api.error());
  }
  // Left loaded, as remote reads leave it: unloading libcurl and the libraries it pulls in left
  // stale dynamic-TLS entries that LeakSanitizer's exit scan crashed on.
  return {};
}

HubEnvironment
hub_environment()
{
  HubEnvironment env;
  std::string endpoint = trim(get_env("HF_ENDPOINT"));
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.pop_back();
  }
  if (!endpoint.empty()) {
    env.endpoint = endpoint;
  }
  std::string hf_home = get_env("HF_HOME");
  if (hf_home.empty()) {
    std::string cache = get_env("XDG_CACHE_HOME");
    if (cache.empty()) {
      cache = get_env("HOME") + "/.cache";
    }
    hf_home = cache + "/huggingface";
  }
  env.hub_cache = get_env("HF_HUB_CACHE");
  if (env.hub_cache.empty()) {
    env.hub_cache = get_env("HUGGINGFACE_HUB_CACHE");
  }
  if (env.hub_cache.empty()) {
    env.hub_cache = hf_home + "/hub";
  }
  env.token = trim(get_env("HF_TOKEN"));
  if (env.token.empty()) {
    std::string file = get_env("HF_TOKEN_PATH");
    if (file.empty()) {
      file = hf_home + "/token";
    }
    DiskFileSystem disk;
    if (disk.stat(file).kind == FileKind::regular) {
      if (auto text = disk.read_file(file, 64 << 10)) {
        env.token = trim(text->substr(0, text->find('\n')));
      }
    }
  }
  return env;
}

HttpOptions
http_options(const HubEnvironment& environment)
{
  HttpOptions options;
  options.endpoint = environment.endpoint;
  options.token = environment.token;
  return options;
}

bool
is_remote_path(std::string_view path)
{
  return path.starts_with("hf://") || path.starts_with("http://") || path.starts_with("https://");
}

Expected<RemoteRoot>
parse_remote_path(std::string_view path)
{
  RemoteRoot out;
  if (path.starts_with("hf://")) {
    out.kind = RemoteKind::hub;
    std::string_view rest = path.substr(5);
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) {
      return unexpected(fmt::format("{}: expected hf://OWNER/NAME[@REVISION]", path));
    }
    const std::string_view owner = rest.substr(0, slash);
    rest.remove_prefix(slash + 1);
    const size_t next = rest.find('/');
    std::string_view name = rest.substr(0, next);
    std::string_view file = next == std::string_view::npos ? "" : rest.substr(next + 1);
    std::string_view revision = "main";
    std::string_view spelled_name = name;
    if (const size_t at = name.find('@'); at != std::string_view::npos) {
      revision = name.substr(at + 1);
      name = name.substr(0, at);
    }
    if (!is_name_part(owner) || !is_name_part(name)) {
      return unexpected(fmt::format("{}: '{}/{}' is not a repository name (OWNER/NAME of "
                                    "letters, digits, '-', '_' and '.')",
                                    path, owner, name));
    }
    auto decoded = url_decode(revision);
    if (revision.empty() || !decoded || decoded->empty()) {
      return unexpected(fmt::format("{}: empty or malformed revision", path));
    }
    while (file.ends_with('/')) {
      file.remove_suffix(1);
    }
    if (const std::string_view reason = uncontained_reason(file);
        !file.empty() && !reason.empty()) {
      return unexpected(
        fmt::format("{}: '{}' is not a path inside the repository: {}", path, file, reason));
    }
    out.repo = fmt::format("{}/{}", owner, name);
    out.revision = *decoded;
    out.root = fmt::format("hf://{}/{}", owner, spelled_name);
    out.file = std::string(file);
    return out;
  }
  if (!path.starts_with("http://") && !path.starts_with("https://")) {
    return unexpected(fmt::format("{}: not an hf://, http:// or https:// path", path));
  }
  out.kind = RemoteKind::http;
  std::string url(path);
  if (url.find_first_of("?#") != std::string::npos) {
    return unexpected(fmt::format("{}: URLs with a query or fragment are not supported", path));
  }
  if (url.find_first_of(" \t\r\n") != std::string::npos) {
    return unexpected(fmt::format("{}: a URL cannot hold white space", path));
  }
  while (url.ends_with('/')) {
    url.pop_back();
  }
  const size_t host_start = url.find("://") + 3;
  const size_t path_start = url.find('/', host_start);
  if (host_start >= url.size() || path_start == host_start) {
    return unexpected(fmt::format("{}: no host", path));
  }
  if (path_start != std::string::npos &&
      (ends_with(url, ".safetensors") || ends_with(url, ".json"))) {
    const size_t slash = url.rfind('/');
    out.file = url.substr(slash + 1);
    url.resize(slash);
  }
  out.root = url;
  out.url = url;
  return out;
}

HttpFileSystem::HttpFileSystem(RemoteRoot root, HttpOptions options)
  : m_state(std::make_unique<State>(std::move(root), std::move(options)))
{
  while (!m_state->options.endpoint.empty() && m_state->options.endpoint.back() == '/') {
    m_state->options.endpoint.pop_back();
  }
}

HttpFileSystem::~HttpFileSystem() = default;

const RemoteRoot&
HttpFileSystem::root() const
{
  return m_state->root;
}

FileInfo
HttpFileSystem::stat(const std::string& path) const
{
  FileInfo info;
  const auto name = m_state->relative(path);
  if (!name) {
    return info;
  }
  if (name->empty()) {
    m_state->ensure_root();
    std::lock_guard lock(m_state->mutex);
    info.kind = m_state->root_exists ? FileKind::directory : FileKind::missing;
    return info;
  }
  m_state->ensure_entry(*name);
  std::lock_guard lock(m_state->mutex);
  const Entry& e = m_state->entries[*name];
  switch (e.kind) {
  case Entry::Kind::file:
    info.kind = FileKind::regular;
    info.size = e.size.value_or(0);
    info.mode = 0644;
    break;
  case Entry::Kind::failed:
    // Shown as a file that cannot be read, as an unreadable file on disk would be.
    info.kind = FileKind::regular;
    info.mode = 0644;
    break;
  case Entry::Kind::directory:
    info.kind = FileKind::directory;
    break;
  case Entry::Kind::unknown:
  case Entry::Kind::missing:
    break;
  }
  return info;
}

Expected<std::unique_ptr<ByteSource>>
HttpFileSystem::open(const std::string& path) const
{
  const auto name = m_state->relative(path);
  if (!name || name->empty()) {
    return unexpected(fmt::format("{}: is a directory, not a regular file", path));
  }
  m_state->ensure_entry(*name);
  std::lock_guard lock(m_state->mutex);
  const Entry& e = m_state->entries[*name];
  switch (e.kind) {
  case Entry::Kind::file:
    return std::unique_ptr<ByteSource>(
      std::make_unique<HttpSource>(*m_state, *name, e.size.value_or(0)));
  case Entry::Kind::failed:
    return unexpected(e.error);
  case Entry::Kind::directory:
    return unexpected(fmt::format("{}: is a directory, not a regular file", path));
  case Entry::Kind::unknown:
  case Entry::Kind::missing:
    break;
  }
  return unexpected(fmt::format("{}: cannot open: No such file or directory", path));
}

Expected<std::vector<std::string>>
HttpFileSystem::list_dir(const std::string& path) const
{
  const auto name = m_state->relative(path);
  if (!name) {
    return unexpected(
      fmt::format("{}: cannot list directory: not below {}", path, m_state->root.root));
  }
  if (!name->empty()) {
    return unexpected(fmt::format("{}: cannot list directory: only the top folder of a remote "
                                  "model is listed",
                                  path));
  }
  m_state->ensure_listing();
  std::lock_guard lock(m_state->mutex);
  if (!m_state->root_exists) {
    return unexpected(fmt::format("{}: cannot list directory: nothing could be read", path));
  }
  return m_state->listing;
}

std::optional<std::string>
HttpFileSystem::revision() const
{
  std::lock_guard lock(m_state->mutex);
  return m_state->commit;
}

std::vector<std::string>
HttpFileSystem::errors() const
{
  std::lock_guard lock(m_state->mutex);
  return m_state->errors;
}

TransferStats
HttpFileSystem::stats() const
{
  std::lock_guard lock(m_state->mutex);
  return m_state->stats;
}

// ------------------------------------------------------------------------------------------------

RoutingFileSystem::RoutingFileSystem(HttpOptions options, DiskFileSystem::Options disk)
  : m_disk(disk), m_options(std::move(options))
{
}

RoutingFileSystem::~RoutingFileSystem() = default;

const FileSystem*
RoutingFileSystem::route(const std::string& path) const
{
  if (!is_remote_path(path)) {
    return &m_disk;
  }
  std::lock_guard lock(m_mutex);
  const HttpFileSystem* best = nullptr;
  for (const auto& remote : m_remotes) {
    const std::string& root = remote->root().root;
    if ((path == root || path.starts_with(root + "/")) &&
        (best == nullptr || root.size() > best->root().root.size())) {
      best = remote.get();
    }
  }
  if (best != nullptr) {
    return best;
  }
  auto parsed = parse_remote_path(path);
  if (!parsed) {
    return nullptr;
  }
  m_remotes.push_back(std::make_unique<HttpFileSystem>(std::move(*parsed), m_options));
  return m_remotes.back().get();
}

FileInfo
RoutingFileSystem::stat(const std::string& path) const
{
  const FileSystem* fs = route(path);
  return fs != nullptr ? fs->stat(path) : FileInfo{};
}

Expected<std::unique_ptr<ByteSource>>
RoutingFileSystem::open(const std::string& path) const
{
  const FileSystem* fs = route(path);
  if (fs == nullptr) {
    return unexpected(parse_remote_path(path).error());
  }
  return fs->open(path);
}

Expected<std::unique_ptr<ByteSource>>
RoutingFileSystem::open_described(const std::string& path, FileInfo& info) const
{
  const FileSystem* fs = route(path);
  if (fs == nullptr) {
    info = FileInfo{};
    return unexpected(parse_remote_path(path).error());
  }
  return fs->open_described(path, info);
}

Expected<std::vector<std::string>>
RoutingFileSystem::list_dir(const std::string& path) const
{
  const FileSystem* fs = route(path);
  if (fs == nullptr) {
    return unexpected(parse_remote_path(path).error());
  }
  return fs->list_dir(path);
}

std::vector<const HttpFileSystem*>
RoutingFileSystem::remotes() const
{
  std::lock_guard lock(m_mutex);
  std::vector<const HttpFileSystem*> out;
  for (const auto& remote : m_remotes) {
    out.push_back(remote.get());
  }
  return out;
}

std::vector<std::string>
RoutingFileSystem::remote_errors() const
{
  std::vector<std::string> out;
  for (const HttpFileSystem* remote : remotes()) {
    for (auto& line : remote->errors()) {
      out.push_back(std::move(line));
    }
  }
  return out;
}

std::vector<std::string>
RoutingFileSystem::remote_notes() const
{
  std::vector<std::string> out;
  for (const HttpFileSystem* remote : remotes()) {
    const TransferStats s = remote->stats();
    const auto commit = remote->revision();
    std::string line = remote->root().root + ":";
    if (commit) {
      line += fmt::format(" read at revision {},", *commit);
    }
    line += fmt::format(" {} request{}{}, {} received", s.requests, s.requests == 1 ? "" : "s",
                        s.retries > 0 ? fmt::format(" ({} retried)", s.retries) : "",
                        human_bytes(s.body_bytes + s.header_bytes));
    out.push_back(std::move(line));
  }
  return out;
}

// ------------------------------------------------------------------------------------------------

bool
looks_like_repo_id(std::string_view text)
{
  if (is_remote_path(text)) {
    return false;
  }
  const size_t at = text.find('@');
  const std::string_view id = text.substr(0, at);
  if (at != std::string_view::npos) {
    const std::string_view revision = text.substr(at + 1);
    if (revision.empty() || revision.find('/') != std::string_view::npos) {
      return false;
    }
  }
  const size_t slash = id.find('/');
  return slash != std::string_view::npos && is_name_part(id.substr(0, slash)) &&
         is_name_part(id.substr(slash + 1));
}

Expected<std::string>
find_cached_snapshot(const FileSystem& fs, const std::string& hub_cache, std::string_view repo_id)
{
  if (!looks_like_repo_id(repo_id)) {
    return unexpected(fmt::format("{}: not OWNER/NAME[@REVISION]", repo_id));
  }
  const size_t at = repo_id.find('@');
  const std::string id(repo_id.substr(0, at));
  const std::string revision =
    at == std::string_view::npos ? "main" : std::string(repo_id.substr(at + 1));
  const size_t slash = id.find('/');
  const std::string folder =
    join_path(hub_cache, fmt::format("models--{}--{}", id.substr(0, slash), id.substr(slash + 1)));
  if (fs.stat(folder).kind != FileKind::directory) {
    return unexpected(fmt::format("{}: no such folder, and not in the Hugging Face cache at {} "
                                  "(hf://{} reads it from the Hub)",
                                  repo_id, hub_cache, repo_id));
  }
  std::string commit;
  if (is_commit(revision) &&
      fs.stat(join_path(folder, "snapshots/" + revision)).kind == FileKind::directory) {
    commit = revision;
  } else {
    const std::string ref = join_path(folder, "refs/" + revision);
    auto text = fs.read_file(ref, 4096);
    if (!text) {
      return unexpected(fmt::format("{}: revision '{}' is not in the cache ({} is not there)",
                                    repo_id, revision, ref));
    }
    commit = trim(*text);
    if (commit.empty() || commit.find('/') != std::string::npos || commit == "." ||
        commit == "..") {
      return unexpected(fmt::format("{}: {} does not hold a commit", repo_id, ref));
    }
  }
  const std::string snapshot = join_path(folder, "snapshots/" + commit);
  if (fs.stat(snapshot).kind != FileKind::directory) {
    return unexpected(
      fmt::format("{}: the cache has no snapshot {} (expected {})", repo_id, commit, snapshot));
  }
  return snapshot;
}

Expected<std::string>
resolve_model_argument(const FileSystem& disk, const std::string& argument,
                       const HubEnvironment& environment)
{
  if (is_remote_path(argument)) {
    auto parsed = parse_remote_path(argument);
    if (!parsed) {
      return unexpected(parsed.error());
    }
    return argument;
  }
  if (disk.stat(argument).kind != FileKind::missing || !looks_like_repo_id(argument)) {
    return argument;
  }
  return find_cached_snapshot(disk, environment.hub_cache, argument);
}

} // namespace qcheck
