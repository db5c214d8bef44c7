#include "sim/cluster/trace_csv.h"

#include <charconv>
#include <map>
#include <set>
#include <string_view>

namespace kubex::sim::cluster {

namespace {

constexpr std::int64_t kMaxQuantity = 1'000'000'000'000;  // far above any node's millicores or MiB

struct Row {
  int line = 0;
  std::vector<std::string> fields;
};

// A CSV table: the header's column positions and the data rows (blank lines skipped). Fields may be quoted
// ("a,b", "" for a quote) within one line.
struct Table {
  std::string file;
  std::map<std::string, std::size_t> columns;
  std::vector<Row> rows;

  std::unexpected<common::Error> error(int line, std::size_t column, const std::string& message) const {
    return common::fail(message, file + ":" + std::to_string(line) + ":" + std::to_string(column + 1));
  }
};

common::Result<std::vector<std::string>> split_fields(const std::string& file, int line,
                                                      std::string_view text) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c != '"') {
        out.back() += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == ',') {
      out.emplace_back();
    } else if (c == '"' && out.back().empty()) {
      quoted = true;
    } else {
      out.back() += c;
    }
  }
  if (quoted) {
    return common::fail("a quoted field is not closed on its line",
                        file + ":" + std::to_string(line) + ":" + std::to_string(out.size()));
  }
  return out;
}

common::Result<Table> read_table(const std::string& file, const std::string& text,
                                 const std::vector<std::string>& required) {
  Table t;
  t.file = file;
  bool header = false;
  int line = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view raw(text.data() + pos, end - pos);
    pos = end + 1;
    ++line;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (line == 1 && raw.starts_with("\xEF\xBB\xBF")) raw.remove_prefix(3);  // a UTF-8 byte order mark
    if (raw.find_first_not_of(" \t") == std::string_view::npos) continue;
    auto fields = split_fields(file, line, raw);
    if (!fields) return std::unexpected(fields.error());
    if (!header) {
      header = true;
      for (std::size_t i = 0; i < fields->size(); ++i) {
        if (!t.columns.emplace((*fields)[i], i).second) {
          return t.error(line, i, "column \"" + (*fields)[i] + "\" appears twice in the header");
        }
      }
      for (const auto& name : required) {
        if (!t.columns.count(name)) {
          std::string all;
          for (const auto& r : required) all += (all.empty() ? "" : ",") + r;
          return t.error(line, 0, "the header has no column \"" + name + "\" (needs " + all + ")");
        }
      }
      continue;
    }
    if (fields->size() != t.columns.size()) {
      return t.error(
          line, std::min(fields->size(), t.columns.size()),
          std::to_string(fields->size()) + " fields, but the header has " + std::to_string(t.columns.size()));
    }
    t.rows.push_back({line, std::move(*fields)});
  }
  if (!header) return common::fail("the file is empty (it needs a header line)", file + ":1:1");
  return t;
}

// One row's typed fields, each error naming the row's line and the field's column.
class Fields {
 public:
  Fields(const Table& t, const Row& r) : t_(t), r_(r) {}

  std::size_t column(const std::string& name) const { return t_.columns.at(name); }
  const std::string& text(const std::string& name) const { return r_.fields[column(name)]; }
  bool has(const std::string& name) const { return t_.columns.count(name) > 0; }

  common::Result<std::int64_t> whole(const std::string& name, std::int64_t max) const {
    const std::string& s = text(name);
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) {
      return fail(name, "\"" + s + "\" is not a whole number >= 0");
    }
    if (v > max) return fail(name, s + " is more than " + std::to_string(max));
    return v;
  }

  std::unexpected<common::Error> fail(const std::string& name, const std::string& message) const {
    return t_.error(r_.line, column(name), name + ": " + message);
  }

 private:
  const Table& t_;
  const Row& r_;
};

