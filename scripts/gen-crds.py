#!/usr/bin/python3
"""Writes the rightsizing.kubex.ai/v1alpha1 CustomResourceDefinitions (SPEC §1) to charts/kubex-crds/templates/.

The CRD YAML is the API's source of truth for clusters and for kubex-sim (DESIGN §2.5); this script only keeps
the eleven files consistent (the gate blocks, selectors, signals and conditions repeat across kinds). Edit the
schema here, run `scripts/gen-crds.py`, and commit the regenerated YAML. The C++ side (src/api/defaults.cpp
field_catalogue) must follow: tests/unit/api/parity_test.cpp fails when a field, type or default differs, or
when a bad object's API-server errors are not the validator's (path and text), and
tests/e2e/test_api.py fails when the committed YAML is not what this script writes.

Usage: scripts/gen-crds.py [OUTPUT_DIR]   (default: charts/kubex-crds/templates next to this script)
"""
import copy
import pathlib
import sys

import yaml

GROUP = "rightsizing.kubex.ai"
CONTRACT = "v1alpha1-2026-07"

# Go duration syntax (time.ParseDuration), as GPU-4 requires.
# No backslashes: the same text is used inside CEL string literals.
DURATION_RE = r"^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"
RFC1123_LABEL_RE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
METRIC_RE = r"^[A-Za-z_:][A-Za-z0-9_:]*$"
LABEL_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"
HHMM_RE = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
HHMM_END_RE = r"^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$"
# Used inside a CEL raw string literal (r'...'), so the backslashes reach RE2 as written.
URL_RE = r"^https?://[^\s/?#]+([/?#]\S*)?$"
REASON_RE = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
WORKLOAD_TYPES = ["Deployment", "StatefulSet", "CronJob", "Rollout", "Job", "AnalysisRun", "DaemonSet", "Model",
                  "StrimziPodSet"]
DEFAULT_WORKLOAD_TYPES = WORKLOAD_TYPES[:-1]
WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
            "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
NO_EFFECT = " Accepted for compatibility; it has no effect in this engine (setting a non-default value returns " \
            "an admission warning)."
INT32_MIN, INT32_MAX = -2147483648, 2147483647
QUANTITY_KEYS = ["cpu", "memory", "gpu"]
# List positions a rule on a whole list can name in its message (duplicates): CEL has no range(). Lists are
# at most MAX_LIST long (BOUNDS), so every position is covered.
INDEXES = "[" + ", ".join(str(i) for i in range(64)) + "]"
# The same positions as strings: kube's estimator cannot bound string(int), it can bound a literal's item.
INDEX_TEXTS = "[" + ", ".join(f"'{i}'" for i in range(64)) + "]"
# How many errors one messageExpression lists (below a container map: per container, and containers). kube's
# cost estimator cannot bound join() over a computed list, so messages concatenate the first MESSAGE_TERMS
# items term by term; further errors are left out of the message (the rule still refuses the object, and the
# validating webhook reports them all).
MESSAGE_TERMS = 8

# How the spec schemas report errors (API-2, VAL-4; docs/status-and-events.md "Validation errors").
#
# Every check on what users write is an x-kubernetes-validations rule whose message is the validator's VAL-4
# text and whose reason is FieldValueForbidden (FieldValueRequired for "required"), so that kube-apiserver
# prints `<validator path>: Forbidden: <validator message>` - not the OpenAPI wording, and not the
# `Invalid value: "object":` form. The spec schemas therefore use no `enum`, `pattern`, `required`,
# `minimum`/`maximum`, `minLength`, `minItems`, `format: int32` or list-type keys:
#  * their wording differs from VAL-4 ("in body should be greater than or equal to 1", a regex dump), and
#  * kube-apiserver skips every CEL rule when an enum, required, maxLength, maxItems/maxProperties or type
#    error exists (printing `<nil>: Invalid value: null: some validation rules were not checked ...`), so
#    cross-field errors would only show on a second apply.
# The exception is maxLength/maxItems/maxProperties (BOUNDS below): kube-apiserver's CEL cost estimate needs
# them, and they are set above any limit the validator reports, so they only fire for absurd objects.
# Only `type` errors (and those bounds) still block the rules.
# CEL reports an error at the path of the node its rule is attached to (plus `fieldPath`), and it renders map
# keys as `containers[app]`; checks below a map (container names) are therefore one rule on the map itself
# whose message lists each failure as `<validator path>: <message>`, joined with "; " like VAL-1.
# The status schemas are written by the engine and keep the plain OpenAPI keywords.

# BOUNDS. kube-apiserver refuses a CRD whose CEL rules' estimated cost exceeds its budget, and it estimates
# from the schema only: a string, list or map without maxLength/maxItems/maxProperties counts as large as a
# whole request. So every spec string, list and map a rule reads carries an OpenAPI bound. Where the validator
# has its own limit (VAL-4 "must have at most 7 items", "must be at most 64 characters") the bound is larger
# than that limit, so realistic violations still get the validator's message from the CEL rule; only objects
# beyond the bound get Kubernetes' own "Too long"/"Too many" (docs/kubex-sim.md "Differences from
# kube-apiserver"). The validator checks the same bounds (src/api/defaults.cpp bounds_table; the parity test
# compares it with the schemas): "must be at most N characters", "must have at most N items"/"entries".
MAX_STRING = 256        # names, labels, kinds, metric names, enum values
MAX_DURATION = 64       # Go durations
MAX_QUANTITY = 64       # quantities (strings)
MAX_LABEL_KEY = 317     # a label key: 253-character prefix, '/', 63-character name
MAX_URL = 2048
MAX_LIST = 64           # selector expressions, values, workload types, precedence entries
MAX_CONTAINERS = 64     # container-name maps
MAX_RESOURCES = 8       # requests/limits maps

FORBIDDEN = "FieldValueForbidden"
REQUIRED = "FieldValueRequired"


# ------------------------------------------------------------------------------------------------ field helpers

def rule(expr, message=None, field_path=None, message_expression=None, reason=FORBIDDEN):
    r = {"rule": expr}
    if message is not None:
        r["message"] = message
    if message_expression is not None:
        r["messageExpression"] = message_expression
    if reason is not None:
        r["reason"] = reason
    if field_path is not None:
        r["fieldPath"] = field_path
    return r


def cel_str(text):
    """A CEL single-quoted string literal (the texts here contain no quote or backslash)."""
    assert "'" not in text and "\\" not in text, text
    return f"'{text}'"


def quoted_list(values):
    return ", ".join(f'"{v}"' for v in values)


def required_rule(prop, field_path=None, nonempty=False):
    """`<path>.<prop>: required` (Required value) when the property is absent (or, `nonempty`, "")."""
    expr = f"has(self.{prop})" + (f" && self.{prop} != ''" if nonempty else "")
    return rule(expr, "required", field_path or f".{prop}", reason=REQUIRED)


def enum_rule(values, message_expression=None):
    """VAL-4 enums: `unsupported value "x": supported values: "a", "b"`."""
    literal = "[" + ", ".join(cel_str(v) for v in values) + "]"
    supported = f"supported values: {quoted_list(values)}"
    return rule(f"self in {literal}", f"unsupported value: {supported}",
                message_expression=message_expression
                or f"'unsupported value ' + strings.quote(self) + {cel_str(': ' + supported)}")


def match_rule(regex, message, allow_empty=False):
    expr = f"self.matches({cel_str(regex)})"
    return rule(f"self == '' || {expr}" if allow_empty else expr, message)


def first_terms(list_expr, var, n=MESSAGE_TERMS):
    """The first `n` strings of the CEL list `list_expr` joined with "; " (items must be non-empty). The list
    is bound to `var` through a one-item list's map() (kube-apiserver has no cel.bind) and read by index, whose
    cost kube's estimator bounds, unlike join() on a computed list."""
    terms = [f"(size({var}) > 0 ? {var}[0] : '')"] + [f"(size({var}) > {i} ? '; ' + {var}[{i}] : '')"
                                                      for i in range(1, n)]
    return f"[{list_expr}].map({var}, {' + '.join(terms)})[0]"


