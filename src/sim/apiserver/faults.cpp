#include "sim/apiserver/faults.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "common/duration.h"
#include "common/file_io.h"
#include "common/log.h"
#include "common/yaml.h"

namespace kubex::sim {

using nlohmann::json;

namespace {

const std::set<std::string>& known_verbs() {
  static const std::set<std::string> v = {"get",    "list",   "watch",  "create",          "update",
                                          "patch",  "delete", "deletecollection", "*"};
  return v;
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) {
    if (x == "*") continue;
    if (!out.empty()) out += ", ";
    out += x;
  }
  return out;
}

std::string child(const std::string& parent, const std::string& key) { return common::join_path(parent, key); }

common::Result<void> only_keys(const json& obj, std::initializer_list<const char*> keys, const std::string& path) {
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (const char* key : keys) ok = ok || k == key;
    if (!ok) {
      std::string known;
      for (const char* key : keys) known += std::string(known.empty() ? "" : ", ") + key;
      return common::fail("unknown field (known fields: " + known + ")", child(path, k));
    }
  }
  return {};
}

common::Result<const json*> mapping_at(const json& obj, const char* key, const std::string& path) {
  if (!obj.contains(key)) return nullptr;
  if (!obj[key].is_object()) return common::fail("must be a mapping", child(path, key));
  return &obj[key];
}

common::Result<double> rate_at(const json& obj, const char* key, double def, const std::string& path) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  if (!v.is_number()) return common::fail("must be a number between 0 and 1", child(path, key));
  double d = v.get<double>();
  if (!(d >= 0 && d <= 1)) return common::fail("must be a number between 0 and 1", child(path, key));
  return d;
}

common::Result<std::int64_t> int_at(const json& obj, const char* key, std::int64_t def, std::int64_t lo,
                                    std::int64_t hi, const std::string& path) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  std::optional<std::int64_t> n;
  if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)) {
    n = v.get<std::int64_t>();
  }
  std::string range = "an integer between " + std::to_string(lo) + " and " + std::to_string(hi);
  if (!n || *n < lo || *n > hi) return common::fail("must be " + range, child(path, key));
  return *n;
}

common::Result<std::optional<std::chrono::milliseconds>> duration_at(const json& obj, const char* key,
                                                                     const std::string& path) {
  if (!obj.contains(key)) return std::optional<std::chrono::milliseconds>{};
  const json& v = obj[key];
  if (!v.is_string()) return common::fail("must be a duration such as \"100ms\", \"2s\" or \"1m\"", child(path, key));
  auto d = common::parse_go_duration(v.get<std::string>());
  if (!d) return common::fail(d.error().str(), child(path, key));
  if (d->count() < 0) return common::fail("must not be negative", child(path, key));
  if (*d > std::chrono::hours(24 * 365)) return common::fail("must be at most a year", child(path, key));
  return std::optional(std::chrono::ceil<std::chrono::milliseconds>(*d));
}

common::Result<std::vector<std::string>> strings_at(const json& obj, const char* key, const std::string& path) {
  std::vector<std::string> out;
  if (!obj.contains(key)) return out;
  const json& v = obj[key];
  if (!v.is_array()) return common::fail("must be a list of strings", child(path, key));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || v[i].get<std::string>().empty()) {
      return common::fail("must be a non-empty string", common::index_path(child(path, key), i));
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

bool name_chars(const std::string& s, bool dots) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.');
    if (!ok) return false;
  }
  return true;
}

