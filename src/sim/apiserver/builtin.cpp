#include "sim/apiserver/builtin.h"

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "common/label_selector.h"
#include "common/quantity.h"

namespace kubex::sim::builtin {

using nlohmann::json;

namespace {

json& obj_at(json& parent, const char* key) {
  auto& v = parent[key];
  if (!v.is_object()) v = json::object();
  return v;
}

void set_default(json& o, const char* key, json value) {
  if (!o.contains(key) || o[key].is_null()) o[key] = std::move(value);
}

// Canonical quantity strings, like a typed decode/encode round trip does (`nvidia.com/gpu: 1` -> "1").
void canonicalize_resource_list(json& list) {
  if (!list.is_object()) return;
  for (auto& [k, v] : list.items()) {
    auto q = common::Quantity::from_json(v);
    if (q) v = q->str();
  }
}

void default_container(json& c, bool init) {
  if (!c.is_object()) return;
  std::string image = c.value("image", "");
  if (!c.contains("imagePullPolicy")) {
    auto last_slash = image.rfind('/');
    std::string tail = last_slash == std::string::npos ? image : image.substr(last_slash + 1);
    bool has_digest = image.find('@') != std::string::npos;
    auto colon = tail.find(':');
    std::string tag = colon == std::string::npos ? "" : tail.substr(colon + 1);
    c["imagePullPolicy"] = (!has_digest && (tag.empty() || tag == "latest")) ? "Always" : "IfNotPresent";
  }
  set_default(c, "terminationMessagePath", "/dev/termination-log");
  set_default(c, "terminationMessagePolicy", "File");
  json& res = obj_at(c, "resources");
  if (res.contains("limits")) canonicalize_resource_list(res["limits"]);
  if (res.contains("requests")) canonicalize_resource_list(res["requests"]);
  // Requests default to limits for every resource with a limit but no request.
  if (res.contains("limits") && res["limits"].is_object()) {
    for (auto& [k, v] : res["limits"].items()) {
      if (!res.contains("requests") || !res["requests"].is_object()) res["requests"] = json::object();
      if (!res["requests"].contains(k)) res["requests"][k] = v;
    }
  }
  if (c.contains("ports") && c["ports"].is_array()) {
    for (auto& p : c["ports"]) {
      if (p.is_object()) set_default(p, "protocol", "TCP");
    }
  }
  (void)init;
}

void default_pod_spec(json& spec) {
  if (!spec.is_object()) return;
  set_default(spec, "restartPolicy", "Always");
  set_default(spec, "terminationGracePeriodSeconds", 30);
  set_default(spec, "dnsPolicy", "ClusterFirst");
  set_default(spec, "securityContext", json::object());
  set_default(spec, "schedulerName", "default-scheduler");
  set_default(spec, "enableServiceLinks", true);
  for (const char* key : {"containers", "initContainers"}) {
    if (spec.contains(key) && spec[key].is_array()) {
      for (auto& c : spec[key]) default_container(c, std::string(key) == "initContainers");
    }
  }
}

void default_template(json& obj) {
  if (!obj.contains("spec") || !obj["spec"].is_object()) return;
  json& spec = obj["spec"];
  if (spec.contains("template") && spec["template"].is_object()) {
    json& t = spec["template"];
    obj_at(t, "metadata");
    default_pod_spec(obj_at(t, "spec"));
  }
}

std::string name_error_dns1123_subdomain(const std::string& name) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  if (name.size() > 253) return "must be no more than 253 characters";
  if (!std::regex_match(name, re)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  }
  return "";
}

std::string name_error_dns1123_label(const std::string& name) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  if (name.size() > 63) return "must be no more than 63 characters";
  if (!std::regex_match(name, re)) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
           "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  }
  return "";
}

StatusCause required(const std::string& field) { return {"FieldValueRequired", field + ": Required value", field}; }

StatusCause invalid_value(const std::string& field, const json& value, const std::string& detail) {
  return {"FieldValueInvalid", field + ": Invalid value: " + value.dump() + ": " + detail, field};
}