def add_rules(node, rules):
    if rules:
        node.setdefault("x-kubernetes-validations", []).extend(rules)
    return node


def with_default(node, default):
    if default is not None:
        node["default"] = default
    return node


def string(desc, default=None, enum=None, rules=None, max_length=None, **kw):
    """A spec string. `enum` becomes a CEL rule (VAL-4 wording); `kw` is only for status schemas.
    `max_length` (default: MAX_STRING for strings with an enum or rules) bounds the CEL cost estimate (see
    BOUNDS)."""
    node = with_default({"type": "string", "description": desc, **kw}, default)
    if max_length is None and (enum or rules):
        max_length = MAX_STRING
    if max_length is not None:
        node["maxLength"] = max_length
    return add_rules(node, ([enum_rule(enum)] if enum else []) + list(rules or []))


def status_string(desc, **kw):
    return {"type": "string", "description": desc, **kw}


def boolean(desc, default=None):
    return with_default({"type": "boolean", "description": desc}, default)


def int_bounds_rules(minimum=None, maximum=None):
    """The validator's integer checks (int32 range included): `must be >= 1`, `must be between 1 and 100`."""
    if minimum is not None and maximum is not None:
        return [rule(f"self >= {minimum} && self <= {maximum}", f"must be between {minimum} and {maximum}")]
    lo = INT32_MIN if minimum is None else minimum
    return [rule(f"self >= {lo}", f"must be >= {lo}"),
            rule(f"self <= {INT32_MAX}", f"must be <= {INT32_MAX}")]


def int32(desc, default=None, minimum=None, maximum=None):
    """An int32 spec field; the range is a CEL rule (no `format: int32`, no `minimum`/`maximum`)."""
    node = {"type": "integer", "description": desc}
    return add_rules(with_default(node, default), int_bounds_rules(minimum, maximum))


def int64(desc, minimum=None):
    node = {"type": "integer", "format": "int64", "description": desc}
    if minimum is not None:
        node["minimum"] = minimum
    return node


def obj(desc, props, required=None, default=None, rules=None, schema_required=None, **kw):
    """An object. `required` properties become CEL rules (`<path>: required`); `schema_required` stays the
    OpenAPI keyword (status schemas, list-map keys)."""
    node = {"type": "object", "description": desc, "properties": props}
    if schema_required:
        node["required"] = schema_required
    node.update(kw)
    add_rules(node, [required_rule(p) for p in required or []] + list(rules or []))
    return with_default(node, default)


def string_map(desc):
    return {"type": "object", "description": desc,
            "additionalProperties": {"type": "string", "description": "The value for this key."}}


def free_object(desc):
    return {"type": "object", "description": desc, "x-kubernetes-preserve-unknown-fields": True}


def array(desc, items, default=None, max_items=None, rules=None, bound=MAX_LIST, **kw):
    """`max_items` is the validator's limit (a CEL rule, VAL-4 wording); `bound` the OpenAPI maxItems that
    bounds the CEL cost (BOUNDS), larger than `max_items`."""
    node = with_default({"type": "array", "description": desc, "items": items, **kw}, default)
    if bound is not None:
        node["maxItems"] = max(bound, 2 * (max_items or 0))
    if max_items is not None:
        add_rules(node, [rule(f"size(self) <= {max_items}", f"must have at most {max_items} items")])
    return add_rules(node, rules)


def timestamp(desc):
    return {"type": "string", "format": "date-time", "description": desc}


def is_duration(expr="self"):
    return f"{expr}.matches({cel_str(DURATION_RE)})"


def duration(desc, default, minimum=None, minimum_text=None, extra_rules=()):
    """A Go duration string: `must be a valid duration`; `minimum` is a CEL duration literal (`must be at least
    X`). Rules on the value are guarded by the syntax check, so a bad string gets one error."""
    rules = [rule(is_duration(), "must be a valid duration")]
    if minimum is not None:
        rules.append(rule(f"!{is_duration()} || duration(self) >= duration('{minimum}')",
                          f"must be at least {minimum_text or minimum}"))
    rules.extend(extra_rules)
    text = desc + " A Go duration such as `90s`, `1m30s` or `1h`."
    if default is not None:
        text += f" Default: `{default}`."
    return add_rules(string(text, default, max_length=MAX_DURATION), rules)


def duration_rule(expr, message):
    return rule(f"!{is_duration()} || {expr}", message)


# ------------------------------------------------------------------------------------------------ quantities

def is_qty(v):
    return f"isQuantity(string({v}))"


def qty_sign(v):
    # kube's quantity library declares sign() as a global function; kube-apiserver refuses `.sign()`.
    return f"sign(quantity(string({v})))"


def quantity(desc):
    """An int-or-string Kubernetes quantity (GPU-3). Its checks are on the enclosing object (bounds_checks,
    static_checks), so that the ones below container-name maps can name the validator's path."""
    return {"x-kubernetes-int-or-string": True, "maxLength": MAX_QUANTITY,
            "description": desc + " A Kubernetes quantity: a whole number (`1`, `4`) or a quoted string (`\"0.25\"`, "
                                  "`\"500m\"`, `\"2Gi\"`). Decimals must be quoted in YAML."}


def bounds_checks(a):
    """The validator's check_bounds on the object `a` (a CEL expression): (bad, field suffix, message), in
    the validator's order. floor <= ceiling is only judged when both are usable (floor >= 0, ceiling > 0)."""
    floor, ceiling = f"{a}.floor", f"{a}.ceiling"
    floor_ok = f"{is_qty(floor)} && {qty_sign(floor)} >= 0"
    ceiling_ok = f"{is_qty(ceiling)} && {qty_sign(ceiling)} > 0"
    return [
        (f"has({floor}) && !{is_qty(floor)}", ".floor", "must be a valid quantity"),
        (f"has({floor}) && {is_qty(floor)} && {qty_sign(floor)} < 0", ".floor", "must be >= 0"),
        (f"has({ceiling}) && !{is_qty(ceiling)}", ".ceiling", "must be a valid quantity"),
        (f"has({ceiling}) && {is_qty(ceiling)} && {qty_sign(ceiling)} <= 0", ".ceiling", "must be > 0"),
        (f"has({floor}) && has({ceiling}) && {floor_ok} && {ceiling_ok} && "
         f"quantity(string({floor})).compareTo(quantity(string({ceiling}))) > 0", "",
         "floor must be less than or equal to ceiling"),
    ]


def node_rules(checks):
    """Checks of one object as rules on that object (static paths: `<path><suffix>: <message>`)."""
    return [rule(f"!({bad})", msg, field_path=suffix or None) for bad, suffix, msg in checks]


def map_rule(path, checks_of, what):
    """One rule on a map keyed by container name: every entry's checks, the message listing each failure as
    `<path>.<key><suffix>: <message>` (the validator's path; CEL itself would print `<path>[<key>]`).
    `checks_of(entry_expr, key_expr)` returns [(bad, suffix expression, message)] where the suffix is a CEL
    string expression appended after the key."""
    checks = checks_of("self[k]", "k")
    ok = " && ".join(f"!({bad})" for bad, _, _ in checks)
    def entry(suffix, msg):
        after_key = "" if suffix == "''" else f" + {suffix}"
        return f"{cel_str(path + '.')} + k{after_key} + {cel_str(': ' + msg)}"
    parts = " + ".join(f"({bad} ? [{entry(suffix, msg)}] : [])" for bad, suffix, msg in checks)
    per_key = first_terms(parts, "e", len(checks))
    return rule(f"self.all(k, {ok})", f"invalid {what}",
                message_expression=first_terms(f"self.map(k, {per_key}).filter(m, m != '')", "l"))