// `resource[.group][/subresource]`, the way kubectl names resources (`deployments.apps`), or `*`.
common::Result<FaultResource> parse_resource(const std::string& text, const std::string& path) {
  FaultResource fr;
  std::string head = text;
  if (auto slash = text.find('/'); slash != std::string::npos) {
    head = text.substr(0, slash);
    fr.subresource = text.substr(slash + 1);
    if (fr.subresource != "*" && !name_chars(fr.subresource, false)) {
      return common::fail("invalid subresource in \"" + text +
                              "\": write resource[.group][/subresource], e.g. pods, pods/eviction, deployments.apps",
                          path);
    }
  }
  if (head == "*") {
    fr.resource = "*";
    if (text == "*") fr.subresource = "*";  // the bare "*" is every resource and subresource
    return fr;
  }
  auto dot = head.find('.');
  fr.resource = head.substr(0, dot);
  if (dot != std::string::npos) fr.group = head.substr(dot + 1);
  if (!name_chars(fr.resource, false) || (fr.group && !name_chars(*fr.group, true))) {
    return common::fail("invalid resource \"" + text +
                            "\": write resource[.group][/subresource], e.g. pods, pods/eviction, deployments.apps",
                        path);
  }
  return fr;
}

// --- deterministic draws ---

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void fnv(std::uint64_t& h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  h ^= 0xFF;  // field separator
  h *= 0x100000001B3ull;
}

// A uniform number in [0, 1) from the `j`-th draw of one request.
double unit(std::uint64_t base, std::uint64_t j) {
  return static_cast<double>(splitmix64(base ^ (j * 0xD1B54A32D192ED03ull)) >> 11) * 0x1.0p-53;
}

bool prefix_of_any(const std::vector<std::string>& prefixes, const std::string& s) {
  for (const auto& p : prefixes) {
    if (s.compare(0, p.size(), p) == 0) return true;
  }
  return false;
}

bool matches(const FaultRule& r, const FaultRequest& q, std::chrono::milliseconds since_start) {
  if (since_start < r.after) return false;
  if (r.until && since_start >= *r.until) return false;
  if (r.watch_only && q.verb != "watch") return false;
  if (!r.verbs.empty() && std::find(r.verbs.begin(), r.verbs.end(), "*") == r.verbs.end() &&
      std::find(r.verbs.begin(), r.verbs.end(), q.verb) == r.verbs.end()) {
    return false;
  }
  if (!r.resources.empty()) {
    bool any = false;
    for (const auto& fr : r.resources) {
      if (fr.resource != "*" && fr.resource != q.resource) continue;
      if (fr.group && *fr.group != q.group) continue;
      if (fr.subresource != "*" && fr.subresource != q.subresource) continue;
      any = true;
      break;
    }
    if (!any) return false;
  }
  if (!r.namespaces.empty() && std::find(r.namespaces.begin(), r.namespaces.end(), q.ns) == r.namespaces.end()) {
    return false;
  }
  if (!r.user_agents.empty() && !prefix_of_any(r.user_agents, q.user_agent)) return false;
  if (prefix_of_any(r.except_user_agents, q.user_agent)) return false;
  return true;
}

