// A Kubernetes REST client (DESIGN §3 kube/client): TLS with a client certificate or bearer token, typed
// errors, client-side QPS/burst limiting, retries with capped exponential back-off and jitter for 429
// (honouring Retry-After) and 5xx, request timeouts, paginated LIST and streaming WATCH.
#pragma once

#include <atomic>
#include <chrono>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/http_reuse.h"
#include "common/result.h"
#include "kube/client/kubeconfig.h"

namespace kubex::kube {

// A failed call: the API server's Status, or a transport failure (code 0).
struct ApiStatus {
  int code = 0;            // HTTP status; 0 = the request did not complete (connection, TLS, timeout)
  std::string reason;      // NotFound, Conflict, Expired, TooManyRequests, Unauthorized, ... or Transport/Timeout
  std::string message;     // the server's message (or the transport error)
  int retry_after_seconds = 0;

  bool not_found() const { return code == 404; }
  bool conflict() const { return code == 409 && reason != "AlreadyExists"; }
  bool already_exists() const { return code == 409 && reason == "AlreadyExists"; }
  bool gone() const { return code == 410 || reason == "Expired" || reason == "Gone"; }
  bool too_many_requests() const { return code == 429; }
  bool unauthorized() const { return code == 401; }
  bool forbidden() const { return code == 403; }
  bool invalid() const { return code == 422; }
  bool server_error() const { return code >= 500; }
  bool transport() const { return code == 0; }
  std::string str() const;
};

template <class T>
using KResult = std::expected<T, ApiStatus>;

struct ClientOptions {
  double qps = 20;
  int burst = 30;
  std::chrono::milliseconds timeout{30000};  // per request (not watches)
  // ENG-4, like client-go: a 429, or a 5xx with Retry-After, was not processed and is sent again after
  // max(Retry-After, back-off), at most `max_retry_after_retries` times, whatever the verb; any other 5xx (not 501)
  // is sent again with jittered back-off only for idempotent verbs (GET, HEAD, PUT, DELETE), at most
  // `max_retries` times, as are connection failures. A 5xx to a POST or PATCH goes back to the caller.
  int max_retries = 5;
  int max_retry_after_retries = 10;
  // A 429 without Retry-After counts as "told to wait" (true), or goes back to the caller (false: the eviction
  // client, for which such a 429 is a PodDisruptionBudget's refusal, ACT-5).
  bool retry_bare_429 = true;
  std::chrono::milliseconds backoff_base{100};
  std::chrono::milliseconds backoff_cap{10000};
  std::string user_agent = "kubex/0.1";
  // A kept-alive connection unused for longer is not reused (common/http_reuse.h): below the idle timeout of
  // the API servers this client talks to (kubex-sim 10 s, kube-apiserver 90 s).
  std::chrono::milliseconds idle_connection_timeout{common::kIdleConnectionTimeout};
};

enum class PatchKind { kMerge, kJson, kStrategic };

struct WriteOptions {
  bool dry_run = false;
  std::string field_manager = "kubex";
};

struct DeleteOptions {
  std::optional<std::int64_t> grace_period_seconds;
  std::string propagation;  // "", Background, Foreground, Orphan
  std::string precondition_uid, precondition_rv;
  bool dry_run = false;
};

struct ListOptions {
  std::string label_selector, field_selector;
  int page_size = 500;
  std::string resource_version;  // "" = most recent (consistent read)
  // ENG-4: when set, a LIST whose continue token expired (410 on a later page) starts again from the first page,
  // at most 3 times: `on_restart` is called first, so that the caller drops the items it got. Unset: the 410 is
  // returned.
  std::function<void()> on_restart;
};

struct WatchOptions {
  std::string label_selector, field_selector;
  std::string resource_version;
  bool allow_bookmarks = true;
  int timeout_seconds = 300;  // server-side watch timeout
};

struct WatchEvent {
  std::string type;  // ADDED MODIFIED DELETED BOOKMARK ERROR
  std::shared_ptr<nlohmann::json> object;
};

// Called after every HTTP request with the method and the status code ("error" when none).
using RequestObserver = std::function<void(const std::string& method, const std::string& code)>;

class Client {
 public:
  static common::Result<std::shared_ptr<Client>> create(ConnectionConfig config, ClientOptions options = {});
  ~Client();

  KResult<nlohmann::json> get(const std::string& path);
  KResult<nlohmann::json> create(const std::string& collection_path, const nlohmann::json& obj,
                                 const WriteOptions& opts = {});
  KResult<nlohmann::json> update(const std::string& path, const nlohmann::json& obj, const WriteOptions& opts = {});
  KResult<nlohmann::json> patch(const std::string& path, PatchKind kind, const nlohmann::json& patch,
                                const WriteOptions& opts = {});
  // Returns the deleted object (or the server's Status).
  KResult<nlohmann::json> remove(const std::string& path, const DeleteOptions& opts = {});

  // LIST with pagination (`page_size` per page). Items are handed over one by one (each a full object with
  // apiVersion/kind filled in); returns the list's resourceVersion. A page can expire mid-way (410): the
  // caller relists.
  KResult<std::string> list(const std::string& path, const ListOptions& opts,
                            const std::function<void(nlohmann::json&& item)>& on_item);

  // WATCH: streams events until the server ends the stream (timeoutSeconds), `on_event` returns false, or
  // `stop` becomes true (checked at least every 200 ms). An ERROR event with 410 is returned as an ApiStatus
  // with gone() == true.
  KResult<void> watch(const std::string& path, const WatchOptions& opts,
                      const std::function<bool(WatchEvent&& ev)>& on_event, const std::atomic<bool>* stop);

  // Any request (discovery, subresources with custom bodies). `body` is sent as `content_type`.
  struct Raw {
    int code = 0;
    std::string body;
    std::vector<std::string> warnings;
  };
  KResult<Raw> request(const std::string& method, const std::string& path, const std::string& body = "",
                       const std::string& content_type = "application/json");

  void set_observer(RequestObserver observer);
  const ConnectionConfig& config() const;
  // Checks that the server answers and the credentials are accepted (GET /version then /api).
  KResult<nlohmann::json> probe();

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads `path`, lets `mutate` change it (return false to stop without writing) and PUTs it with the read
// resourceVersion; on 409 Conflict re-reads and re-applies, up to `attempts` times.
KResult<nlohmann::json> retry_on_conflict(Client& client, const std::string& path,
                                          const std::function<bool(nlohmann::json& obj)>& mutate, int attempts = 5);

// REST paths: ("", "v1", "pods", "ns", "name") -> /api/v1/namespaces/ns/pods/name
std::string resource_path(const std::string& group, const std::string& version, const std::string& plural,
                          const std::string& ns = "", const std::string& name = "", const std::string& sub = "");

}  // namespace kubex::kube