def gate_entry_checks(entry, key):
    return [(bad, cel_str(suffix), msg) for bad, suffix, msg in bounds_checks(entry)]


def bounds_props(resource):
    unit = "GPUs" if resource == "gpu" else ("cores" if resource == "cpu" else "bytes")
    return {
        "floor": quantity(f"Lowest {resource} value kubex applies, in {unit}; recommendations below it are raised to "
                          "it (reason `floor-clamped`). Must be >= 0. No default (no floor)."),
        "ceiling": quantity(f"Highest {resource} value kubex applies, in {unit}; recommendations above it are lowered "
                            "to it (reason `ceiling-clamped`). Must be > 0 and >= floor. No default (no ceiling)."
                            + (" Set `\"1\"` for KAI strategies." if resource == "gpu" else "")),
    }


def gates(resource, usage, up, down, unspec):
    what = f"{resource} {usage}"
    path = f"spec.enablement.{resource}.{usage}"
    props = {
        "upsize": boolean(f"Allow kubex to raise the {what} of a container (ADM-9). Default: `{str(up).lower()}`.", up),
        "downsize": boolean(f"Allow kubex to lower the {what} of a container (ADM-9). Default: "
                            f"`{str(down).lower()}`.", down),
        "setFromUnspecified": boolean(f"Allow kubex to set the {what} of a container that has none (ADM-9). "
                                      f"Default: `{str(unspec).lower()}`.", unspec),
    }
    props.update(bounds_props(resource))
    props["containers"] = {
        "type": "object",
        "description": f"Per-container {what} bounds, keyed by container name. A container entry overrides the "
                       "floor/ceiling above for that container.",
        "maxProperties": MAX_CONTAINERS,
        "additionalProperties": obj(f"The {what} bounds of one container.", bounds_props(resource)),
        "x-kubernetes-validations": [map_rule(path + ".containers", gate_entry_checks, "container bounds")],
    }
    return obj(f"Direction gates and bounds for {what}.", props, default={},
               rules=node_rules(bounds_checks("self")))


def conditions():
    return array(
        "Standard conditions of this object, one per `type` (see `kubectl describe`).",
        obj("One condition (metav1.Condition).", {
            "type": status_string("Condition type, for example `Valid`, `Ready` or `Available`.", maxLength=316),
            "status": status_string("`True`, `False` or `Unknown`.", enum=["True", "False", "Unknown"]),
            "reason": status_string("Machine-readable CamelCase reason for the last transition, such as "
                                    "`InvalidSpec`.", maxLength=1024, pattern=REASON_RE),
            "message": status_string("Human-readable details of the last transition.", maxLength=32768),
            "observedGeneration": int64("The metadata.generation the condition was computed from.", minimum=0),
            "lastTransitionTime": timestamp("When the condition last changed status."),
        }, schema_required=["type", "status"]), bound=None,
        **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]})


def status(desc, extra=None):
    props = {
        "conditions": conditions(),
        "observedGeneration": int64("The metadata.generation the engine last processed.", minimum=0),
    }
    props.update(extra or {})
    return obj(desc, props)


SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"]


def label_selector(desc, wildcards):
    values_desc = "Values for `In` and `NotIn` (required, at least one); must be empty for `Exists` and " \
                  "`DoesNotExist`."
    if wildcards:
        values_desc += " `In`/`NotIn` values may contain shell-style `*` wildcards (`nvidia-*`)."
    expression = obj("One requirement: key, operator and values.", {
        "key": string("The label key the requirement applies to.", max_length=MAX_LABEL_KEY),
        "operator": string("`In`, `NotIn`, `Exists` or `DoesNotExist`.", enum=SELECTOR_OPERATORS),
        "values": array(values_desc, {"type": "string", "description": "One label value.", "maxLength": MAX_STRING}),
    }, rules=[
        required_rule("key", nonempty=True),
        required_rule("operator", nonempty=True),
        rule("!has(self.operator) || !(self.operator in ['In', 'NotIn']) || (has(self.values) && "
             "size(self.values) > 0)", "required for operator In or NotIn", field_path=".values",
             message_expression="'required for operator ' + self.operator"),
        rule("!has(self.operator) || !(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || "
             "size(self.values) == 0", "must be empty for operator Exists or DoesNotExist", field_path=".values",
             message_expression="'must be empty for operator ' + self.operator"),
    ])
    return obj(desc, {
        "matchLabels": string_map("Labels that must all be present with exactly these values."),
        "matchExpressions": array("Requirements that must all hold.", expression),
    })


UNSUPPORTED_CONTRACT = ("'unsupported value ' + strings.quote(self) + "
                        + cel_str(f': the only accepted GPU/KAI contract is "{CONTRACT}"'))


def experimental(always):
    """VAL-3. The value itself: "none" or the contract, anything else is `unsupported value "x": the only
    accepted ...`. For the kinds that always need the contract, absent or "none" is `must be "<contract>"`."""
    contract = string(
        f"The GPU/KAI contract version this object is written for. Must be `{CONTRACT}`." if always else
        f"The GPU/KAI contract version: `{CONTRACT}` or `none`. `{CONTRACT}` is required when "
        "`spec.enablement.overrideScheduler` is `kai` or `spec.kai` is set (VAL-3).",
        rules=[rule(f"self in ['none', '{CONTRACT}']", f"the only accepted GPU/KAI contract is \"{CONTRACT}\"",
                    message_expression=UNSUPPORTED_CONTRACT)])
    if always:
        return obj(f"Experimental GPU/KAI settings. Required: set `gpuKaiContract: {CONTRACT}` (VAL-3).",
                   {"gpuKaiContract": contract},
                   rules=[rule("has(self.gpuKaiContract) && self.gpuKaiContract != 'none'",
                               f"must be \"{CONTRACT}\"", field_path=".gpuKaiContract")])
    return obj("Experimental GPU/KAI settings. When present, `gpuKaiContract` is required.",
               {"gpuKaiContract": contract}, required=["gpuKaiContract"])


def metadata():
    """kube-apiserver allows only `type: object` on the root metadata, plus `name`/`generateName` string
    properties; `name` is declared so that rules on the root can use `fieldPath: .metadata.name`."""
    return {"type": "object", "properties": {"name": {"type": "string"}}}


def root(kind_desc, spec, status_node, spec_required, extra_root_rules=None):
    node = obj(kind_desc, {
        "apiVersion": string(f"API version of this object: `{GROUP}/v1alpha1`."),
        "kind": string("Kind of this object."),
        "metadata": metadata(),
        "spec": spec,
        "status": status_node,
    }, required=["spec"] if spec_required else None, rules=extra_root_rules)
    return node


# ------------------------------------------------------------------------------------------------ kinds

