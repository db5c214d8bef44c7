#include "kube/cache/discovery.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "kube/client/client.h"

namespace kubex::kube {

namespace {

// "/apis/<group>/<version>/<plural>" (also with "namespaces/<ns>/" before the plural) -> (group/version, plural).
bool split_path(const std::string& path, std::string& gv, std::string& plural) {
  const std::string prefix = "/apis/";
  if (path.rfind(prefix, 0) != 0) return false;
  std::string rest = path.substr(prefix.size());
  auto a = rest.find('/');
  if (a == std::string::npos) return false;
  auto b = rest.find('/', a + 1);
  if (b == std::string::npos) return false;
  gv = rest.substr(0, b);
  plural = rest.substr(b + 1);
  if (plural.rfind("namespaces/", 0) == 0) {
    auto c = plural.find('/', std::string("namespaces/").size());
    if (c == std::string::npos) return false;
    plural = plural.substr(c + 1);
  }
  if (auto q = plural.find_first_of("/?"); q != std::string::npos) plural = plural.substr(0, q);
  return !plural.empty();
}

}  // namespace

ApiDiscovery::ApiDiscovery(std::shared_ptr<Client> client, std::chrono::milliseconds interval)
    : client_(std::move(client)), interval_(interval) {}

bool ApiDiscovery::served(const std::string& list_path) {
  std::string gv, plural;
  if (!split_path(list_path, gv, plural)) return true;  // the core group, or a path this does not know
  std::lock_guard lk(mu_);
  auto now = Clock::now();
  if (!groups_known_ || now - groups_fetched_ >= interval_) {
    groups_known_ = true;
    groups_fetched_ = now;
    auto r = client_->get("/apis");
    if (!r) {
      group_versions_.reset();
    } else {
      std::set<std::string> gvs;
      for (const auto& g : r->value("groups", nlohmann::json::array())) {
        for (const auto& v : g.value("versions", nlohmann::json::array())) {
          if (v.contains("groupVersion") && v["groupVersion"].is_string()) gvs.insert(v["groupVersion"].get<std::string>());
        }
      }
      group_versions_ = std::move(gvs);
    }
  }
  if (!group_versions_) return true;
  if (!group_versions_->count(gv)) return false;
  Resources& res = resources_[gv];
  if (res.fetched == Clock::time_point{} || now - res.fetched >= interval_) {
    res.fetched = now;
    auto r = client_->get("/apis/" + gv);
    if (r) {
      std::set<std::string> names;
      for (const auto& x : r->value("resources", nlohmann::json::array())) {
        if (x.contains("name") && x["name"].is_string()) names.insert(x["name"].get<std::string>());
      }
      res.names = std::move(names);
    } else if (r.error().not_found()) {
      res.names = std::set<std::string>{};
    } else {
      res.names.reset();
    }
  }
  return !res.names || res.names->count(plural) > 0;
}

void ApiDiscovery::wait_served(const std::string& list_path, const std::atomic<bool>& stop) {
  while (!stop) {
    if (served(list_path)) return;
    Clock::time_point due;
    {
      std::lock_guard lk(mu_);
      due = groups_fetched_ + interval_;
    }
    while (!stop && Clock::now() < due) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace kubex::kube
