#include "common/json_diff.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kubex::common {

namespace {

using nlohmann::json;

void append_escaped(std::string& path, const std::string& key) {  // RFC 6901: "~" -> "~0", "/" -> "~1"
  for (char c : key) {
    if (c == '~') {
      path += "~0";
    } else if (c == '/') {
      path += "~1";
    } else {
      path += c;
    }
  }
}

json op(const char* name, const std::string& path) {
  json o = json::object();
  o["op"] = name;
  o["path"] = path;
  return o;
}

json op(const char* name, const std::string& path, const json& value) {
  json o = op(name, path);
  o["value"] = value;
  return o;
}

void diff_into(const json& source, const json& target, std::string& path, json::array_t& out) {
  if (source.type() != target.type()) {
    if (!(source == target)) out.push_back(op("replace", path, target));  // 1 == 1.0: nothing, as in nlohmann
    return;
  }
  const std::size_t len = path.size();
  switch (source.type()) {
    case json::value_t::array: {
      const auto& s = source.get_ref<const json::array_t&>();
      const auto& t = target.get_ref<const json::array_t&>();
      const std::size_t common = std::min(s.size(), t.size());
      for (std::size_t i = 0; i < common; ++i) {
        path += '/';
        path += std::to_string(i);
        diff_into(s[i], t[i], path, out);
        path.resize(len);
      }
      for (std::size_t i = s.size(); i > common; --i) {  // removals from the end, so indices stay valid
        out.push_back(op("remove", path + "/" + std::to_string(i - 1)));
      }
      for (std::size_t i = common; i < t.size(); ++i) out.push_back(op("add", path + "/-", t[i]));
      return;
    }
    case json::value_t::object: {
      const auto& s = source.get_ref<const json::object_t&>();
      const auto& t = target.get_ref<const json::object_t&>();
      // Both maps are ordered by the same comparator: walk them side by side. Source keys first (changed or
      // removed), then the added ones, as nlohmann orders them.
      std::vector<const json::object_t::value_type*> added;
      auto ti = t.begin();
      for (const auto& entry : s) {
        while (ti != t.end() && t.key_comp()(ti->first, entry.first)) added.push_back(&*ti++);
        path += '/';
        append_escaped(path, entry.first);
        if (ti != t.end() && ti->first == entry.first) {
          diff_into(entry.second, ti->second, path, out);
          ++ti;
        } else {
          out.push_back(op("remove", path));
        }
        path.resize(len);
      }
      for (; ti != t.end(); ++ti) added.push_back(&*ti);
      for (const auto* entry : added) {
        path += '/';
        append_escaped(path, entry->first);
        out.push_back(op("add", path, entry->second));
        path.resize(len);
      }
      return;
    }
    default:
      if (!(source == target)) out.push_back(op("replace", path, target));  // not !=: NaN is neither
      return;
  }
}

}  // namespace

json json_diff(const json& source, const json& target) {
  json result = json::array();
  std::string path;
  path.reserve(128);
  diff_into(source, target, path, result.get_ref<json::array_t&>());
  return result;
}

}  // namespace kubex::common