def strategy_spec(cluster):
    where = "cluster-wide policies (ClusterProactivePolicy, ClusterStaticPolicy, ClusterGpuReactivePolicy)" if cluster \
        else "policies in the same namespace"
    window = obj("One time window.", {
        "name": string("A name for the window, at most 128 characters.", max_length=256,
                       rules=[rule("size(self) <= 128", "must be at most 128 characters")]),
        "timezone": string("IANA time zone of start and end, at most 64 characters. Default: `UTC`.", "UTC",
                           max_length=128,
                           rules=[rule("size(self) <= 64", "must be at most 64 characters")]),
        "weekdays": array("Days the window applies to (`Sunday`/`Sun` ... `Saturday`/`Sat`), at most 7; all days "
                          "when empty.", string("A day of the week.", enum=WEEKDAYS), max_items=7),
        "start": string("Start time of day, `HH:MM` (24-hour).", max_length=16, rules=[match_rule(HHMM_RE, "must be HH:MM")]),
        "end": string("End time of day, `HH:MM` or `24:00`; must differ from start.", max_length=16,
                      rules=[match_rule(HHMM_END_RE, "must be HH:MM")]),
    }, required=["start", "end"], rules=[rule(
        f"!has(self.start) || !has(self.end) || !self.start.matches({cel_str(HHMM_RE)}) || "
        f"!self.end.matches({cel_str(HHMM_END_RE)}) || self.start != self.end",
        "start and end must not be the same")])
    safety = {
        "enablePauseUntilAnnotationCheck": boolean(
            "Honour the `rightsizing.kubex.ai/pause-until` annotation on pods, owners, templates and namespaces "
            "(ADM-4, ACT-2). Default: `true`.", True),
        "minReadyDuration": duration("How long a pod must have been Ready before kubex evicts it to apply a new "
                                     "size (ACT-2). Must be >= 0.", "10s", "0s", "0s"),
        "requireOwnerPodsReady": boolean("Evict only while every pod of the workload is Ready (ACT-2). Default: "
                                         "`false`.", False),
        "respectWorkloadMaxUnavailable": boolean(
            "Allow as many concurrent evictions as the workload's rolling-update `maxUnavailable` (ACT-3); "
            "otherwise one at a time. Default: `true`.", True),
        "resizeRetryInterval": duration("Wait between retries of a refused or failed eviction (ACT-5, ACT-7). "
                                        "Must be at least 1s.", "30s", "1s"),
    }
    for name in ["enableResourceQuotaFilter", "enableHpaFilter", "enableVpaFilter", "enableLimitRangeFilter",
                 "enablePodLimitRangeFilter", "requireNodeAllocatable"]:
        safety[name] = boolean(f"{name}. Default: `true`." + NO_EFFECT, True)
    for name in ["blockResizeOnVpaControlledResources", "retainGuaranteedQOS"]:
        safety[name] = boolean(f"{name}. Default: `false`." + NO_EFFECT, False)
    safety["minCpuChangePercent"] = int32("Smallest cpu change worth applying, in percent. Default: `5`."
                                          + NO_EFFECT, 5, minimum=0)
    safety["minMemoryChangePercent"] = int32("Smallest memory change worth applying, in percent. Default: `5`."
                                             + NO_EFFECT, 5, minimum=0)
    headroom_rule = [rule("self.matches('^[0-9]+%$') || isQuantity(self)",
                          "must be a percentage such as \"10%\" or a quantity")]
    safety["nodeCpuHeadroom"] = string("Node cpu to keep free: a percentage (`10%`) or a quantity. Default: `10%`."
                                       + NO_EFFECT, "10%", rules=headroom_rule)
    safety["nodeMemoryHeadroom"] = string("Node memory to keep free: a percentage or a quantity (`200Mi`). "
                                          "Default: `200Mi`." + NO_EFFECT, "200Mi",
                                          rules=copy.deepcopy(headroom_rule))
    # VAL-3: KAI needs the contract. An absent or unsupported contract value is already reported on its own.
    contract_rule = rule(
        "!((has(self.enablement) && has(self.enablement.overrideScheduler) && "
        "self.enablement.overrideScheduler == 'kai') || has(self.kai)) || (has(self.experimental) && "
        "(!has(self.experimental.gpuKaiContract) || self.experimental.gpuKaiContract != 'none'))",
        f"must be \"{CONTRACT}\" when spec.enablement.overrideScheduler is \"kai\" or spec.kai is set",
        field_path=".experimental.gpuKaiContract")
    return obj(f"How kubex applies recommendations to workloads of {where}: direction gates, bounds, KAI settings "
               "and safety checks.", {
        "experimental": experimental(False),
        "enablement": obj("Which changes kubex may make, per resource and usage.", {
            "overrideScheduler": string("`kai` moves matching GPU workloads onto KAI-Scheduler GPU fractions (KAI "
                                        "mode); `none` keeps whole GPUs (vanilla mode). Default: `none`.", "none",
                                        enum=["none", "kai"]),
            "gpu": obj("GPU (`nvidia.com/gpu` or KAI `gpu-fraction`) gates. There is no GPU limits block.",
                       {"requests": gates("gpu", "requests", False, False, False)}, default={}),
            "cpu": obj("cpu gates (StaticPolicy values at admission).",
                       {"requests": gates("cpu", "requests", True, True, True),
                        "limits": gates("cpu", "limits", True, True, False)}, default={}),
            "memory": obj("memory gates (StaticPolicy values at admission).",
                          {"requests": gates("memory", "requests", True, True, True),
                           "limits": gates("memory", "limits", True, True, True)}, default={}),
        }, default={}),
        "kai": obj(f"KAI-Scheduler settings. Setting this object requires gpuKaiContract `{CONTRACT}`.", {
            "queue": string("KAI queue label (`kai.scheduler/queue`) given to pods that have none (ADM-13). An RFC "
                            "1123 label (at most 63 characters). Default: `kubex-unlimited-gpu-queue`.",
                            "kubex-unlimited-gpu-queue", rules=[rule(
                                f"size(self) <= 63 && self.matches({cel_str(RFC1123_LABEL_RE)})",
                                "must be a valid RFC 1123 label")]),
            "setQueueWhenSpecified": boolean("Overwrite a queue label the pod already carries (ADM-13). Default: "
                                             "`false`.", False),
            "vllm": obj("vLLM tuning: when present, kubex rewrites `--gpu-memory-utilization` of vLLM containers "
                        "to match their GPU allocation (VLM rules).", {
                "gpuMemoryUtilizationBufferPercent": int32(
                    "Percent of the GPU allocation vLLM leaves unused (0-100). Default: `0`.", 0, 0, 100),
            }),
            "fractionLimit": obj(
                "KAI burst limit (KAI-2, KAI >= 0.18.2 with `gpuSharingMode: NvFractions` only): besides the "
                "`gpu-fraction` request, pods get `gpu-fraction.limit` = min(ceiling, max(request + 0.01, peak x (1 + "
                "headroomPercent/100))), the peak being the container's desired `limits.gpu` (a StaticPolicy's "
                "`limits.gpu`, or the recommenders' observed memory peak); with no peak, the pod's original "
                "allocation when the fraction is below it (KAI-2a).", {
                    "enabled": boolean("Write `gpu-fraction.limit` on fraction pods. Unset: enabled under "
                                       "`NvFractions` (KAI-2a: a fraction without a limit is a hard memory cap "
                                       "there); `false` makes every kubex-written fraction a hard cap and is "
                                       "warned about."),
                    "headroomPercent": int32("Percent added to the peak, 0-1000. Default: `50`.", 50, 0, 1000),
                    "ceiling": dict(quantity("Highest limit written, in GPUs; > 0 and <= 1. Default: `\"1\"`."),
                                    default="1"),
                }, rules=node_rules([
                    ("has(self.ceiling) && !" + is_qty("self.ceiling"), ".ceiling", "must be a valid quantity"),
                    ("has(self.ceiling) && " + is_qty("self.ceiling") + " && (" + qty_sign("self.ceiling")
                     + " <= 0 || quantity(string(self.ceiling)).compareTo(quantity('1')) > 0)", ".ceiling",
                     "must be > 0 and <= 1"),
                ])),
        }),
        "inPlaceResize": obj("In-place pod resize settings.", {
            "enabled": boolean("Try in-place resize; GPU fraction changes still evict and record "
                               "`kai-fraction-requires-restart` (ACT-6). Default: `true`.", True),
            "containerRestart": boolean("Allow container restarts during in-place resize. Default: `false`."
                                        + NO_EFFECT, False),
        }, default={}),
        "podEviction": obj("Eviction settings for applying new sizes to running pods.", {
            "enabled": boolean("Allow kubex to evict pods so that replacements get the new size (ACT-2). Default: "
                               "`true`.", True),
            "retryPodDisruptionBudget": boolean("Retry evictions refused by a PodDisruptionBudget after "
                                                "resizeRetryInterval (ACT-5). Default: `true`.", True),
        }, default={}),
        "safetyChecks": obj("Checks that must pass before kubex evicts a pod.", safety, default={}),
        "scheduling": obj("Time windows for automation." + NO_EFFECT, {
            "inclusionWindows": array("Windows in which automation may run (at most 32).", copy.deepcopy(window),
                                      max_items=32),
            "exclusionWindows": array("Windows in which automation must not run (at most 32).", copy.deepcopy(window),
                                      max_items=32),
        }),
    }, default={}, rules=[contract_rule])