common::Result<FaultRule> parse_rule(const json& j, const std::string& path) {
  if (!j.is_object()) return common::fail("must be a mapping", path);
  if (auto k = only_keys(j, {"name", "verbs", "resources", "namespaces", "userAgents", "exceptUserAgents", "after",
                             "until", "maxFaults", "tooManyRequests", "serverError", "latency", "watchCut",
                             "watchGone"},
                         path);
      !k) {
    return std::unexpected(k.error());
  }
  FaultRule r;
  if (j.contains("name")) {
    if (!j["name"].is_string()) return common::fail("must be a string", child(path, "name"));
    r.name = j["name"].get<std::string>();
  }
  auto verbs = strings_at(j, "verbs", path);
  if (!verbs) return std::unexpected(verbs.error());
  for (std::size_t i = 0; i < verbs->size(); ++i) {
    if (!known_verbs().contains((*verbs)[i])) {
      return common::fail("unsupported verb \"" + (*verbs)[i] + "\": supported verbs: " + join(known_verbs()) +
                              ", or \"*\"",
                          common::index_path(child(path, "verbs"), i));
    }
  }
  r.verbs = *verbs;
  auto resources = strings_at(j, "resources", path);
  if (!resources) return std::unexpected(resources.error());
  for (std::size_t i = 0; i < resources->size(); ++i) {
    auto fr = parse_resource((*resources)[i], common::index_path(child(path, "resources"), i));
    if (!fr) return std::unexpected(fr.error());
    r.resources.push_back(*fr);
  }
  for (auto [key, out] : {std::pair{"namespaces", &r.namespaces}, std::pair{"userAgents", &r.user_agents},
                          std::pair{"exceptUserAgents", &r.except_user_agents}}) {
    auto v = strings_at(j, key, path);
    if (!v) return std::unexpected(v.error());
    *out = *v;
  }
  auto after = duration_at(j, "after", path);
  if (!after) return std::unexpected(after.error());
  r.after = after->value_or(std::chrono::milliseconds(0));
  auto until = duration_at(j, "until", path);
  if (!until) return std::unexpected(until.error());
  r.until = *until;
  if (r.until && *r.until <= r.after) return common::fail("must be later than after", child(path, "until"));
  if (j.contains("maxFaults")) {
    auto m = int_at(j, "maxFaults", 0, 1, INT64_MAX, path);
    if (!m) return std::unexpected(m.error());
    r.max_faults = static_cast<std::uint64_t>(*m);
  }

  if (auto m = mapping_at(j, "tooManyRequests", path); !m) {
    return std::unexpected(m.error());
  } else if (*m) {
    std::string p = child(path, "tooManyRequests");
    if (auto k = only_keys(**m, {"rate", "retryAfterSeconds"}, p); !k) return std::unexpected(k.error());
    auto rate = rate_at(**m, "rate", 1.0, p);
    if (!rate) return std::unexpected(rate.error());
    auto ra = int_at(**m, "retryAfterSeconds", 1, 0, 3600, p);
    if (!ra) return std::unexpected(ra.error());
    r.too_many_rate = *rate;
    r.retry_after_seconds = static_cast<int>(*ra);
  }
  if (auto m = mapping_at(j, "serverError", path); !m) {
    return std::unexpected(m.error());
  } else if (*m) {
    std::string p = child(path, "serverError");
    if (auto k = only_keys(**m, {"rate", "codes", "retryAfterSeconds"}, p); !k) return std::unexpected(k.error());
    auto rate = rate_at(**m, "rate", 1.0, p);
    if (!rate) return std::unexpected(rate.error());
    auto ra = int_at(**m, "retryAfterSeconds", 0, 0, 3600, p);
    if (!ra) return std::unexpected(ra.error());
    r.server_error_rate = *rate;
    r.server_error_retry_after_seconds = static_cast<int>(*ra);
    r.server_error_codes = {500};
    if ((*m)->contains("codes")) {
      const json& codes = (**m)["codes"];
      if (!codes.is_array() || codes.empty()) return common::fail("must be a non-empty list", child(p, "codes"));
      r.server_error_codes.clear();
      for (std::size_t i = 0; i < codes.size(); ++i) {
        bool ok = codes[i].is_number_integer() &&
                  (codes[i].get<std::int64_t>() == 500 || codes[i].get<std::int64_t>() == 503 ||
                   codes[i].get<std::int64_t>() == 504);
        if (!ok) return common::fail("must be 500, 503 or 504", common::index_path(child(p, "codes"), i));
        r.server_error_codes.push_back(static_cast<int>(codes[i].get<std::int64_t>()));
      }
    }
  }
  if (auto m = mapping_at(j, "latency", path); !m) {
    return std::unexpected(m.error());
  } else if (*m) {
    std::string p = child(path, "latency");
    if (auto k = only_keys(**m, {"rate", "min", "max"}, p); !k) return std::unexpected(k.error());
    auto rate = rate_at(**m, "rate", 1.0, p);
    if (!rate) return std::unexpected(rate.error());
    auto lo = duration_at(**m, "min", p);
    if (!lo) return std::unexpected(lo.error());
    auto hi = duration_at(**m, "max", p);
    if (!hi) return std::unexpected(hi.error());
    if (!*lo) return common::fail("required", child(p, "min"));
    r.latency_rate = *rate;
    r.latency_min = **lo;
    r.latency_max = hi->value_or(**lo);
    if (r.latency_max < r.latency_min) return common::fail("must not be less than min", child(p, "max"));
    if (r.latency_max > std::chrono::minutes(10)) return common::fail("must be at most 10m", child(p, "max"));
  }
  if (auto m = mapping_at(j, "watchGone", path); !m) {
    return std::unexpected(m.error());
  } else if (*m) {
    std::string p = child(path, "watchGone");
    if (auto k = only_keys(**m, {"rate"}, p); !k) return std::unexpected(k.error());
    auto rate = rate_at(**m, "rate", 1.0, p);
    if (!rate) return std::unexpected(rate.error());
    r.watch_gone_rate = *rate;
  }
  if (auto m = mapping_at(j, "watchCut", path); !m) {
    return std::unexpected(m.error());
  } else if (*m) {
    std::string p = child(path, "watchCut");
    if (auto k = only_keys(**m, {"rate", "afterEventsMin", "afterEventsMax", "afterTimeMin", "afterTimeMax",
                                 "abruptRate"},
                           p);
        !k) {
      return std::unexpected(k.error());
    }
    auto rate = rate_at(**m, "rate", 1.0, p);
    if (!rate) return std::unexpected(rate.error());
    auto abrupt = rate_at(**m, "abruptRate", 0.0, p);
    if (!abrupt) return std::unexpected(abrupt.error());
    auto emin = int_at(**m, "afterEventsMin", 0, 1, 1'000'000'000, p);
    if (!emin) return std::unexpected(emin.error());
    auto emax = int_at(**m, "afterEventsMax", *emin, 1, 1'000'000'000, p);
    if (!emax) return std::unexpected(emax.error());
    if ((*m)->contains("afterEventsMax") && !(*m)->contains("afterEventsMin")) {
      return common::fail("required with afterEventsMax", child(p, "afterEventsMin"));
    }
    if (*emax < *emin) return common::fail("must not be less than afterEventsMin", child(p, "afterEventsMax"));
    auto tmin = duration_at(**m, "afterTimeMin", p);
    if (!tmin) return std::unexpected(tmin.error());
    auto tmax = duration_at(**m, "afterTimeMax", p);
    if (!tmax) return std::unexpected(tmax.error());
    if (*tmax && !*tmin) return common::fail("required with afterTimeMax", child(p, "afterTimeMin"));
    if (*tmin && **tmin < std::chrono::seconds(1)) return common::fail("must be at least 1s", child(p, "afterTimeMin"));
    if (*tmin && *tmax && **tmax < **tmin) {
      return common::fail("must not be less than afterTimeMin", child(p, "afterTimeMax"));
    }
    if (*emin == 0 && !*tmin) return common::fail("needs afterEventsMin or afterTimeMin (or both)", p);
    r.cut_rate = *rate;
    r.cut_abrupt_rate = *abrupt;
    r.cut_events_min = static_cast<std::uint64_t>(*emin);
    r.cut_events_max = static_cast<std::uint64_t>(*emax);
    if (*tmin) {
      r.cut_time_min = **tmin;
      r.cut_time_max = tmax->value_or(**tmin);
    }
  }
  if (r.too_many_rate + r.server_error_rate + r.watch_gone_rate > 1.0 + 1e-9) {
    return common::fail("the rates of tooManyRequests, serverError and watchGone add up to more than 1 (one "
                        "request gets at most one error answer)",
                        path);
  }
  bool any = j.contains("tooManyRequests") || j.contains("serverError") || j.contains("latency") ||
             j.contains("watchCut") || j.contains("watchGone");
  r.watch_only = !j.contains("tooManyRequests") && !j.contains("serverError") && !j.contains("latency");
  if (!any) {
    return common::fail("has no fault: give tooManyRequests, serverError, latency, watchCut or watchGone", path);
  }
  if ((j.contains("watchCut") || j.contains("watchGone")) && !r.verbs.empty() &&
      std::find(r.verbs.begin(), r.verbs.end(), "watch") == r.verbs.end() &&
      std::find(r.verbs.begin(), r.verbs.end(), "*") == r.verbs.end()) {
    return common::fail("watchCut and watchGone apply to WATCH requests, but verbs has no watch", child(path, "verbs"));
  }
  return r;
}

json counters_json(std::uint64_t matched, std::uint64_t faults, std::uint64_t too_many,
                   const std::map<int, std::uint64_t>& server, std::uint64_t gone, std::uint64_t lat,
                   std::uint64_t lat_ms, std::uint64_t clean, std::uint64_t abrupt) {
  json se = json::object();
  std::uint64_t se_total = 0;
  for (const auto& [code, n] : server) {
    se[std::to_string(code)] = n;
    se_total += n;
  }
  return {{"matched", matched},
          {"faults", faults},
          {"tooManyRequests", too_many},
          {"serverError", se},
          {"serverErrors", se_total},
          {"watchGone", gone},
          {"latency", {{"count", lat}, {"totalMs", lat_ms}}},
          {"watchCut", {{"clean", clean}, {"abrupt", abrupt}}}};
}

const common::Logger& fault_log() {
  static const common::Logger log("kubex-sim.faults");
  return log;
}

}  // namespace

common::Result<FaultConfig> FaultConfig::parse(const json& doc, const std::string& path) {
  if (!doc.is_object()) {
    return common::fail("the faults file must be a YAML mapping with seed and rules", path);
  }
  if (auto k = only_keys(doc, {"seed", "rules"}, path); !k) return std::unexpected(k.error());
  FaultConfig c;
  if (doc.contains("seed")) {
    const json& s = doc["seed"];
    if (s.is_number_unsigned()) {
      c.seed = s.get<std::uint64_t>();
    } else if (s.is_number_integer() && s.get<std::int64_t>() >= 0) {
      c.seed = static_cast<std::uint64_t>(s.get<std::int64_t>());
    } else {
      return common::fail("must be a non-negative integer", child(path, "seed"));
    }
  }
  if (!doc.contains("rules")) return common::fail("required (a list of rules)", child(path, "rules"));
  const json& rules = doc["rules"];
  if (!rules.is_array()) return common::fail("must be a list of rules", child(path, "rules"));
  for (std::size_t i = 0; i < rules.size(); ++i) {
    auto r = parse_rule(rules[i], common::index_path(child(path, "rules"), i));
    if (!r) return std::unexpected(r.error());
    c.rules.push_back(std::move(*r));
  }
  return c;
}

common::Result<FaultConfig> FaultConfig::load(const std::string& file) {
  auto text = common::read_file(file);
  if (!text) return std::unexpected(text.error());
  auto doc = common::yaml_to_json(*text);
  if (!doc) return common::fail(file + ": " + doc.error().str());
  auto c = parse(*doc);
  if (!c) return common::fail(file + ": " + c.error().str());
  return c;
}

FaultInjector::FaultInjector(FaultConfig config) : config_(std::move(config)) {
  if (config_.seed) {
    seed_ = *config_.seed;
  } else {
    std::random_device rd;
    seed_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  counters_.resize(config_.rules.size());
}

FaultDecision FaultInjector::decide(const FaultRequest& q, std::chrono::milliseconds since_start) {
  FaultDecision d;
  std::uint64_t kind = 0xCBF29CE484222325ull;
  for (std::string_view s : {std::string_view(q.verb), std::string_view(q.group), std::string_view(q.resource),
                             std::string_view(q.subresource), std::string_view(q.ns), std::string_view(q.name),
                             std::string_view(q.user_agent)}) {
    fnv(kind, s);
  }
  std::vector<std::pair<int, std::string>> injected;  // rule, what (for the debug log)
  std::lock_guard lk(mu_);
  for (std::size_t i = 0; i < config_.rules.size(); ++i) {
    const FaultRule& r = config_.rules[i];
    if (!matches(r, q, since_start)) continue;
    Counters& c = counters_[i];
    ++c.matched;
    std::uint64_t key = splitmix64(kind ^ splitmix64(i + 1));
    std::uint64_t n = sequence_[key]++;
    std::uint64_t base = splitmix64(seed_ ^ splitmix64(key + n));
    if (r.max_faults && c.faults >= *r.max_faults) continue;
    bool contributed = false;
    if (r.latency_rate > 0 && unit(base, 1) < r.latency_rate) {
      auto span = (r.latency_max - r.latency_min).count();
      auto extra = static_cast<std::int64_t>(std::floor(unit(base, 2) * static_cast<double>(span + 1)));
      auto lat = r.latency_min + std::chrono::milliseconds(std::min<std::int64_t>(extra, span));
      d.latency += lat;
      ++c.latency;
      c.latency_ms += static_cast<std::uint64_t>(lat.count());
      contributed = true;
      injected.emplace_back(static_cast<int>(i), "latency");
    }
    if (d.status == 0) {
      double u = unit(base, 3);
      if (u < r.too_many_rate) {
        d.status = 429;
        d.retry_after_seconds = r.retry_after_seconds;
        ++c.too_many;
      } else if (u < r.too_many_rate + r.server_error_rate) {
        auto idx = static_cast<std::size_t>(unit(base, 4) * static_cast<double>(r.server_error_codes.size()));
        d.status = r.server_error_codes[std::min(idx, r.server_error_codes.size() - 1)];
        d.retry_after_seconds = r.server_error_retry_after_seconds;
        ++c.server_errors[d.status];
      } else if (q.verb == "watch" && q.has_resource_version &&
                 u < r.too_many_rate + r.server_error_rate + r.watch_gone_rate) {
        d.status = 410;
        ++c.gone;
      }
      if (d.status != 0) {
        d.rule = static_cast<int>(i);
        contributed = true;
        injected.emplace_back(static_cast<int>(i), "status " + std::to_string(d.status));
      }
    }
    if (q.verb == "watch" && !d.cut && d.status == 0 && r.cut_rate > 0 && unit(base, 5) < r.cut_rate) {
      d.cut = true;
      d.cut_rule = static_cast<int>(i);
      if (r.cut_events_min > 0) {
        auto span = r.cut_events_max - r.cut_events_min;
        auto extra = static_cast<std::uint64_t>(std::floor(unit(base, 6) * static_cast<double>(span + 1)));
        d.cut_after_events = r.cut_events_min + std::min(extra, span);
      }
      if (r.cut_time_min.count() > 0) {
        auto span = (r.cut_time_max - r.cut_time_min).count();
        auto extra = static_cast<std::int64_t>(std::floor(unit(base, 7) * static_cast<double>(span + 1)));
        d.cut_after = r.cut_time_min + std::chrono::milliseconds(std::min<std::int64_t>(extra, span));
      }
      d.cut_abrupt = unit(base, 8) < r.cut_abrupt_rate;
      contributed = true;
      injected.emplace_back(static_cast<int>(i), "watchCut");
    }
    if (contributed) ++c.faults;
  }
  if (d.status != 0 && d.cut) {
    // An error answer from a later rule wins over an earlier rule's cut: that rule injected nothing.
    bool cut_only = true;
    for (const auto& [rule, what] : injected) cut_only = cut_only && (rule != d.cut_rule || what == "watchCut");
    if (cut_only && counters_[d.cut_rule].faults > 0) --counters_[d.cut_rule].faults;
    d.cut = false;
    d.cut_rule = -1;
  }
  if (!injected.empty() && fault_log().enabled(common::LogLevel::kDebug)) {
    json faults = json::array();
    for (const auto& [rule, what] : injected) {
      if (what == "watchCut" && !d.cut) continue;
      faults.push_back({{"rule", rule}, {"name", config_.rules[static_cast<std::size_t>(rule)].name}, {"fault", what}});
    }
    json fields = {{"verb", q.verb},  {"group", q.group}, {"resource", q.resource}, {"subresource", q.subresource},
                   {"namespace", q.ns}, {"name", q.name},  {"userAgent", q.user_agent}, {"faults", faults}};
    if (d.latency.count() > 0) fields["latencyMs"] = d.latency.count();
    if (d.status) fields["status"] = d.status;
    if (d.cut) {
      fields["cutAfterEvents"] = d.cut_after_events;
      fields["cutAfterMs"] = d.cut_after.count();
      fields["cutAbrupt"] = d.cut_abrupt;
    }
    fault_log().debug("fault injected", fields);
  }
  return d;
}

void FaultInjector::cut_done(int rule, bool abrupt) {
  if (rule < 0 || static_cast<std::size_t>(rule) >= counters_.size()) return;
  std::lock_guard lk(mu_);
  if (abrupt) {
    ++counters_[static_cast<std::size_t>(rule)].cut_abrupt;
  } else {
    ++counters_[static_cast<std::size_t>(rule)].cut_clean;
  }
  fault_log().debug("watch cut", {{"rule", rule}, {"abrupt", abrupt}});
}

json FaultInjector::status_body(int status, int retry_after_seconds, const std::string& detail) {
  json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"}};
  json details = json::object();
  switch (status) {
    case 429:
      // k8s.io/apiserver's max-in-flight and APF filters: errors.NewTooManyRequests(msg, retryAfter).
      s["message"] = "Too many requests, please try again later.";
      s["reason"] = "TooManyRequests";
      break;
    case 503:
      s["message"] = "the server is currently unable to handle the request: " + detail;
      s["reason"] = "ServiceUnavailable";
      break;
    case 504:
      // The timeout filter: errors.NewTimeoutError(..., 0) carries an empty details object.
      s["message"] = "request did not complete within requested timeout - context deadline exceeded (" + detail + ")";
      s["reason"] = "Timeout";
      s["details"] = json::object();
      break;
    case 410:
      s["message"] = detail;
      s["reason"] = "Expired";
      break;
    default:
      // errors.NewInternalError(err): the error text as the message and as the one cause.
      status = 500;
      s["message"] = "Internal error occurred: " + detail;
      s["reason"] = "InternalError";
      details["causes"] = json::array({{{"message", detail}}});
      break;
  }
  if (retry_after_seconds > 0 && status != 410) details["retryAfterSeconds"] = retry_after_seconds;
  if (!details.empty()) s["details"] = details;
  s["code"] = status;
  return s;
}

json FaultInjector::counts() const {
  std::lock_guard lk(mu_);
  json rules = json::array();
  Counters t;
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    const Counters& c = counters_[i];
    json j = counters_json(c.matched, c.faults, c.too_many, c.server_errors, c.gone, c.latency, c.latency_ms,
                           c.cut_clean, c.cut_abrupt);
    j["index"] = i;
    j["name"] = config_.rules[i].name;
    rules.push_back(std::move(j));
    t.matched += c.matched;
    t.faults += c.faults;
    t.too_many += c.too_many;
    t.gone += c.gone;
    t.latency += c.latency;
    t.latency_ms += c.latency_ms;
    t.cut_clean += c.cut_clean;
    t.cut_abrupt += c.cut_abrupt;
    for (const auto& [code, n] : c.server_errors) t.server_errors[code] += n;
  }
  return {{"enabled", true},
          {"seed", seed_},
          {"rules", rules},
          {"total", counters_json(t.matched, t.faults, t.too_many, t.server_errors, t.gone, t.latency, t.latency_ms,
                                  t.cut_clean, t.cut_abrupt)}};
}

json FaultInjector::disabled_counts() { return {{"enabled", false}}; }

}  // namespace kubex::sim
