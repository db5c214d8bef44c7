// The recommendations ConfigMap a controller reads (observe::ConfigMapSource) as a fake: documents the test sets by
// "ns/name", what is followed, and the handler a watch would call.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "observe/config_maps.h"

namespace kubex::controllers::test {

// ConfigMaps by "ns/name"; records what is followed and hands the test the handler a watch would call.
class FakeConfigMaps final : public observe::ConfigMapSource {
 public:
  std::map<std::string, observe::ConfigMapRead> maps;
  std::optional<kube::ApiStatus> fail;  // every get() fails with this while set
  std::vector<std::string> followed;    // every follow(), "ns/name" ("" for none)
  Handler handler;
  int gets = 0, stops = 0;

  kube::KResult<observe::ConfigMapRead> get(const std::string& ns, const std::string& name) override {
    ++gets;
    if (fail) return std::unexpected(*fail);
    auto it = maps.find(ns + "/" + name);
    return it == maps.end() ? observe::ConfigMapRead{} : it->second;
  }
  void follow(const std::string& ns, const std::string& name, Handler changed) override {
    followed.push_back(name.empty() ? "" : ns + "/" + name);
    handler = std::move(changed);
  }
  void stop() override {
    ++stops;
    handler = nullptr;
  }

  void put(const std::string& location, const std::string& rv, std::map<std::string, std::string> data) {
    maps[location] = observe::ConfigMapRead{true, rv, std::move(data)};
  }
};

}  // namespace kubex::controllers::test