def scope(cluster):
    props = {}
    if cluster:
        props["namespaceSelector"] = obj("Namespaces this policy applies to, by name. Required.", {
            "operator": string("`In`: the namespace must match a value; `NotIn`: it must match none.",
                               enum=["In", "NotIn"]),
            "values": array("Namespace names; shell-style `*` wildcards match any run of characters (`\"*\"` is every "
                            "namespace). At least one.", {"type": "string", "description": "A namespace name or "
                                                                                         "pattern."}),
        }, required=["operator"], rules=[rule("has(self.values) && size(self.values) > 0",
                                             "must contain at least 1 item", field_path=".values")])
    props["labelSelector"] = label_selector("Selects workloads by the labels of the WORKLOAD object (Deployment, "
                                            "StatefulSet, ...), not of its pods. Default: every workload.", False)
    props["workloadTypes"] = array(
        "Owner kinds this policy manages, without duplicates. Default: Deployment, StatefulSet, CronJob, Rollout, "
        "Job, AnalysisRun, DaemonSet, Model.",
        string("A workload kind.", enum=WORKLOAD_TYPES), default=DEFAULT_WORKLOAD_TYPES,
        rules=[duplicates_rule("spec.scope.workloadTypes", lambda e: e,
                               lambda v: f"{v} in [{', '.join(cel_str(t) for t in WORKLOAD_TYPES)}]")])
    if cluster:
        desc = "Which workloads this policy matches. Required on cluster policies."
        return obj(desc, props, required=["namespaceSelector"])
    return obj("Which workloads in this namespace the policy matches. Default: every workload of the default kinds.",
               props)


def duplicates_rule(path, value_of, judged, suffix=""):
    """`<path>[i]<suffix>: duplicate value "x"` for every item whose value occurs at a lower index, among the
    items the validator judges (valid enum values, non-empty types). `value_of(e)` and `judged(v)` build CEL
    from CEL expressions. The rule itself looks at every item; the message names positions below 64."""
    def dup_at(i):
        return (f"{judged(value_of(f'self[{i}]'))} && "
                f"{INDEXES}.exists(j, j < {i} && {value_of('self[j]')} == {value_of(f'self[{i}]')})")
    dups = (f"{INDEXES}.filter(i, i < size(self) && {dup_at('i')}).map(i, "
            f"{cel_str(path + '[')} + {INDEX_TEXTS}[i] + {cel_str(']' + suffix + ': duplicate value ')}"
            f" + '\"' + {value_of('self[i]')} + '\"')")
    return rule(f"self.all(e, !({judged(value_of('e'))}) || self.exists_one(f, {value_of('f')} == {value_of('e')}))",
                "must not contain duplicate values", message_expression=first_terms(dups, "l"))


def required_common(cluster):
    """The policies' required spec fields. A missing automationStrategyRef is reported on its name, as the
    validator does."""
    rules = [required_rule("automationStrategyRef", field_path=".automationStrategyRef.name")]
    return rules + ([required_rule("scope")] if cluster else [])


def policy_common(cluster, strategy_kind):
    return {
        "automationStrategyRef": obj(f"The {strategy_kind} whose gates, bounds and safety checks apply to "
                                     "workloads this policy manages (API-3). Required.", {
            "name": string(f"Name of the {strategy_kind}" + ("." if cluster else " in this namespace."),
                           max_length=MAX_STRING),
        }, rules=[required_rule("name", nonempty=True)]),
        "scope": scope(cluster),
        "weight": int32("Order among policies of the same priority: higher weight first (SEL-5). Default: `0`.",
                        0, minimum=0),
    }


def policy_status(proactive=False):
    fields = {
        "matchedWorkloads": int64("Number of workloads this policy currently matches.", minimum=0),
        "lastEvaluationTime": timestamp("When the policy was last evaluated." + (
            " Set only when a history evaluation completes (PRO-8)." if proactive else "")),
    }
    if proactive:
        fields["recommendedWorkloads"] = int64("Number of workloads that hold a value of this policy now, from their "
                                               "GPU history or the recommendations ConfigMap (PRO-8).", minimum=0)
    return status("Observed state, written by the engine.", fields)


def proactive_spec(cluster, strategy_kind):
    props = policy_common(cluster, strategy_kind)
    props["safetyChecks"] = obj("History settings.", {
        "maxAnalysisAgeDays": int32("Days of Prometheus history used for recommendations (PRO-2). Must be >= 1. "
                                    "Default: `5`.", 5, minimum=1),
    }, default={})
    return obj("GPU recommendations from Prometheus history and the recommendations ConfigMap (PRO rules).",
               props, rules=required_common(cluster))


def static_containers_rule(path):
    """The validator's check_static_usage for every container entry, as one rule on the container map (see
    map_rule): unknown resource keys, quantities, gpu > 0, others >= 0 (limits.gpu > requests.gpu: validator only)."""
    keys = "[" + ", ".join(cel_str(k) for k in QUANTITY_KEYS) + "]"

    def usage(u):
        block, v = f"self[c].{u}", f"self[c].{u}[r]"
        if u == "requests":
            bad = f"!(r in {keys}) || !{is_qty(v)} || {qty_sign(v)} < (r == 'gpu' ? 1 : 0)"
            msg = (f"!(r in {keys}) ? 'must be one of cpu, memory, gpu' : !{is_qty(v)} ? 'must be a valid quantity' "
                   ": r == 'gpu' ? 'must be > 0' : 'must be >= 0'")
        else:
            # limits.gpu is the KAI-2 burst limit: > 0 like requests.gpu. That it lies above requests.gpu is the
            # validator's check only: comparing two quantities inside this loop exceeds kube-apiserver's CEL cost
            # budget.
            bad = f"!(r in {keys}) || !{is_qty(v)} || {qty_sign(v)} < (r == 'gpu' ? 1 : 0)"
            msg = (f"!(r in {keys}) ? 'must be one of cpu, memory, gpu' : !{is_qty(v)} ? 'must be a valid quantity' "
                   ": r == 'gpu' ? 'must be > 0' : 'must be >= 0'")
        ok = f"(!has({block}) || {block}.all(r, !({bad})))"
        errors = (f"(has({block}) ? {block}.filter(r, {bad}).map(r, {cel_str(path + '.')} + c + "
                  f"{cel_str('.' + u + '.')} + r + ': ' + ({msg})) : [])")
        return ok, errors

    (req_ok, req_errors), (lim_ok, lim_errors) = usage("requests"), usage("limits")
    per_container = first_terms(f"{req_errors} + {lim_errors}", "e")
    return rule(f"self.all(c, {req_ok} && {lim_ok})", "invalid container resources",
                message_expression=first_terms(f"self.map(c, {per_container}).filter(m, m != '')", "l"))