void validate_containers(const json& spec, const std::string& path, std::vector<StatusCause>& out) {
  if (!spec.contains("containers") || !spec["containers"].is_array() || spec["containers"].empty()) {
    out.push_back(required(path + ".containers"));
    return;
  }
  std::set<std::string> names;
  for (const char* key : {"initContainers", "containers"}) {
    if (!spec.contains(key) || !spec[key].is_array()) continue;
    for (std::size_t i = 0; i < spec[key].size(); ++i) {
      const json& c = spec[key][i];
      std::string p = path + "." + key + "[" + std::to_string(i) + "]";
      std::string name = c.is_object() ? c.value("name", "") : "";
      if (name.empty()) {
        out.push_back(required(p + ".name"));
      } else if (!names.insert(name).second) {
        out.push_back({"FieldValueDuplicate", p + ".name: Duplicate value: \"" + name + "\"", p + ".name"});
      } else if (auto e = name_error_dns1123_label(name); !e.empty()) {
        out.push_back(invalid_value(p + ".name", name, e));
      }
      if (!c.is_object() || c.value("image", "").empty()) out.push_back(required(p + ".image"));
      if (c.is_object() && c.contains("resources") && c["resources"].is_object()) {
        const json& res = c["resources"];
        for (const char* kind : {"requests", "limits"}) {
          if (!res.contains(kind) || !res[kind].is_object()) continue;
          for (auto& [rk, rv] : res[kind].items()) {
            auto q = common::Quantity::from_json(rv);
            std::string rp = p + ".resources." + kind + "[" + rk + "]";
            if (!q) {
              out.push_back(invalid_value(rp, rv, "must be a valid quantity"));
            } else if (q->sign() < 0) {
              out.push_back(invalid_value(rp, rv, "must be greater than or equal to 0"));
            } else if (rk.find('/') != std::string::npos && rk.rfind("hugepages-", 0) != 0 && q->milli_value() % 1000 != 0) {
              // Extended resources (nvidia.com/gpu) must be whole numbers.
              out.push_back(invalid_value(rp, rv, "must be an integer"));
            }
          }
        }
        if (res.contains("requests") && res.contains("limits") && res["requests"].is_object() && res["limits"].is_object()) {
          for (auto& [rk, rv] : res["requests"].items()) {
            if (!res["limits"].contains(rk)) {
              if (rk.find('/') != std::string::npos && rk.find("kubernetes.io/") == std::string::npos &&
                  rk.rfind("hugepages-", 0) != 0) {
                out.push_back({"FieldValueForbidden",
                               p + ".resources.limits: Required value: Limit must be set for non overcommitable resources",
                               p + ".resources.limits"});
              }
              continue;
            }
            auto rq = common::Quantity::from_json(rv);
            auto lq = common::Quantity::from_json(res["limits"][rk]);
            if (rq && lq && *lq < *rq) {
              out.push_back(invalid_value(p + ".resources.requests[" + rk + "]", rv,
                                          "must be less than or equal to " + rk + " limit of " + lq->str()));
            } else if (rq && lq && rk.find('/') != std::string::npos && rk.find("kubernetes.io/") == std::string::npos &&
                       !(*lq == *rq)) {
              out.push_back(invalid_value(p + ".resources.requests[" + rk + "]", rv,
                                          "must be equal to " + rk + " limit of " + lq->str()));
            }
          }
        }
      }
    }
  }
}

