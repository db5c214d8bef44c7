#include "sim/apiserver/persistence.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "sim/apiserver/api_server.h"
#include "sim/apiserver/custom.h"

namespace kubex::sim {

using nlohmann::json;

Persistence::Persistence(std::string dir) : path_((std::filesystem::path(dir) / "objects.jsonl").string()) {}

Persistence::~Persistence() {
  if (file_) std::fclose(file_);
}

common::Result<std::size_t> Persistence::open(ApiServer& api) {
  struct Entry {
    std::uint64_t rv = 0;
    std::string text;  // empty = deleted
  };
  std::map<std::string, std::map<std::string, Entry>> state;  // storage -> key -> entry
  std::uint64_t max_rv = 0;
  {
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
      json e = json::parse(line, nullptr, false);
      if (!e.is_object() || !e.contains("s") || !e.contains("k") || !e.contains("rv")) continue;  // torn write
      Entry ent;
      ent.rv = e["rv"].get<std::uint64_t>();
      if (e.contains("o")) ent.text = e["o"].dump();
      max_rv = std::max(max_rv, ent.rv);
      state[e["s"].get<std::string>()][e["k"].get<std::string>()] = std::move(ent);
    }
  }
  // CRDs first, so the resources they define exist before their objects are restored.
  const std::string crd_storage = "apiextensions.k8s.io/customresourcedefinitions";
  for (const auto& [key, ent] : state[crd_storage]) {
    if (ent.text.empty()) continue;
    json crd = json::parse(ent.text);
    for (auto& r : custom::crd_resources(crd)) api.registry().put(r);
  }
  std::map<std::string, std::vector<std::string>> fields;
  for (const auto& r : api.registry().all()) fields[ApiServer::storage_of(*r)] = r->selectable_fields;
  std::size_t restored = 0;
  for (const auto& [storage, objects] : state) {
    for (const auto& [key, ent] : objects) {
      if (ent.text.empty()) continue;
      api.store().restore(storage, key, ent.text, ent.rv, fields[storage]);
      ++restored;
    }
  }
  api.store().finish_restore(max_rv);
  // Compact: rewrite the log as a snapshot of the live objects.
  std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return common::fail("cannot write " + tmp);
    for (const auto& [storage, objects] : state) {
      for (const auto& [key, ent] : objects) {
        if (ent.text.empty()) continue;
        json e = {{"s", storage}, {"k", key}, {"rv", ent.rv}, {"o", json::parse(ent.text)}};
        out << e.dump() << '\n';
      }
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_, ec);
  if (ec) return common::fail("cannot replace " + path_ + ": " + ec.message());
  file_ = std::fopen(path_.c_str(), "a");
  if (!file_) return common::fail("cannot append to " + path_);
  std::FILE* f = file_;
  api.store().set_commit_hook([f](const std::string& storage, const std::string& key, const StoreEvent& ev) {
    json e = {{"s", storage}, {"k", key}, {"rv", ev.rv}};
    if (ev.type != EventType::kDeleted) e["o"] = json::parse(*ev.text);
    std::string line = e.dump();
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), f);
    std::fflush(f);
  });
  return restored;
}

}  // namespace kubex::sim
