// The transport-independent core of kubex-sim's API server: one `handle()` per REST request, used by the
// HTTPS front end and by in-process cluster controllers alike (so their writes pass admission too).
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

#include "common/clock.h"
#include "common/log.h"
#include "sim/apiserver/api_error.h"
#include "sim/apiserver/resource.h"
#include "sim/apiserver/store.h"

namespace kubex::sim {

class Admission;
class GarbageCollector;

struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
};

struct ApiRequest {
  std::string method;  // GET POST PUT PATCH DELETE
  std::string path;
  std::multimap<std::string, std::string> query;
  std::string body;
  std::string content_type;
  std::string accept;
  std::string user_agent;  // names the field manager of writes without ?fieldManager
  UserInfo user;

  std::optional<std::string> param(const std::string& name) const;
};

// A streaming body (WATCH). `write` returns false once the client is gone; the function returns when the
// stream should end.
using StreamFn = std::function<void(const std::function<bool(const std::string&)>& write)>;

struct ApiResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::string> warnings;
  std::vector<std::pair<std::string, std::string>> headers;
  StreamFn stream;  // set for WATCH responses

  static ApiResponse error(const ApiError& e);
  static ApiResponse json(int status, const nlohmann::json& body);
};

// Query-parameter booleans the way Go's strconv.ParseBool reads them ("1", "t", "true", "True", ...).
bool parse_bool_param(const std::string& v);

// Parsed URL, like k8s.io/apiserver RequestInfo.
struct RequestInfo {
  bool is_resource = false;
  std::string verb;  // get list watch create update patch delete deletecollection
  std::string prefix;  // "api" or "apis"
  std::string group, version, ns, resource, name, subresource;
};
// Returns nullopt for paths that are not resource paths (discovery, openapi, ...).
std::optional<RequestInfo> parse_request_info(const std::string& method, const std::string& path,
                                              const std::multimap<std::string, std::string>& query);

struct ApiServerOptions {
  std::size_t watch_window = 10000;
  std::chrono::seconds bookmark_interval{5};
  std::chrono::seconds max_watch_timeout{1800};
  std::string server_version_minor = "32";
  std::string external_address;  // "127.0.0.1:6443", for discovery serverAddressByClientCIDRs
  // service "ns/name" -> "127.0.0.1:PORT" for webhook service references
  std::map<std::string, std::string> service_map;
  const common::Clock* clock = &common::RealClock::instance();
};