bool alnum_lower(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool alnum(char c) {
  return alnum_lower(c) || (c >= 'A' && c <= 'Z');
}

// A DNS-1123 label (`dots` false) or subdomain (`dots` true): Kubernetes' rule for the object's name.
bool dns_name(std::string_view s, bool dots) {
  if (s.empty() || s.size() > (dots ? 253u : 63u)) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t dot = dots ? s.find('.', start) : std::string_view::npos;
    std::string_view part =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 63 || !alnum_lower(part.front()) || !alnum_lower(part.back()))
      return false;
    for (char c : part) {
      if (!alnum_lower(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

// A label value: what a model, a gpu_spec entry and a qos become.
bool label_value(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace

common::Result<std::vector<TraceNode>> parse_trace_nodes(const std::string& file, const std::string& text) {
  auto table = read_table(file, text, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!table) return std::unexpected(table.error());
  std::vector<TraceNode> out;
  std::set<std::string> seen;
  for (const Row& row : table->rows) {
    Fields f(*table, row);
    TraceNode n;
    n.name = f.text("sn");
    if (!dns_name(n.name, true)) {
      return f.fail("sn",
                    "\"" + n.name + "\" is not a valid node name (lower-case letters, digits, '-' and '.')");
    }
    if (!seen.insert(n.name).second) return f.fail("sn", "node \"" + n.name + "\" is listed twice");
    auto cpu = f.whole("cpu_milli", kMaxQuantity);
    if (!cpu) return std::unexpected(cpu.error());
    auto memory = f.whole("memory_mib", kMaxQuantity);
    if (!memory) return std::unexpected(memory.error());
    auto gpus = f.whole("gpu", 1024);
    if (!gpus) return std::unexpected(gpus.error());
    n.cpu_milli = *cpu;
    n.memory_mib = *memory;
    n.gpus = static_cast<int>(*gpus);
    n.model = f.text("model");
    if (!label_value(n.model)) {
      return f.fail("model",
                    "\"" + n.model + "\" is not a valid label value (it becomes nvidia.com/gpu.product)");
    }
    if (n.gpus > 0 && n.model.empty()) return f.fail("model", "required for a node with GPUs");
    out.push_back(std::move(n));
  }
  return out;
}

common::Result<std::vector<TracePod>> parse_trace_pods(const std::string& file, const std::string& text) {
  auto table = read_table(
      file, text,
      {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "pod_phase", "creation_time"});
  if (!table) return std::unexpected(table.error());
  std::vector<TracePod> out;
  std::set<std::string> seen;
  for (const Row& row : table->rows) {
    Fields f(*table, row);
    TracePod p;
    p.line = row.line;
    p.name = f.text("name");
    if (!dns_name(p.name, false)) {
      return f.fail(
          "name",
          "\"" + p.name + "\" is not a valid workload name (up to 63 lower-case letters, digits and '-')");
    }
    if (!seen.insert(p.name).second) return f.fail("name", "pod \"" + p.name + "\" is listed twice");
    auto cpu = f.whole("cpu_milli", kMaxQuantity);
    if (!cpu) return std::unexpected(cpu.error());
    auto memory = f.whole("memory_mib", kMaxQuantity);
    if (!memory) return std::unexpected(memory.error());
    auto num_gpu = f.whole("num_gpu", 1024);
    if (!num_gpu) return std::unexpected(num_gpu.error());
    auto gpu_milli = f.whole("gpu_milli", 1000);
    if (!gpu_milli) return std::unexpected(gpu_milli.error());
    auto created = f.whole("creation_time", kMaxQuantity);
    if (!created) return std::unexpected(created.error());
    p.cpu_milli = *cpu;
    p.memory_mib = *memory;
    p.num_gpu = static_cast<int>(*num_gpu);
    p.gpu_milli = static_cast<int>(*gpu_milli);
    p.creation_time = *created;
    const std::string& spec = f.text("gpu_spec");
    for (std::size_t start = 0; start <= spec.size();) {
      std::size_t bar = spec.find('|', start);
      if (bar == std::string::npos) bar = spec.size();
      std::string model = spec.substr(start, bar - start);
      if (!label_value(model)) {
        return f.fail("gpu_spec",
                      "\"" + model + "\" is not a valid GPU model name (models are separated by '|')");
      }
      if (!model.empty()) p.gpu_spec.push_back(std::move(model));
      start = bar + 1;
    }
    p.phase = f.text("pod_phase");
    if (f.has("qos")) {
      p.qos = f.text("qos");
      if (!label_value(p.qos)) return f.fail("qos", "\"" + p.qos + "\" is not a valid label value");
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kubex::sim::cluster
