// Which parts of a JSON document a reader needs. parse_json_fast (json_parse.h) builds only those parts and
// checks the rest as JSON without building it; project() cuts an already built value the same way. The
// admission webhook decodes a pod this way: its decision reads labels, annotations, owners and the
// containers' names, images, commands and resources, never volumes, env, probes or managedFields.
//
// A projection is one of:
//   whole            the value as it is (the default);
//   members {...}    for an object: only the listed members, each projected in turn; with keep_others,
//                    the unlisted members are kept whole instead of dropped;
//   elements(p)      for an array: every element projected by p.
// A members or elements projection of a value of another type keeps that value whole, so a reader that
// checks types sees what it would see in the whole document.
#pragma once

#include <initializer_list>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kubex::common {

class JsonProjection {
 public:
  enum class Kind { kWhole, kMembers, kElements };

  JsonProjection() = default;  // whole
  static JsonProjection members(std::initializer_list<std::pair<std::string, JsonProjection>> members,
                                bool keep_others = false);
  static JsonProjection elements(JsonProjection each);

  Kind kind() const { return kind_; }
  // kMembers: the projection of member `key`, or nullptr when it is dropped.
  const JsonProjection* member(std::string_view key) const;
  // kElements: the projection of every element.
  const JsonProjection& element() const { return *element_; }

 private:
  Kind kind_ = Kind::kWhole;
  bool keep_others_ = false;
  std::vector<std::pair<std::string, JsonProjection>> members_;
  std::shared_ptr<const JsonProjection> element_;
};

// `value` cut down to `projection`.
nlohmann::json project(const nlohmann::json& value, const JsonProjection& projection);

}  // namespace kubex::common
