// ConfigMaps the engine reads by name (PRO-6: the proactive recommendations document): one read of a
// ConfigMap's data and its resourceVersion, and a notification when it changes. Over kube::Client in the
// engine (client_config_maps: GET, and a WATCH with a field selector on the name), a fake in controller
// tests.
// Read-only (DESIGN §3 observe/).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kube/client/client.h"

namespace kubex::observe {

struct ConfigMapRead {
  bool found = false;             // false: the ConfigMap does not exist
  std::string resource_version;   // metadata.resourceVersion ("" when not found)
  std::map<std::string, std::string> data;  // .data (keys whose value is not a string are left out)
};

struct ConfigMapEvent {
  enum class Type { kAdded, kModified, kDeleted };
  Type type = Type::kAdded;
  std::string resource_version;  // of the object the event carries
};

class ConfigMapSource {
 public:
  using Handler = std::function<void(const ConfigMapEvent& event)>;
  virtual ~ConfigMapSource() = default;

  // ConfigMap `ns`/`name` now; found=false when it does not exist, any other API failure as an error.
  virtual kube::KResult<ConfigMapRead> get(const std::string& ns, const std::string& name) = 0;

  // From now on, calls `changed` (from another thread) for every add, update and delete of ConfigMap
  // `ns`/`name`; every (re)connect of the watch replays the current object as an add. Replaces what was
  // followed before; an empty `name` follows nothing. A new location is watched within 30 s; a failed watch
  // (e.g. no watch permission) is retried after 5 s.
  virtual void follow(const std::string& ns, const std::string& name, Handler changed) = 0;
  // Stops following and waits until no `changed` call runs any more. follow() may start again afterwards.
  virtual void stop() = 0;
};

std::unique_ptr<ConfigMapSource> client_config_maps(std::shared_ptr<kube::Client> client);

}  // namespace kubex::observe
