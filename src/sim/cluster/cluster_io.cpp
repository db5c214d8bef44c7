#include "sim/cluster/cluster_io.h"

#include <nlohmann/json.hpp>

#include "sim/apiserver/api_server.h"

namespace kubex::sim::cluster {

using nlohmann::json;

Client::Response StoreIo::call(const std::string& user, const std::string& method, const std::string& path,
                               std::string body, const std::string& content_type) {
  ApiRequest req;
  req.method = method;
  auto q = path.find('?');
  req.path = path.substr(0, q);
  if (q != std::string::npos) {
    std::string qs = path.substr(q + 1);
    std::size_t start = 0;
    while (start < qs.size()) {
      auto amp = qs.find('&', start);
      std::string kv = qs.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
      auto eq = kv.find('=');
      req.query.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }
  req.body = std::move(body);
  req.content_type = content_type;
  req.accept = "application/json";
  req.user = UserInfo{user, "", {"system:authenticated"}};
  ApiResponse res = api_.handle(req);
  return {res.status, std::move(res.body)};
}

std::unique_ptr<Feed> StoreIo::make_feed(const std::string& storage) {
  return std::make_unique<StoreFeed>(api_.store(), storage);
}

std::optional<json> StoreIo::read(const std::string& storage, const std::string& key) {
  auto obj = api_.store().get(storage, key);
  if (!obj || !obj->text) return std::nullopt;
  json j = json::parse(*obj->text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

std::optional<json> StoreIo::read_kind(const std::string& api_version, const std::string& kind, const std::string& ns,
                                       const std::string& name) {
  auto slash = api_version.find('/');
  std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  auto r = api_.registry().find_kind(group, version, kind);
  if (!r || name.empty()) return std::nullopt;
  return api_.read(*r, r->namespaced ? ns : "", name);
}

bool StoreIo::exists(const std::string& storage, const std::string& key) {
  return api_.store().get(storage, key).has_value();
}

const common::Clock& StoreIo::clock() const { return api_.clock(); }

}  // namespace kubex::sim::cluster