def static_spec(cluster, strategy_kind):
    qty_value = quantity("A requested or limited amount.")
    requests = {"type": "object",
                "description": "Requests to set, by resource: `cpu` (cores), `memory` (bytes) and `gpu` (GPUs, > 0; "
                               "fractions below 1 become KAI `gpu-fraction` in KAI mode).",
                "maxProperties": MAX_RESOURCES, "additionalProperties": copy.deepcopy(qty_value)}
    limits = {"type": "object",
              "description": "Limits to set, by resource: `cpu`, `memory`, and `gpu`: the KAI burst limit "
                             "(`gpu-fraction.limit`, KAI-2), greater than `requests.gpu`; it has an effect only with "
                             "`gpuSharingMode: NvFractions` and a strategy with `kai.fractionLimit.enabled`.",
              "maxProperties": MAX_RESOURCES, "additionalProperties": copy.deepcopy(qty_value)}
    props = policy_common(cluster, strategy_kind)
    props["resources"] = obj("Fixed resource values.", {
        "containers": {"type": "object",
                       "description": "Values per container name; the key `\"*\"` applies to every target container "
                                      "(its gpu only to GPU containers, SEL-8). A named entry overrides `\"*\"` "
                                      "resource by resource.",
                       "maxProperties": MAX_CONTAINERS,
                       "additionalProperties": obj("The values for one container (or `\"*\"`).",
                                                   {"requests": requests, "limits": limits}),
                       "x-kubernetes-validations": [static_containers_rule("spec.resources.containers")]},
    })
    return obj("Fixed cpu, memory and GPU values for matching workloads.", props, rules=required_common(cluster))


def label_name_rule():
    return match_rule(LABEL_NAME_RE, f"must match {LABEL_NAME_RE}", allow_empty=True)


def signal(name, example_metric, interpretation_hint):
    return obj(f"The {name} signal: where to read it and when to resize.", {
        "prometheus": obj("Prometheus metric and label mapping.", {
            "metric": string(f"Metric name (for example `{example_metric}`); a name ending in `_total` is read as a "
                             "counter through rate() (REA-3).",
                             rules=[match_rule(METRIC_RE, f"must match {METRIC_RE}", allow_empty=True)]),
            "interpretation": string("`fullGPU`: values are percent of one whole GPU; `currentAllocation`: percent "
                                     "of the container's current GPU allocation" + interpretation_hint
                                     + ". Default: `fullGPU`.", "fullGPU", enum=["fullGPU", "currentAllocation"]),
            "namespaceLabel": string("Label holding the pod's namespace (for example `namespace`).",
                                     rules=[label_name_rule()]),
            "podLabel": string("Label holding the pod name (for example `pod`).", rules=[label_name_rule()]),
            "containerLabel": string("Label holding the container name (for example `container`).",
                                     rules=[label_name_rule()]),
        }, rules=[required_rule(f, nonempty=True) for f in ["metric", "namespaceLabel", "podLabel",
                                                              "containerLabel"]]),
        "upsize": obj("When and how far to raise the GPU allocation (REA-6).", {
            "thresholdPercent": int32("Upsize when usage reaches this percent of the allocation. Must be >= 1. "
                                      "Default: `120`.", 120, minimum=1),
            "metricsWindow": duration("Window of samples (p95 for compute, max for memory).", "10m", "1m"),
            "headroomPercent": int32("Percent added above observed usage. Must be >= 0. Default: `20`.", 20,
                                     minimum=0),
            "maxPercent": int32("Cap of one increase, in percent of the CURRENT allocation (200 = at most double). "
                                "Must be >= 1. Default: `200`.", 200, minimum=1),
        }, default={}),
        "scaleBack": obj("When and how far to lower the GPU allocation (REA-7).", {
            "thresholdPercent": int32("Scale back when every pod's usage stays below this percent of its allocation. "
                                      "Must be >= 1. Default: `80`.", 80, minimum=1),
            "metricsWindow": duration("Window of samples that must all be low.", "10m", "1m"),
            "headroomPercent": int32("Percent added above observed usage. Must be >= 0. Default: `20`.", 20,
                                     minimum=0),
        }, default={}),
    }, required=["prometheus"])


def reactive_spec(cluster, strategy_kind):
    props = {"experimental": experimental(True)}
    props.update(policy_common(cluster, strategy_kind))
    props["minPodMetricsAge"] = duration(
        "Pods younger than this are not evaluated (REA-2); `0s` disables the check. Must be `0s` or at least `1m`.",
        "15m", extra_rules=[duration_rule("duration(self) == duration('0s') || duration(self) >= duration('1m')",
                                          "must be zero or at least 1m")])
    props["metrics"] = obj("The two GPU signals; both are required.", {
        "compute": signal("compute (SM utilization)", "kubex_gpu_container_sm_utilization_percent", ""),
        "memory": signal("GPU memory", "kubex_gpu_container_memory_footprint_percent",
                         " (KAI memory metrics)"),
    }, required=["compute", "memory"])
    rules = [required_rule("experimental")] + required_common(cluster) + [required_rule("metrics")]
    return obj("Raise and lower GPU allocations from live Prometheus GPU metrics (REA rules).", props, rules=rules)


def consolidation_spec():
    return obj("Drain underused GPU nodes of one compatible pool when their GPU pods fit elsewhere (CON rules).", {
        "experimental": experimental(True),
        "nodeSelector": label_selector("The node pool (required). Use one policy per compatible GPU pool.", True),
        "utilizationThresholdPercent": int32("Nodes whose GPU allocation is below this percent of capacity are drain "
                                             "candidates (1-100). Default: `75`.", 75, 1, 100),
        "requeueAfter": duration("Time between evaluations. Must be at least 1s.", "1m", "1s"),
    }, required=["experimental", "nodeSelector"])


def consolidation_status():
    return status("Observed state of the pool, written by the engine.", {
        "poolNodes": int64("Nodes matching nodeSelector.", minimum=0),
        "gpuCapacity": int64("Allocatable GPUs in the pool.", minimum=0),
        "gpuAllocated": string("GPUs allocated in the pool, with 2 decimals (`1.50`)."),
        "estimatedReclaimableGPUs": int64("capacity - ceil(allocated), at least 0.", minimum=0),
        "drainingNode": string("The node being drained, if any."),
        "drainStartTime": timestamp("When the current drain started."),
        "lastDrainedNode": string("The last node drained to completion."),
        "lastDrainTime": timestamp("When the last drain completed."),
        "lastEvaluationTime": timestamp("When the pool was last evaluated."),
        "gpuModels": array("The GPU products of the pool's nodes (`nvidia.com/gpu.product`; \"\" for nodes "
                           "without the label) with their node counts (CON-5a). Drains stay within one product.",
                           obj("One GPU product.", {
                               "product": string("The nvidia.com/gpu.product label value."),
                               "nodes": int64("Pool nodes of this product.", minimum=0),
                           })),
    })


