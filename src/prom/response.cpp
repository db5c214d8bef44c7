// parse_query_response and parse_range_response (VAL-8): the /api/v1/query and /api/v1/query_range response
// formats of Prometheus's HTTP API,
//   {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[<ts>,"<number>"]}]}}
//   {"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[<ts>,"<number>"],...]}]}}
//   {"status":"error","errorType":"bad_data","error":"..."}
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "prom/client.h"

namespace kubex::prom {

namespace {

using nlohmann::json;

constexpr std::size_t kBodySnippet = 200;   // of a non-Prometheus error body
constexpr std::size_t kErrorText = 1000;    // of Prometheus's own error text

// The start of `body` as one line: control characters become spaces, runs of spaces collapse, at most
// `limit` bytes (cut before a UTF-8 continuation byte), "..." when cut.
std::string one_line(std::string_view body, std::size_t limit) {
  std::string out;
  for (char ch : body) {
    unsigned char c = static_cast<unsigned char>(ch);
    bool space = c < 0x20 || c == 0x7f || c == ' ';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += ch;
    }
    if (out.size() > limit) break;
  }
  bool cut = out.size() > limit;
  if (cut) {
    out.resize(limit);
    // Drop a UTF-8 sequence that the cut left incomplete.
    std::size_t lead = out.size();
    while (lead > 0 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
    if (lead > 0) {
      unsigned char c = static_cast<unsigned char>(out[lead - 1]);
      std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      if (out.size() - (lead - 1) < need) out.resize(lead - 1);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (cut) out += "...";
  return out;
}

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// `status "error": <errorType>: <error>` from an error body, or "" when the body is not one.
std::string error_status(const json& j) {
  if (!j.is_object() || string_field(j, "status") != "error") return {};
  std::string type = string_field(j, "errorType"), error = string_field(j, "error");
  std::string out = "status \"error\"";
  if (!type.empty()) out += ": " + type;
  if (!error.empty()) out += ": " + one_line(error, kErrorText);
  return out;
}

// A sample value as Prometheus writes it: a decimal string, "NaN", "+Inf" or "-Inf". A JSON number is
// accepted too.
bool parse_value(const json& v, double& out) {
  if (v.is_number()) {
    out = v.get<double>();
    return true;
  }
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  std::string_view t = s;
  if (t == "NaN") {
    out = std::nan("");
    return true;
  }
  if (t == "+Inf" || t == "Inf") {
    out = HUGE_VAL;
    return true;
  }
  if (t == "-Inf") {
    out = -HUGE_VAL;
    return true;
  }
  if (t.starts_with('+')) {
    t.remove_prefix(1);
    if (t.starts_with('+') || t.starts_with('-')) return false;
  }
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && end == t.data() + t.size();
}

// The labels of a result element's "metric" into `out`: "" or what is wrong with them.
std::string parse_labels(const json& e, std::map<std::string, std::string>& out) {
  if (auto m = e.find("metric"); m != e.end() && !m->is_null()) {
    if (!m->is_object()) return "\"metric\" is not an object";
    for (const auto& [k, v] : m->items()) {
      if (!v.is_string()) return "label \"" + k + "\" is not a string";
      out.emplace(k, v.get<std::string>());
    }
  }
  return {};
}

// One element of a vector's data.result into `out`: "" or what is wrong with it.
std::string parse_sample(const json& e, Vector& out) {
  if (!e.is_object()) return "a result element is not an object";
  if (e.contains("histogram")) return "a native histogram sample, not a float";
  Sample sample;
  if (std::string bad = parse_labels(e, sample.labels); !bad.empty()) return bad;
  auto v = e.find("value");
  if (v == e.end() || !v->is_array() || v->size() != 2 || !(*v)[0].is_number()) {
    return "\"value\" is not a [<timestamp>, \"<number>\"] pair";
  }
  if (!parse_value((*v)[1], sample.value)) return "value " + (*v)[1].dump() + " is not a number";
  if (!std::isfinite(sample.value)) {
    ++out.non_finite;  // VAL-8: NaN and Inf count as missing
    return {};
  }
  out.samples.push_back(std::move(sample));
  return {};
}

// One element of a matrix's data.result into `out`: "" or what is wrong with it.
std::string parse_series(const json& e, Matrix& out) {
  if (!e.is_object()) return "a result element is not an object";
  if (e.contains("histograms")) return "native histogram samples, not floats";
  RangeSeries series;
  if (std::string bad = parse_labels(e, series.labels); !bad.empty()) return bad;
  auto values = e.find("values");
  if (values == e.end() || !values->is_array()) return "\"values\" is not a list of [<timestamp>, \"<number>\"] pairs";
  series.points.reserve(values->size());
  for (const auto& v : *values) {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number()) {
      return "\"values\" holds " + v.dump() + ", not a [<timestamp>, \"<number>\"] pair";
    }
    RangePoint p;
    if (!parse_value(v[1], p.value)) return "value " + v[1].dump() + " is not a number";
    if (!std::isfinite(p.value)) {
      ++out.non_finite;  // VAL-8: NaN and Inf count as missing
      continue;
    }
    const auto ms = std::llround(v[0].get<double>() * 1000.0);
    p.at = common::TimePoint(std::chrono::milliseconds(ms));
    series.points.push_back(p);
  }
  if (!series.points.empty()) out.series.push_back(std::move(series));
  return {};
}

// The envelope both responses share: data.result of a "success" response whose resultType is `type`, or the
// error.
common::Result<const json*> result_of(const json& j, int http_status, std::string_view body, const std::string& subject,
                                      const char* type_name) {
  bool ok_status = http_status >= 200 && http_status < 300;
  if (std::string e = error_status(j); !e.empty()) return common::fail(subject + " returned " + e);
  if (!ok_status) {
    std::string snippet = one_line(body, kBodySnippet);
    return common::fail(subject + " returned HTTP " + std::to_string(http_status) +
                        (snippet.empty() ? "" : ": " + snippet));
  }
  if (j.is_discarded()) return common::fail(subject + " returned a response that is not JSON");
  if (!j.is_object()) return common::fail(subject + " returned JSON that is not an object");
  auto status = j.find("status");
  if (status == j.end() || !status->is_string()) {
    return common::fail(subject + " returned a response without \"status\"");
  }
  if (*status != "success") {
    return common::fail(subject + " returned status " + status->dump() + ", not \"success\"");
  }
  auto data = j.find("data");
  if (data == j.end() || !data->is_object()) return common::fail(subject + " returned a response without \"data\"");
  auto type = data->find("resultType");
  if (type == data->end() || !type->is_string()) {
    return common::fail(subject + " returned a response without \"data.resultType\"");
  }
  if (*type != type_name) {
    const std::string article = std::string(type_name) == "matrix" ? "a matrix" : "a vector";
    return common::fail(subject + " returned a " + type->dump() + " result, not " + article);
  }
  auto result = data->find("result");
  if (result == data->end() || !result->is_array()) {
    return common::fail(subject + " returned a response without a \"data.result\" list");
  }
  return &*result;
}

common::Result<Vector> parse(int http_status, std::string_view body, const std::string& subject) {
  json j = json::parse(body, nullptr, false);
  auto result = result_of(j, http_status, body, subject, "vector");
  if (!result) return std::unexpected(result.error());
  Vector out;
  out.samples.reserve((*result)->size());
  for (const auto& e : **result) {
    if (std::string bad = parse_sample(e, out); !bad.empty()) {
      return common::fail(subject + " returned a malformed sample: " + bad);
    }
  }
  return out;
}

common::Result<Matrix> parse_matrix(int http_status, std::string_view body, const std::string& subject) {
  json j = json::parse(body, nullptr, false);
  auto result = result_of(j, http_status, body, subject, "matrix");
  if (!result) return std::unexpected(result.error());
  Matrix out;
  out.series.reserve((*result)->size());
  for (const auto& e : **result) {
    if (std::string bad = parse_series(e, out); !bad.empty()) {
      return common::fail(subject + " returned a malformed series: " + bad);
    }
  }
  return out;
}

}  // namespace

common::Result<Vector> parse_query_response(int http_status, std::string_view body) {
  return parse(http_status, body, "Prometheus query");
}

common::Result<Vector> parse_query_response(int http_status, std::string_view body, std::string_view query_url) {
  return parse(http_status, body, "Prometheus query to " + std::string(query_url));
}

common::Result<Matrix> parse_range_response(int http_status, std::string_view body) {
  return parse_matrix(http_status, body, "Prometheus range query");
}

common::Result<Matrix> parse_range_response(int http_status, std::string_view body, std::string_view query_url) {
  return parse_matrix(http_status, body, "Prometheus range query to " + std::string(query_url));
}

}  // namespace kubex::prom