void validate_selector_matches_template(const json& obj, std::vector<StatusCause>& out, bool required_selector) {
  const json& spec = obj["spec"];
  if (!spec.contains("selector") || spec["selector"].is_null()) {
    if (required_selector) out.push_back(required("spec.selector"));
    return;
  }
  auto sel = common::LabelSelector::from_json(spec["selector"], "spec.selector");
  if (!sel) {
    for (const auto& e : sel.error().items()) out.push_back({"FieldValueInvalid", e.str(), e.path});
    return;
  }
  if (sel->empty()) {
    out.push_back({"FieldValueInvalid", "spec.selector: Invalid value: " + spec["selector"].dump() +
                                            ": empty selector is invalid for deployment",
                   "spec.selector"});
    return;
  }
  std::map<std::string, std::string> labels;
  if (spec.contains("template") && spec["template"].contains("metadata") &&
      spec["template"]["metadata"].contains("labels") && spec["template"]["metadata"]["labels"].is_object()) {
    for (auto& [k, v] : spec["template"]["metadata"]["labels"].items()) labels[k] = v.is_string() ? v.get<std::string>() : "";
  }
  if (!sel->matches(labels)) {
    json l = spec["template"].contains("metadata") ? spec["template"]["metadata"].value("labels", json::object())
                                                   : json::object();
    out.push_back({"FieldValueInvalid",
                   "spec.template.metadata.labels: Invalid value: " + l.dump() +
                       ": `selector` does not match template `labels`",
                   "spec.template.metadata.labels"});
  }
}

void immutable(const json& obj, const json* old, const json::json_pointer& ptr, const std::string& field,
               std::vector<StatusCause>& out) {
  if (!old) return;
  json a = obj.contains(ptr) ? obj[ptr] : json();
  json b = old->contains(ptr) ? (*old)[ptr] : json();
  if (a != b) {
    out.push_back({"FieldValueInvalid", field + ": Invalid value: " + a.dump() + ": field is immutable", field});
  }
}

}  // namespace