def global_config_spec():
    interval_1m = "Must be at least 1m."
    compat = {}
    for name in ["rescanInterval", "mutationLogInterval", "snapshotInterval", "heartbeatInterval",
                 "proposalSyncInterval", "kubexAPIRequestTimeout"]:
        compat[name] = string(f"{name}." + NO_EFFECT)
    for name in ["proposalSyncEnabled", "suppressFetchRecommendations", "respectKubexAutomation"]:
        compat[name] = boolean(f"{name}." + NO_EFFECT)
    props = {
        "automationEnabled": boolean("Master switch: `false` stops all admission changes and evictions (ADM-3, "
                                     "ACT-2). Default: `true`.", True),
        "protectedNamespacePatterns": array(
            "Namespaces kubex never manages; shell-style `*` wildcards. Default: `kube-*`, `openshift-*`, `gmp-*`.",
            {"type": "string", "description": "A namespace name or pattern."}, default=["kube-*", "openshift-*",
                                                                                       "gmp-*"]),
        "prometheus": obj("The Prometheus server GPU reactive policies query.", {
            "url": string("Absolute http or https URL of Prometheus. Default: "
                          "`http://kubex-prometheus-server.kubex.svc`.", "http://kubex-prometheus-server.kubex.svc",
                          max_length=MAX_URL,
                          rules=[rule(f"self.matches(r'{URL_RE}')", "must be an absolute http or https URL")]),
            "requestTimeout": duration("Timeout of one Prometheus query. Must be > 0.", "30s", extra_rules=[
                duration_rule("duration(self) > duration('0s')", "must be > 0")]),
        }, default={}),
        "gpuReactiveCheckInterval": duration("How often GPU reactive policies evaluate their workloads (REA-1). "
                                             + interval_1m, "1m", "1m"),
        "recommendationReloadInterval": duration("How often proactive recommendations are recomputed (PRO-1). "
                                                 + interval_1m, "1h", "1m"),
        "webhookOwnerResolutionRetryTimeout": duration(
            "How long admission retries reading a pod's owner from the API server (SEL-2). Must be > 0 and at most "
            "5s.", "1s", extra_rules=[
                duration_rule("duration(self) > duration('0s')", "must be > 0"),
                duration_rule("duration(self) <= duration('5s')", "must be at most 5s")]),
        "webhookHealth": obj("Webhook health probe thresholds (WHH-3).", {
            "failureThreshold": int32("Consecutive failed probes before PodAdmissionWebhookHealthy becomes False. "
                                      "Must be >= 1. Default: `2`.", 2, minimum=1),
            "successThreshold": int32("Consecutive successful probes before it becomes True. Must be >= 1. Default: "
                                      "`3`.", 3, minimum=1),
            "transitionCheckInterval": duration("Time between probes. Must be at least 1s.", "10s", "1s"),
        }, default={}),
        "webhookProbe": obj("Template of the dry-run probe pod (WHH-1).", {
            "image": string("Image of the probe pod. Default: the engine image (set by Helm)."),
            "labels": string_map("Labels of the probe pod."),
            "annotations": string_map("Annotations of the probe pod."),
            "resources": free_object("Container resources of the probe pod (core/v1 ResourceRequirements)."),
            "podSecurityContext": free_object("Pod security context of the probe pod (core/v1 "
                                              "PodSecurityContext)."),
            "securityContext": free_object("Container security context of the probe pod (core/v1 "
                                           "SecurityContext)."),
        }),
        "kai": obj("KAI-Scheduler integration.", {
            "schedulerName": string("spec.schedulerName given to KAI-mutated pods (ADM-13). Default: "
                                    "`kai-scheduler`.", "kai-scheduler",
                                    rules=[rule("self != ''", "required", reason=REQUIRED)]),
            "memoryIsolation": string("Deprecated by `gpuSharingMode`: `HAMiCore` when HAMi-core enforces GPU memory "
                                      "of fractions, else `None` (VLM-3). Default: `None`.", "None",
                                      enum=["None", "HAMiCore"]),
            "gpuSharingMode": string("KAI's `global.gpuSharingMode` (KAI-1): `Disabled` (no fractions: kubex applies "
                                     "whole GPUs), `NonMemoryEnforced` (KAI's default), `HamiCore` (HAMi-core caps "
                                     "memory) or `NvFractions` (KAI >= 0.18.2: requests and burst limits). Absent: "
                                     "derived from `memoryIsolation`.",
                                     enum=["Disabled", "NonMemoryEnforced", "HamiCore", "NvFractions"]),
            "reservationNamespace": string("Namespace of KAI's GPU reservation pods, not counted by consolidation "
                                           "(CON-2). Default: `kai-resource-reservation`.",
                                           "kai-resource-reservation"),
        }, default={}),
        "proactive": obj("Proactive recommendation settings.", {
            "recommendationsConfigMap": obj("ConfigMap with key `recommendations.json` whose entries override "
                                            "history recommendations (PRO-6). Absent by default.", {
                "namespace": string("Namespace of the ConfigMap.", max_length=MAX_STRING),
                "name": string("Name of the ConfigMap.", max_length=MAX_STRING),
            }, rules=[required_rule("namespace", nonempty=True), required_rule("name", nonempty=True)]),
            "headroomPercent": int32("Percent added to the observed GPU usage (PRO-3), 0-100. Default: `20`.", 20,
                                     0, 100),
        }, default={}),
        "consolidation": obj("GPU node consolidation settings.", {
            "gpuMemoryReserve": obj(
                "GPU memory the drivers keep on every GPU (CON-2a): on a node labelled `nvidia.com/gpu.memory` (M "
                "MiB), a GPU is filled only up to floor((M - r) / M x 100) / 100 of a GPU, with r = max(M x "
                "percent / 100, minimum). Setting both to 0 disables the reserve. Used by consolidation and by the "
                "upsize check of actuation (ACT-2a).", {
                    "percent": int32("Reserve in percent of the GPU's memory, 0-50. Default: `3`.", 3, 0, 50),
                    "minimum": dict(quantity("Smallest reserve per GPU. Must be >= 0. Default: `256Mi`."),
                                    default="256Mi"),
                }, default={}, rules=node_rules([
                    ("has(self.minimum) && !" + is_qty("self.minimum"), ".minimum", "must be a valid quantity"),
                    ("has(self.minimum) && " + is_qty("self.minimum") + " && " + qty_sign("self.minimum") + " < 0",
                     ".minimum", "must be >= 0"),
                ])),
        }, default={}),
        "report": obj("What `kubex report` calls idle (RPT-2).", {
            "idle": obj("A workload is idle when it holds at least `minimumGpus` and, over at least 1h of data, its "
                        "p95 SM use stays below `smPercent` % of a GPU and its memory footprint below "
                        "`memoryPercent` % of what it holds.", {
                "smPercent": int32("p95 SM use below this percent of a GPU, 0-100. Default: `5`.", 5, 0, 100),
                "memoryPercent": int32("Max memory footprint below this percent of the GPUs held, 0-100. "
                                       "Default: `10`.", 10, 0, 100),
                "minimumGpus": dict(quantity("Only workloads holding at least this many GPUs can be idle. Must be "
                                             "> 0. Default: `\"0.25\"`."), default="0.25"),
            }, default={}, rules=node_rules([
                ("has(self.minimumGpus) && !" + is_qty("self.minimumGpus"), ".minimumGpus",
                 "must be a valid quantity"),
                ("has(self.minimumGpus) && " + is_qty("self.minimumGpus") + " && " + qty_sign("self.minimumGpus") +
                 " <= 0", ".minimumGpus", "must be > 0"),
            ])),
        }, default={}),
        "cost": obj("GPU prices for `kubex report` (RPT-3).", {
            "gpuHourPrices": array("Prices per GPU-hour: the first entry whose `nodeSelector` matches a node prices "
                                   "that node's GPUs; pods on unpriced nodes have no cost.", obj(
                "One price.", {
                    "nodeSelector": label_selector("The nodes this price applies to (an empty selector matches "
                                                   "every node).", False),
                    "price": string("Price of one GPU for one hour, a decimal string >= 0 (`\"2.50\"`).",
                                    max_length=32,
                                    rules=[rule("self.matches('^[0-9]+([.][0-9]+)?$')", "must be a decimal >= 0")]),
                    "currency": string("Currency printed with the amounts. Default: `USD`.", "USD",
                                       max_length=16, rules=[rule("self != ''", "must not be empty")]),
                }, rules=[required_rule("price")])),
        }),
    }
    props.update(compat)
    return obj("Engine-wide settings. Exactly one object, named `global-config`.", props, default={})


def global_config_status():
    return status("Observed state, written by the engine.", {
        "webhookHealth": obj("Webhook probe results (WHH-3).", {
            "consecutiveFailures": int64("Failed probes in a row.", minimum=0),
            "consecutiveSuccesses": int64("Successful probes in a row.", minimum=0),
            "lastProbeResult": status_string("`Success` or `Failure`.", enum=["Success", "Failure"]),
            "lastProbeTime": timestamp("When the last probe ran."),
        }),
        "recommendationReload": obj("Recommendations ConfigMap reloads (PRO-6).", {
            "lastTime": timestamp("Last successful load."),
            "lastCount": int64("Entries accepted by the last successful load.", minimum=0),
            "lastError": string("The last load error."),
            "lastErrorTime": timestamp("When the last load error happened."),
        }),
    })


