// Kubernetes protobuf request bodies (`Content-Type: application/vnd.kubernetes.protobuf`), which kubectl's
// typed commands (`kubectl create namespace|configmap|secret|deployment|job|cronjob|service|...`) send.
//
// The body is the magic "k8s\0" followed by a runtime.Unknown envelope: typeMeta(1){apiVersion(1), kind(2)},
// raw(2) (the object's own message), contentEncoding(3), contentType(4). decode_k8s_protobuf turns it into
// the JSON object kube-apiserver would have decoded: the typed Go object marshalled by encoding/json, so
// non-pointer fields without `omitempty` always appear (`"creationTimestamp": null`, `"status": {}`,
// `"containers": null`), pointer fields appear exactly when they were on the wire (`"replicas": 0`), and
// `omitempty` scalars only when non-zero. Fields the tables do not know are skipped, as any unknown field.
//
// The decoder is table driven: every supported kind maps to a ProtoMessage, a list of ProtoFields. The
// tables live in protobuf_types.cpp; the types are declared here so tests can check the tables themselves.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string_view>

#include "common/result.h"

namespace kubex::sim {

// Decodes a Kubernetes protobuf request body into the JSON object kube-apiserver would have decoded, with
// `apiVersion` and `kind` taken from the envelope. Errors: no magic, empty body, malformed wire data
// (truncated varint or length, wrong wire type for a known field, invalid quantity), and kinds without a
// table ("protobuf decoding of batch/v1 Foo is not supported"). Never throws; strings that are not valid
// UTF-8 have each bad byte replaced by U+FFFD, as Go's encoding/json does, so the result can be dumped; error
// texts quote input only after the same replacement.
common::Result<nlohmann::json> decode_k8s_protobuf(std::string_view body);

// True when `body` starts with the "k8s\0" magic of a Kubernetes protobuf message.
bool has_k8s_protobuf_magic(std::string_view body);

// ---- Descriptor tables ----

// How one field is encoded on the wire and rendered in JSON.
enum class ProtoType : std::uint8_t {
  kString,       // wire 2; UTF-8 checked
  kInt32,        // varint, truncated to 32 bits like Go's int32
  kInt64,        // varint
  kBool,         // varint, non-zero is true
  kBytes,        // wire 2; JSON base64 (Go []byte)
  kMessage,      // wire 2; `message` describes it
  kInline,       // wire 2; a Go struct embedded with `json:",inline"`: its fields land in the parent object
  kStringMap,    // map<string, string>: repeated {key(1), value(2)} entries
  kBytesMap,     // map<string, bytes>: values base64 in JSON
  kQuantity,     // resource.Quantity {string(1)}, JSON as kube-apiserver would store it
  kQuantityMap,  // map<string, Quantity> (core/v1 ResourceList)
  kIntOrString,  // intstr.IntOrString {type(1), intVal(2), strVal(3)}, JSON number or string
  kTime,         // metav1.Time {seconds(1), nanos(2)}, JSON RFC 3339 in seconds, null when zero
};

// When a field appears in the JSON object (the Go field's shape and json tag).
enum class ProtoPresence : std::uint8_t {
  kOmitEmpty,  // non-pointer scalar, list or map with `omitempty`: only when not zero/empty
  kOptional,   // pointer with `omitempty`: exactly when on the wire, zero values included
  kAlways,     // struct, or scalar/list/map without `omitempty`: always, Go's zero value when absent
  kNullable,   // pointer without `omitempty`: the value when on the wire, else null
};

struct ProtoMessage;

struct ProtoField {
  std::uint32_t number = 0;
  std::string_view json_name;  // ignored for kInline
  ProtoType type = ProtoType::kString;
  ProtoPresence presence = ProtoPresence::kOmitEmpty;
  bool repeated = false;
  const ProtoMessage* message = nullptr;  // kMessage and kInline
};

struct ProtoMessage {
  std::string_view name;  // Go type, e.g. "core/v1.PodSpec" (for error messages and tests)
  std::span<const ProtoField> fields;
};

// A top-level kind: the envelope's apiVersion and kind select the message of `raw`.
struct ProtoKind {
  std::string_view api_version;
  std::string_view kind;
  const ProtoMessage* message = nullptr;
};

// Every supported kind.
std::span<const ProtoKind> protobuf_kinds();
// nullptr when (api_version, kind) has no table.
const ProtoMessage* find_protobuf_kind(std::string_view api_version, std::string_view kind);

}  // namespace kubex::sim
