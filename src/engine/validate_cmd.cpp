#include "engine/validate_cmd.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/kinds.h"
#include "api/unknown_fields.h"
#include "api/validate.h"
#include "common/file_io.h"
#include "common/yaml.h"
#include "engine/embedded_crds.h"

namespace kubex::engine {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kExitValid = 0;
constexpr int kExitInvalid = 1;
constexpr int kExitUsage = 2;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string string_field(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string meta_field(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find("metadata");
  return it != obj.end() ? string_field(*it, key) : "";
}

// The openAPIV3Schema of `kind` at `version` ("v1alpha1") in the compiled-in CRDs (VAL-5); the first version
// when `version` is not one of them; null when no CRD has that kind.
const json* crd_schema(const std::string& kind, const std::string& version) {
  static const std::map<std::string, json> crds = [] {
    std::map<std::string, json> by_kind;
    for (const auto& f : crds::embedded_files()) {
      auto docs = common::yaml_to_json_documents(f.content);
      if (!docs) continue;
      for (auto& d : *docs) {
        const json& names = d.value("spec", json::object()).value("names", json::object());
        if (names.is_object() && names.contains("kind")) by_kind[names.value("kind", "")] = std::move(d);
      }
    }
    return by_kind;
  }();
  auto it = crds.find(kind);
  if (it == crds.end()) return nullptr;
  const json& spec = it->second["spec"];
  if (!spec.contains("versions") || !spec["versions"].is_array()) return nullptr;
  const json* chosen = nullptr;
  for (const auto& v : spec["versions"]) {
    const json* s = v.contains("schema") ? &v["schema"] : nullptr;
    if (s == nullptr || !s->contains("openAPIV3Schema")) continue;
    if (chosen == nullptr || v.value("name", "") == version) chosen = &(*s)["openAPIV3Schema"];
    if (v.value("name", "") == version) break;
  }
  return chosen;
}

// One input file: a display name and its text.
struct Input {
  std::string name, text;
};

class Run {
 public:
  Run(const ValidateOptions& o, std::ostream& out, std::ostream& err) : opts_(o), out_(out), err_(err) {
    report_ = {{"valid", true},
               {"documents", json::array()},
               {"skipped", json::array()},
               {"problems", json::array()}};
  }

  bool json_output() const { return opts_.output == "json"; }

  // `named`: the message already names the file (read errors do), so the line is not prefixed with it.
  void problem(const std::string& file, const std::string& message, int code, bool named = false) {
    exit_ = std::max(exit_, code);
    if (code == kExitInvalid) report_["valid"] = false;
    report_["problems"].push_back({{"file", file}, {"message", message}});
    if (!json_output()) err_ << (named ? "" : file + ": ") << message << "\n";
  }

  // FILE, DIR or "-" -> inputs, in order.
  void collect(const std::string& arg, std::istream& in, std::vector<Input>& inputs) {
    if (arg == "-") {
      if (stdin_read_) {
        problem("<stdin>", "standard input given more than once", kExitUsage);
        return;
      }
      stdin_read_ = true;
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (in.bad()) {
        problem("<stdin>", "cannot read standard input", kExitUsage);
        return;
      }
      inputs.push_back({"<stdin>", std::move(text)});
      return;
    }
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> files;
      fs::directory_iterator it(arg, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        const fs::path& p = it->path();
        const std::string ext = p.extension().string();
        std::error_code fec;
        if ((ext == ".yaml" || ext == ".yml" || ext == ".json") && fs::is_regular_file(p, fec)) {
          files.push_back(p.string());
        }
      }
      if (ec) {
        problem(arg, "cannot list directory: " + ec.message(), kExitUsage);
        return;
      }
      if (files.empty()) {
        problem(arg, "no .yaml, .yml or .json file in this directory", kExitInvalid);
        return;
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) read(f, inputs);
      return;
    }
    read(arg, inputs);
  }

  void read(const std::string& path, std::vector<Input>& inputs) {
    auto text = common::read_file(path);
    if (!text) {
      problem(path, text.error().str(), kExitUsage, /*named=*/true);
      return;
    }
    inputs.push_back({path, std::move(*text)});
  }

  void check_input(const Input& input) {
    std::vector<common::DocumentLines> lines;
    auto docs = common::yaml_to_json_documents(input.text, &lines);
    if (!docs) {
      problem(input.name, docs.error().str(), kExitInvalid);
      return;
    }
    std::size_t objects = 0;
    for (std::size_t i = 0; i < docs->size(); ++i) {
      const json& doc = (*docs)[i];
      const common::DocumentLines& at = lines[i];
      const std::string index = std::to_string(i + 1);
      const std::string kind = string_field(doc, "kind");
      auto items = doc.is_object() ? doc.find("items") : doc.end();
      const bool is_list = doc.is_object() && items != doc.end() && items->is_array() &&
                           (kind == "List" || (kind.size() > 4 && kind.ends_with("List")));
      if (is_list) {
        for (std::size_t j = 0; j < items->size(); ++j) {
          const int line = j < at.items.size() ? at.items[j] : at.line;
          check_object(input.name, index + "." + std::to_string(j + 1), line, (*items)[j]);
          ++objects;
        }
      } else {
        check_object(input.name, index, at.line, doc);
        ++objects;
      }
    }
    // CLI-3: an input without any object is an error, not a silent success.
    if (objects == 0) problem(input.name, "no object found (the input is empty, or holds only comments, "
                                          "document separators or empty Lists)", kExitInvalid);
  }

  // `index`: the document number ("3") or document.item ("3.2"); `line`: where that object starts (1-based).
  void check_object(const std::string& file, const std::string& index, int line, const json& obj) {
    const std::string api_version = string_field(obj, "apiVersion");
    const std::string kind = string_field(obj, "kind");
    const std::string name = meta_field(obj, "name");
    const std::string where = file + ":" + std::to_string(line);
    const std::string group = api_version.substr(0, api_version.find('/'));
    const bool ours = group == api::kGroup || (api_version.empty() && api::kind_from_name(kind).has_value());
    if (!obj.is_object() || !ours) {
      if (!obj.is_object()) {
        exit_ = std::max(exit_, kExitInvalid);
        report_["valid"] = false;
        report_["problems"].push_back(
            {{"file", file}, {"document", index}, {"line", line}, {"message", "not a Kubernetes object"}});
        if (!json_output()) err_ << where << ": not a Kubernetes object\n";
        return;
      }
      report_["skipped"].push_back({{"file", file},
                                    {"document", index},
                                    {"line", line},
                                    {"apiVersion", api_version},
                                    {"kind", kind},
                                    {"name", name}});
      if (!json_output()) {
        err_ << where << ": " << (kind.empty() ? "<no kind>" : kind) << "/" << name
             << ": skipped: not a rightsizing.kubex.ai object\n";
      }
      return;
    }
    api::ValidationContext ctx;
    ctx.early_webhook_enabled = opts_.early_webhook_enabled;
    api::ValidationReport r = api::validate_any(obj, ctx);
    // VAL-5: unknown fields first, as kube-apiserver's strict field validation reports them (a typo often
    // explains the errors after it); the engine and the webhook never check them (the API server prunes them).
    const std::size_t slash = api_version.find('/');
    if (const json* schema = crd_schema(kind, slash == std::string::npos ? "" : api_version.substr(slash + 1))) {
      common::Errors all;
      for (const auto& u : api::unknown_fields(*schema, obj)) all.add(u.path, u.message());
      if (!all.empty()) {
        all.append(r.errors);
        r.errors = std::move(all);
      }
    }
    const std::string label =
        where + ": " + (kind.empty() ? "<no kind>" : kind) + "/" + (name.empty() ? "<no name>" : name);
    json entry = {{"file", file},
                  {"document", index},
                  {"line", line},
                  {"apiVersion", api_version},
                  {"kind", kind},
                  {"name", name},
                  {"namespace", meta_field(obj, "namespace")},
                  {"valid", r.ok()},
                  {"errors", json::array()},
                  {"warnings", r.warnings}};
    if (!r.ok()) {
      entry["reason"] = r.reason();
      exit_ = std::max(exit_, kExitInvalid);
      report_["valid"] = false;
    }
    for (const auto& e : r.errors.items()) {
      entry["errors"].push_back({{"path", e.path}, {"message", e.message}});
      if (!json_output()) err_ << label << ": " << e.str() << "\n";
    }
    if (!json_output()) {
      for (const auto& w : r.warnings) err_ << label << ": warning: " << w << "\n";
    }
    report_["documents"].push_back(std::move(entry));
  }

  int finish() {
    if (json_output()) {
      out_ << report_.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else if (exit_ == kExitValid) {  // CLI-3: success says so, on stdout ("3 objects valid")
      const std::size_t valid = report_["documents"].size(), skipped = report_["skipped"].size();
      out_ << valid << (valid == 1 ? " object" : " objects") << " valid";
      if (skipped > 0) out_ << ", " << skipped << " skipped (not rightsizing.kubex.ai)";
      out_ << "\n";
    }
    return exit_;
  }

 private:
  const ValidateOptions& opts_;
  std::ostream& out_;
  std::ostream& err_;
  json report_;
  int exit_ = kExitValid;
  bool stdin_read_ = false;
};

}  // namespace

int run_validate(const ValidateOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  if (options.output != "text" && options.output != "json") {
    err << "kubex validate: --output must be text or json, not " << dump(options.output) << "\n";
    return kExitUsage;
  }
  if (options.files.empty()) {
    err << "kubex validate: no input: give -f FILE, -f DIR or -f - (standard input)\n";
    return kExitUsage;
  }
  try {
    Run run(options, out, err);
    std::vector<Input> inputs;
    for (const auto& f : options.files) run.collect(f, in, inputs);
    for (const auto& input : inputs) run.check_input(input);
    return run.finish();
  } catch (const std::exception& e) {  // a safety net: nothing above is expected to throw
    err << "kubex validate: internal error: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace kubex::engine