def policy_evaluation_spec():
    default = [{"type": "GpuReactivePolicy", "priority": 120}, {"type": "ClusterGpuReactivePolicy", "priority": 110},
               {"type": "StaticPolicy", "priority": 90}, {"type": "ClusterStaticPolicy", "priority": 90},
               {"type": "ProactivePolicy", "priority": 70}, {"type": "ClusterProactivePolicy", "priority": 70}]
    entry = obj("The priority of one policy kind.", {
        "type": string("A policy kind (`StaticPolicy`, `ClusterGpuReactivePolicy`, ...). Unknown kinds are accepted "
                       "and ignored (with a warning).", max_length=MAX_STRING),
        "priority": int32("Priority of the kind; higher wins. Must be >= 0.", minimum=0),
    }, rules=[required_rule("type", nonempty=True), required_rule("priority")])
    return obj("Policy precedence. Exactly one object, named `policy-evaluation`.", {
        "precedence": array("Priorities of policy kinds (SEL-5); a kind missing from the list gets 0. Each type at "
                            "most once. Default: GpuReactivePolicy 120, ClusterGpuReactivePolicy 110, StaticPolicy 90, "
                            "ClusterStaticPolicy 90, ProactivePolicy 70, ClusterProactivePolicy 70.", entry,
                            default=default, rules=[duplicates_rule(
                                "spec.precedence", lambda e: f"(has({e}.type) ? {e}.type : '')",
                                lambda v: f"{v} != ''", suffix=".type")]),
    }, default={})


def singleton_rule(name):
    return [rule(f"self.metadata.name == '{name}'", f"must be \"{name}\"", field_path=".metadata.name")]


# ------------------------------------------------------------------------------------------------ printer columns

def col(name, path, type_="string", description=None, priority=None):
    c = {"name": name, "type": type_, "jsonPath": path}
    if description:
        c["description"] = description
    if priority:
        c["priority"] = priority
    return c


AGE = col("Age", ".metadata.creationTimestamp", "date")


def cond_col(name, type_):
    return col(name, f'.status.conditions[?(@.type=="{type_}")].status', description=f"The {type_} condition.")


STRATEGY_COLS = [col("Mode", ".spec.enablement.overrideScheduler", description="kai or none"),
                 col("Contract", ".spec.experimental.gpuKaiContract"),
                 cond_col("Valid", "Valid"), AGE]
POLICY_COLS = [col("Strategy", ".spec.automationStrategyRef.name"),
               cond_col("Resolved", "AutomationStrategyResolved"), cond_col("Ready", "Ready"),
               col("Matched", ".status.matchedWorkloads", "integer", "Workloads matched"),
               col("Weight", ".spec.weight", "integer", priority=1), AGE]
PROACTIVE_COLS = POLICY_COLS[:4] + [col("Recommended", ".status.recommendedWorkloads", "integer",
                                         "Workloads holding a proactive value")] + POLICY_COLS[4:]
CONSOLIDATION_COLS = [col("Threshold", ".spec.utilizationThresholdPercent", "integer"),
                      cond_col("Available", "Available"),
                      col("Nodes", ".status.poolNodes", "integer"),
                      col("Allocated", ".status.gpuAllocated"),
                      col("Reclaimable", ".status.estimatedReclaimableGPUs", "integer"),
                      col("Draining", ".status.drainingNode"), AGE]
GLOBAL_COLS = [col("Automation", ".spec.automationEnabled", "boolean"),
               cond_col("Webhook", "PodAdmissionWebhookHealthy"), cond_col("Queues", "KaiQueuesReady"),
               cond_col("Recommendations", "RecommendationsLoaded"), AGE]
EVALUATION_COLS = [cond_col("Valid", "Valid"), AGE]


# ------------------------------------------------------------------------------------------------ assembly

def crd(kind, plural, short, namespaced, schema, columns):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}",
                     "labels": {"app.kubernetes.io/name": "kubex-crds", "app.kubernetes.io/part-of": "kubex"}},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": kind.lower(),
                      "shortNames": short, "categories": ["kubex"]},
            "scope": "Namespaced" if namespaced else "Cluster",
            "versions": [{
                "name": "v1alpha1", "served": True, "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    }


def all_crds():
    out = []
    for cluster in (False, True):
        kind = ("Cluster" if cluster else "") + "AutomationStrategy"
        out.append(crd(kind, kind.lower().replace("strategy", "strategies"), ["cas" if cluster else "as"],
                       not cluster,
                       root(f"{kind}: how kubex applies GPU, cpu and memory changes for "
                            + ("cluster policies." if cluster else "policies in its namespace."),
                            strategy_spec(cluster), status("Observed state: the `Valid` condition."), False),
                       STRATEGY_COLS))
    strategy_of = lambda cluster: "ClusterAutomationStrategy" if cluster else "AutomationStrategy"  # noqa: E731
    for base, short, spec_fn, desc in [
        ("ProactivePolicy", "pp", proactive_spec, "GPU recommendations from Prometheus history"),
        ("StaticPolicy", "sp", static_spec, "fixed cpu, memory and GPU values"),
        ("GpuReactivePolicy", "grp", reactive_spec, "GPU allocations that follow live Prometheus metrics"),
    ]:
        for cluster in (False, True):
            kind = ("Cluster" if cluster else "") + base
            where = "workloads in namespaces selected by name" if cluster else "workloads in its namespace"
            out.append(crd(kind, kind.lower().replace("policy", "policies"), [("c" if cluster else "") + short],
                           not cluster, root(f"{kind}: {desc} for {where}.", spec_fn(cluster, strategy_of(cluster)),
                                             policy_status(base == "ProactivePolicy"), True),
                           PROACTIVE_COLS if base == "ProactivePolicy" else POLICY_COLS))
    out.append(crd("GpuConsolidationPolicy", "gpuconsolidationpolicies", ["gcp"], False,
                   root("GpuConsolidationPolicy: drains underused GPU nodes of one pool (experimental).",
                        consolidation_spec(), consolidation_status(), True), CONSOLIDATION_COLS))
    out.append(crd("GlobalConfiguration", "globalconfigurations", ["gconf"], False,
                   root("GlobalConfiguration: engine-wide settings; the one object is named `global-config`.",
                        global_config_spec(), global_config_status(), False, singleton_rule("global-config")),
                   GLOBAL_COLS))
    out.append(crd("PolicyEvaluation", "policyevaluations", ["pe"], False,
                   root("PolicyEvaluation: the priority of each policy kind; the one object is named "
                        "`policy-evaluation`.", policy_evaluation_spec(),
                        status("Observed state: the `Valid` condition."), False, singleton_rule("policy-evaluation")),
                   EVALUATION_COLS))
    return out


class Dumper(yaml.SafeDumper):
    """Never emits anchors/aliases for repeated sub-schemas."""

    def ignore_aliases(self, data):
        return True


def render(doc):
    header = ("# Generated by scripts/gen-crds.py from the rightsizing.kubex.ai/v1alpha1 API (SPEC §1). Do not edit by "
              "hand:\n# change the script, run it, and keep src/api/defaults.cpp in step (tests/unit/api/parity_test.cpp).\n")
    return header + yaml.dump(doc, Dumper=Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True,
                              width=120)


def main():
    out_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else \
        pathlib.Path(__file__).resolve().parents[1] / "charts" / "kubex-crds" / "templates"
    out_dir.mkdir(parents=True, exist_ok=True)
    for doc in all_crds():
        path = out_dir / f"{GROUP}_{doc['spec']['names']['plural']}.yaml"
        path.write_text(render(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