std::string pod_qos_class(const json& pod) {
  bool any = false, guaranteed = true;
  const json& spec = pod.contains("spec") ? pod["spec"] : json::object();
  for (const char* key : {"initContainers", "containers"}) {
    if (!spec.contains(key) || !spec[key].is_array()) continue;
    for (const auto& c : spec[key]) {
      const json res = c.value("resources", json::object());
      const json req = res.value("requests", json::object());
      const json lim = res.value("limits", json::object());
      for (const char* r : {"cpu", "memory"}) {
        bool has_req = req.contains(r), has_lim = lim.contains(r);
        if (has_req || has_lim) any = true;
        if (!has_lim || !has_req || req[r] != lim[r]) guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

void apply_defaults(const ResourceInfo& r, json& obj) {
  if (!obj.is_object()) return;
  obj_at(obj, "metadata");
  const std::string& k = r.kind;
  if (!r.group.empty() && r.group != "apps" && r.group != "batch" && r.group != "policy") {
    if (k == "MutatingWebhookConfiguration" || k == "ValidatingWebhookConfiguration") {
      if (obj.contains("webhooks") && obj["webhooks"].is_array()) {
        for (auto& w : obj["webhooks"]) {
          if (!w.is_object()) continue;
          set_default(w, "failurePolicy", "Fail");
          set_default(w, "matchPolicy", "Equivalent");
          set_default(w, "namespaceSelector", json::object());
          set_default(w, "objectSelector", json::object());
          set_default(w, "timeoutSeconds", 10);
          if (k == "MutatingWebhookConfiguration") set_default(w, "reinvocationPolicy", "Never");
          if (w.contains("rules") && w["rules"].is_array()) {
            for (auto& rule : w["rules"]) {
              if (rule.is_object()) set_default(rule, "scope", "*");
            }
          }
          if (w.contains("clientConfig") && w["clientConfig"].contains("service") &&
              w["clientConfig"]["service"].is_object()) {
            set_default(w["clientConfig"]["service"], "port", 443);
          }
        }
      }
    }
    return;
  }
  if (r.group.empty()) {
    if (k == "Pod") {
      default_pod_spec(obj_at(obj, "spec"));
      if (!obj["spec"].contains("serviceAccountName")) obj["spec"]["serviceAccountName"] = "default";
      set_default(obj["spec"], "serviceAccount", obj["spec"]["serviceAccountName"]);
      set_default(obj["spec"], "priority", 0);
      set_default(obj["spec"], "preemptionPolicy", "PreemptLowerPriority");
      if (!obj["spec"].contains("tolerations")) {
        obj["spec"]["tolerations"] = json::array(
            {{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"},
              {"tolerationSeconds", 300}},
             {{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"}, {"effect", "NoExecute"},
              {"tolerationSeconds", 300}}});
      }
    } else if (k == "Namespace") {
      obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = obj["metadata"].value("name", "");
      json& spec = obj_at(obj, "spec");
      set_default(spec, "finalizers", json::array({"kubernetes"}));
    } else if (k == "Service") {
      json& spec = obj_at(obj, "spec");
      set_default(spec, "type", "ClusterIP");
      set_default(spec, "sessionAffinity", "None");
      if (spec.contains("ports") && spec["ports"].is_array()) {
        for (auto& p : spec["ports"]) {
          if (!p.is_object()) continue;
          set_default(p, "protocol", "TCP");
          if (p.contains("port")) set_default(p, "targetPort", p["port"]);
        }
      }
    } else if (k == "Secret") {
      set_default(obj, "type", "Opaque");
    } else if (k == "Node") {
      if (obj.contains("status") && obj["status"].is_object()) {
        for (const char* key : {"capacity", "allocatable"}) {
          if (obj["status"].contains(key)) canonicalize_resource_list(obj["status"][key]);
        }
      }
    }
    return;
  }
  json& spec = obj_at(obj, "spec");
  if (k == "Deployment") {
    set_default(spec, "replicas", 1);
    set_default(spec, "revisionHistoryLimit", 10);
    set_default(spec, "progressDeadlineSeconds", 600);
    json& strategy = obj_at(spec, "strategy");
    set_default(strategy, "type", "RollingUpdate");
    if (strategy["type"] == "RollingUpdate") {
      json& ru = obj_at(strategy, "rollingUpdate");
      set_default(ru, "maxUnavailable", "25%");
      set_default(ru, "maxSurge", "25%");
    }
    default_template(obj);
  } else if (k == "ReplicaSet") {
    set_default(spec, "replicas", 1);
    default_template(obj);
  } else if (k == "StatefulSet") {
    set_default(spec, "replicas", 1);
    set_default(spec, "podManagementPolicy", "OrderedReady");
    set_default(spec, "revisionHistoryLimit", 10);
    json& us = obj_at(spec, "updateStrategy");
    set_default(us, "type", "RollingUpdate");
    if (us["type"] == "RollingUpdate") set_default(obj_at(us, "rollingUpdate"), "partition", 0);
    set_default(spec, "persistentVolumeClaimRetentionPolicy",
                {{"whenDeleted", "Retain"}, {"whenScaled", "Retain"}});
    default_template(obj);
  } else if (k == "DaemonSet") {
    set_default(spec, "revisionHistoryLimit", 10);
    json& us = obj_at(spec, "updateStrategy");
    set_default(us, "type", "RollingUpdate");
    if (us["type"] == "RollingUpdate") {
      json& ru = obj_at(us, "rollingUpdate");
      set_default(ru, "maxUnavailable", 1);
      set_default(ru, "maxSurge", 0);
    }
    default_template(obj);
  } else if (k == "Job") {
    set_default(spec, "parallelism", 1);
    set_default(spec, "backoffLimit", 6);
    set_default(spec, "completionMode", "NonIndexed");
    set_default(spec, "suspend", false);
    if (!spec.contains("completions") && spec.value("parallelism", 1) == 1) spec["completions"] = 1;
    default_template(obj);
  } else if (k == "CronJob") {
    set_default(spec, "concurrencyPolicy", "Allow");
    set_default(spec, "suspend", false);
    set_default(spec, "successfulJobsHistoryLimit", 3);
    set_default(spec, "failedJobsHistoryLimit", 1);
    if (spec.contains("jobTemplate") && spec["jobTemplate"].is_object()) {
      json& jt = spec["jobTemplate"];
      json& jspec = obj_at(jt, "spec");
      set_default(jspec, "backoffLimit", 6);
      set_default(jspec, "completionMode", "NonIndexed");
      set_default(jspec, "suspend", false);
      if (jspec.contains("template") && jspec["template"].is_object()) {
        default_pod_spec(obj_at(jspec["template"], "spec"));
      }
    }
  }
}

void prepare_for_create(const ResourceInfo& r, json& obj) {
  const std::string& k = r.kind;
  if (r.group.empty() && k == "Pod") {
    obj["status"] = {{"phase", "Pending"}, {"qosClass", pod_qos_class(obj)}};
    if (obj["spec"].contains("nodeName") && !obj["spec"]["nodeName"].get<std::string>().empty()) {
      obj["status"]["conditions"] = json::array(
          {{{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", nullptr}}});
    }
    return;
  }
  if (r.group.empty() && k == "Namespace") {
    obj["status"] = {{"phase", "Active"}};
    return;
  }
  if (r.group.empty() && (k == "Node" || k == "Service")) return;  // status may be set at create
  if (r.has_status) obj["status"] = json::object();
  // Fields the typed API always serialises (non-omitempty in Go); clients such as the Python one require them.
  if (r.group == "apps" && (k == "ReplicaSet" || k == "StatefulSet")) obj["status"] = {{"replicas", 0}};
  if (r.group == "apps" && k == "DaemonSet") {
    obj["status"] = {{"currentNumberScheduled", 0}, {"numberMisscheduled", 0}, {"desiredNumberScheduled", 0},
                     {"numberReady", 0}};
  }
  if (r.group == "policy" && k == "PodDisruptionBudget") {
    obj["status"] = {{"disruptionsAllowed", 0}, {"currentHealthy", 0}, {"desiredHealthy", 0}, {"expectedPods", 0}};
  }
}

void prepare_for_update(const ResourceInfo& r, json& next, const json& old) {
  if (r.has_status && !(r.group.empty() && (r.kind == "Node" || r.kind == "Namespace"))) {
    if (old.contains("status")) {
      next["status"] = old["status"];
    } else {
      next.erase("status");
    }
  }
  if (r.group.empty() && r.kind == "Namespace") {
    if (old.contains("status")) next["status"] = old["status"];
    if (old.contains("spec")) next["spec"] = old["spec"];
    next["metadata"]["labels"]["kubernetes.io/metadata.name"] = old["metadata"].value("name", "");
  }
  if (r.group.empty() && r.kind == "Node" && old.contains("status") && !next.contains("status")) {
    next["status"] = old["status"];
  }
}

std::vector<StatusCause> validate_name(const ResourceInfo& r, const std::string& name) {
  std::vector<StatusCause> out;
  std::string err;
  if (r.is_custom) {
    err = name_error_dns1123_subdomain(name);
  } else if (r.group.empty() && (r.kind == "Namespace" || r.kind == "Service")) {
    err = name_error_dns1123_label(name);
  } else if (r.group.empty() && (r.kind == "Node" || r.kind == "Event")) {
    if (name.empty() || name.find('/') != std::string::npos) err = "may not contain '/'";
  } else {
    err = name_error_dns1123_subdomain(name);
  }
  if (!err.empty()) out.push_back(invalid_value("metadata.name", name, err));
  return out;
}

std::vector<StatusCause> validate(const ResourceInfo& r, const json& obj, const json* old) {
  std::vector<StatusCause> out;
  const std::string& k = r.kind;
  const json empty = json::object();
  const json& spec = obj.contains("spec") && obj["spec"].is_object() ? obj["spec"] : empty;
  if (obj["metadata"].contains("labels") && obj["metadata"]["labels"].is_object()) {
    for (auto& [lk, lv] : obj["metadata"]["labels"].items()) {
      if (!lv.is_string()) {
        out.push_back(invalid_value("metadata.labels", lv, "label values must be strings"));
      }
    }
  }
  if (r.group.empty() && k == "Pod") {
    validate_containers(spec, "spec", out);
    if (old) {
      // Only a few pod spec fields are mutable.
      json a = spec, b = (*old)["spec"];
      for (auto* s : {&a, &b}) {
        s->erase("activeDeadlineSeconds");
        s->erase("tolerations");
        s->erase("terminationGracePeriodSeconds");
        if (s->contains("containers")) {
          for (auto& c : (*s)["containers"]) c.erase("image");
        }
        if (s->contains("initContainers")) {
          for (auto& c : (*s)["initContainers"]) c.erase("image");
        }
      }
      if (a != b) {
        out.push_back({"FieldValueForbidden",
                       "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
                       "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only "
                       "additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set "
                       "to 1 if it was previously negative)",
                       "spec"});
      }
    }
  } else if (r.group == "apps" && (k == "Deployment" || k == "ReplicaSet" || k == "StatefulSet" || k == "DaemonSet")) {
    validate_selector_matches_template(obj, out, true);
    if (spec.contains("template") && spec["template"].contains("spec")) {
      validate_containers(spec["template"]["spec"], "spec.template.spec", out);
    } else {
      out.push_back(required("spec.template"));
    }
    if (spec.contains("replicas") && spec["replicas"].is_number_integer() && spec["replicas"].get<std::int64_t>() < 0) {
      out.push_back(invalid_value("spec.replicas", spec["replicas"], "must be greater than or equal to 0"));
    }
    immutable(obj, old, "/spec/selector"_json_pointer, "spec.selector", out);
    if (k == "StatefulSet" && old) {
      // Only some fields of a StatefulSet spec may change.
      json a = spec, b = (*old)["spec"];
      for (auto* s : {&a, &b}) {
        for (const char* f : {"replicas", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                              "minReadySeconds", "ordinals", "revisionHistoryLimit"}) {
          s->erase(f);
        }
      }
      if (a != b) {
        out.push_back({"FieldValueForbidden",
                       "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                       "'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' "
                       "and 'minReadySeconds' are forbidden",
                       "spec"});
      }
    }
  } else if (r.group == "batch" && k == "Job") {
    if (spec.contains("template") && spec["template"].contains("spec")) {
      const json& ts = spec["template"]["spec"];
      validate_containers(ts, "spec.template.spec", out);
      std::string rp = ts.value("restartPolicy", "Always");
      if (rp != "Never" && rp != "OnFailure") {
        out.push_back({"FieldValueNotSupported",
                       "spec.template.spec.restartPolicy: Unsupported value: \"" + rp +
                           "\": supported values: \"OnFailure\", \"Never\"",
                       "spec.template.spec.restartPolicy"});
      }
    } else {
      out.push_back(required("spec.template"));
    }
  } else if (r.group == "batch" && k == "CronJob") {
    if (spec.value("schedule", "").empty()) out.push_back(required("spec.schedule"));
    if (!spec.contains("jobTemplate")) out.push_back(required("spec.jobTemplate"));
  } else if (r.group == "policy" && k == "PodDisruptionBudget") {
    if (spec.contains("minAvailable") && spec.contains("maxUnavailable")) {
      out.push_back({"FieldValueInvalid",
                     "spec: Invalid value: " + spec.dump() + ": minAvailable and maxUnavailable cannot be both set",
                     "spec"});
    }
  } else if (r.group == "coordination.k8s.io" && k == "Lease") {
    if (spec.contains("leaseDurationSeconds") && spec["leaseDurationSeconds"].is_number_integer() &&
        spec["leaseDurationSeconds"].get<std::int64_t>() <= 0) {
      out.push_back(invalid_value("spec.leaseDurationSeconds", spec["leaseDurationSeconds"], "must be greater than 0"));
    }
  } else if (r.group == "admissionregistration.k8s.io") {
    if (obj.contains("webhooks") && obj["webhooks"].is_array()) {
      for (std::size_t i = 0; i < obj["webhooks"].size(); ++i) {
        const json& w = obj["webhooks"][i];
        std::string p = "webhooks[" + std::to_string(i) + "]";
        if (w.value("name", "").empty()) out.push_back(required(p + ".name"));
        if (!w.contains("sideEffects")) out.push_back(required(p + ".sideEffects"));
        if (!w.contains("admissionReviewVersions")) out.push_back(required(p + ".admissionReviewVersions"));
        const json cc = w.value("clientConfig", json::object());
        if (!cc.contains("url") && !cc.contains("service")) {
          out.push_back(required(p + ".clientConfig: exactly one of url or service is required"));
        }
      }
    }
  }
  return out;
}

}  // namespace kubex::sim::builtin