class ApiServer {
 public:
  explicit ApiServer(ApiServerOptions options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  ApiResponse handle(const ApiRequest& req);

  // Creates the namespaces every cluster has (default, kube-system, kube-public, kube-node-lease) when missing.
  void bootstrap(bool restored);
  void set_external_address(std::string address) { options_.external_address = std::move(address); }
  // Starts background workers (garbage collector, namespace finalizer, PDB status). Idempotent.
  void start();
  // Ends open WATCH streams promptly (before the HTTP server drains its workers).
  void begin_shutdown();
  void stop();

  Registry& registry() { return registry_; }
  Store& store() { return store_; }
  const ApiServerOptions& options() const { return options_; }
  const common::Clock& clock() const { return *options_.clock; }
  common::TimePoint now() const { return options_.clock->now(); }

  // Storage bucket of a resource (events.k8s.io/v1 Events share core/v1 storage).
  static std::string storage_of(const ResourceInfo& r);

  // --- in-process client, used by the simulated cluster's controllers ---
  // Each call runs the same pipeline as a REST request (defaults, admission, validation, storage).
  ApiResponse call(const std::string& method, const std::string& path, const std::string& body = {},
                   const std::string& content_type = "application/json",
                   const std::multimap<std::string, std::string>& query = {});
  UserInfo controller_user() const;

  // A built-in validating admission step (e.g. the KAI-Scheduler's pod validation the simulated cluster
  // emulates). It runs for every write before the ValidatingWebhookConfigurations; an error rejects it.
  using ValidationPlugin = std::function<std::expected<void, ApiError>(
      const ResourceInfo& r, const std::string& subresource, const std::string& operation, const nlohmann::json& obj,
      const nlohmann::json* old)>;
  void add_validation_plugin(std::string name, ValidationPlugin plugin);
  std::vector<std::pair<std::string, ValidationPlugin>> validation_plugins() const;

 private:
  friend class Admission;
  friend class GarbageCollector;
  // discovery & openapi & misc
  ApiResponse handle_nonresource(const ApiRequest& req);
  // verbs
  ApiResponse do_get(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_list(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_watch(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_create(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_update(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_patch(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  // Server-side apply (PATCH application/apply-patch+yaml; api_apply.cpp).
  ApiResponse do_apply(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  // The create pipeline for a decoded object; `applied_managed_fields` is set for a create by apply.
  ApiResponse create_object(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r, nlohmann::json obj,
                            const nlohmann::json* applied_managed_fields);
  ApiResponse do_delete(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_delete_collection(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_eviction(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_binding(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);
  ApiResponse do_scale(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r);

 public:
  // Shared write path for PUT/PATCH/status/scale/finalizer updates: `next` is the full desired object.
  // Returns the stored object or an error. `subresource` is "" or "status".
  struct WriteOptions {
    bool dry_run = false;
    std::string field_validation = "Warn";
    std::string subresource;
    UserInfo user;
    bool run_admission = true;
    // The field manager of an Update-operation write ("" = kubex-sim's own controllers).
    std::string field_manager;
    // Set by server-side apply: the managedFields the object gets (already computed from the applied config).
    std::shared_ptr<const nlohmann::json> applied_managed_fields;
  };
  std::expected<nlohmann::json, ApiError> write_update(const ResourceInfo& r, const std::string& ns,
                                                       const std::string& name, nlohmann::json next,
                                                       const nlohmann::json& current, std::uint64_t expected_rv,
                                                       const WriteOptions& opts, std::vector<std::string>& warnings);
  // Deletes (gracefully, honouring finalizers and propagation policy).
  struct DeleteOptions {
    std::optional<std::int64_t> grace_period_seconds;
    std::string propagation;  // "", Orphan, Background, Foreground
    std::string precondition_uid, precondition_rv;
    bool dry_run = false;
    UserInfo user;
  };
  std::expected<nlohmann::json, ApiError> delete_object(const ResourceInfo& r, const std::string& ns,
                                                        const std::string& name, const DeleteOptions& opts,
                                                        bool& removed);
  // Reads an object as JSON (nullopt if absent).
  std::optional<nlohmann::json> read(const ResourceInfo& r, const std::string& ns, const std::string& name) const;

  // Recently computed discovery/OpenAPI documents are cached per registry generation.
  std::string cached_document(const std::string& key, const std::function<std::string()>& build);

 private:
  std::expected<nlohmann::json, ApiError> decode_body(const ApiRequest& req) const;
  // The DeleteOptions of a DELETE (body in any media type decode_body reads, then query parameters).
  std::expected<DeleteOptions, ApiError> delete_options(const ApiRequest& req) const;
  bool namespace_exists(const std::string& ns, bool& terminating) const;
  void after_remove(const ResourceInfo& r, const nlohmann::json& removed);

  ApiServerOptions options_;
  std::atomic<bool> stopping_{false};
  Registry registry_;
  Store store_;
  std::unique_ptr<Admission> admission_;
  std::unique_ptr<GarbageCollector> gc_;
  common::Logger log_{"kubex-sim.apiserver"};
  mutable std::mutex plugins_mu_;
  std::vector<std::pair<std::string, ValidationPlugin>> plugins_;
  std::mutex doc_mu_;
  std::map<std::string, std::pair<std::uint64_t, std::string>> doc_cache_;
};

}  // namespace kubex::sim
