// Kubernetes protobuf request bodies (DESIGN §5: real kubectl against the sim; its typed commands send
// `application/vnd.kubernetes.protobuf`).
//
// Fixtures in testdata/protobuf/ (each <name>.pb is compared with <name>.json, <name> being the file name up
// to its first '.'):
//   - <generator>.pb: bodies kubectl v1.32 POSTed to a capture server for `kubectl create ...` (namespace,
//     configmap, secret generic and docker-registry, deployment, job, cronjob, pdb, service clusterip,
//     nodeport, loadbalancer and externalname, serviceaccount, quota, priorityclass, role, clusterrole,
//     rolebinding, clusterrolebinding, ingress), `kubectl autoscale`, and `kubectl create job --from=...`
//     of a CronJob (the server answered the GET with a CronJob using most PodSpec fields). The .json is the
//     same command's `--dry-run=client -o json`, unchanged: kubectl prints the typed object it would send and
//     adds nothing client-side that is not also on the wire.
//   - auth_*.pb: bodies of `kubectl auth can-i ...` and `kubectl auth whoami`, captured the same way. These
//     commands have no --dry-run; their .json was written by hand from the Go json tags.
//   - protoc_<kind>.{sparse,dense}.pb: objects encoded by `protoc --encode` with the upstream generated.proto
//     files (v0.32), independently of our tables: "sparse" from a hand-written object, "dense" from the Go
//     normalised object, with every zero field on the wire as Go writes them. The .json is that object
//     normalised by Go: `kubectl set image --local -f <object> -o json '*=nginx:2'` (kubectl decodes the file
//     into the typed struct and prints it; images were nginx:2 in the encoded objects too).
//     protoc_pvc and protoc_eviction have no kubectl command that prints them typed; their .json was written
//     by hand from the Go json tags (null pointer apiGroup, canonical quantities, creationTimestamp null).
#include "sim/apiserver/protobuf.h"

#include "kubex_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::sim {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(kubex_paths::source_dir()) / "tests/unit/sim/apiserver/testdata/protobuf";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> fixture_bodies() {
  std::vector<fs::path> out;
  if (!fs::is_directory(kFixtures)) return out;
  for (const auto& e : fs::directory_iterator(kFixtures)) {
    if (e.path().extension() == ".pb") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- a tiny encoder for hand-made bodies ----

std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string key(std::uint32_t number, std::uint32_t wire) {
  return varint(std::uint64_t{number} << 3 | wire);
}
std::string bytes_field(std::uint32_t number, std::string_view data) {
  return key(number, 2) + varint(data.size()) + std::string(data);
}
std::string varint_field(std::uint32_t number, std::uint64_t v) {
  return key(number, 0) + varint(v);
}
std::string entry(std::string_view k, std::string_view v) {
  return bytes_field(1, k) + bytes_field(2, v);
}

std::string envelope(std::string_view api_version, std::string_view kind, std::string_view raw) {
  std::string type_meta = bytes_field(1, api_version) + bytes_field(2, kind);
  return std::string("k8s\0", 4) + bytes_field(1, type_meta) + bytes_field(2, raw) + bytes_field(3, "") +
         bytes_field(4, "");
}

json decode_ok(std::string_view body) {
  auto r = decode_k8s_protobuf(body);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
  return r ? *r : json();
}

std::string decode_error(std::string_view body) {
  auto r = decode_k8s_protobuf(body);
  EXPECT_FALSE(r.has_value()) << r->dump();
  return r ? "" : r.error().str();
}

// ---- fixtures ----

TEST(ProtobufDecode, FixturesMatchWhatKubectlAndGoProduce) {
  auto bodies = fixture_bodies();
  ASSERT_GE(bodies.size(), 40u) << "fixtures missing under " << kFixtures;
  for (const auto& pb : bodies) {
    std::string name = pb.filename().string();
    SCOPED_TRACE(name);
    fs::path expected_path = kFixtures / (name.substr(0, name.find('.')) + ".json");
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
    json expected = json::parse(read_file(expected_path));
    auto got = decode_k8s_protobuf(read_file(pb));
    ASSERT_TRUE(got.has_value()) << got.error().str();
    EXPECT_EQ(*got, expected) << "diff (expected -> got): " << json::diff(expected, *got).dump();
  }
}

TEST(ProtobufDecode, EveryKubectlGeneratorHasAFixture) {
  std::istringstream names(
      "namespace configmap configmap_binary secret_generic secret_typed secret_docker deployment "
      "deployment_command job job_from_cronjob cronjob pdb_min pdb_max service_clusterip service_nodeport "
      "service_externalname serviceaccount quota priorityclass role clusterrole rolebinding "
      "clusterrolebinding ingress hpa auth_can_i auth_whoami");
  int count = 0;
  for (std::string name; names >> name; ++count) {
    EXPECT_TRUE(fs::exists(kFixtures / (name + ".pb"))) << name;
  }
  EXPECT_EQ(count, 27);
}

TEST(ProtobufDecode, KubectlDeploymentShowsGoZeroValues) {
  json d = decode_ok(read_file(kFixtures / "deployment.pb"));
  EXPECT_EQ(d["apiVersion"], "apps/v1");
  EXPECT_EQ(d["kind"], "Deployment");
  EXPECT_EQ(d["spec"]["replicas"], 3);
  EXPECT_TRUE(d["metadata"]["creationTimestamp"].is_null());
  EXPECT_FALSE(d["metadata"].contains("namespace"));  // "" on the wire, omitempty
  EXPECT_EQ(d["spec"]["strategy"], json::object());
  EXPECT_EQ(d["status"], json::object());
  EXPECT_EQ(d["spec"]["template"]["spec"]["containers"][0]["resources"], json::object());
  EXPECT_EQ(d["spec"]["template"]["spec"]["containers"][0]["ports"][0], json({{"containerPort", 8080}}));
}

TEST(ProtobufDecode, ResultsCanBeDumped) {
  for (const auto& pb : fixture_bodies()) {
    auto r = decode_k8s_protobuf(read_file(pb));
    ASSERT_TRUE(r.has_value()) << pb;
    EXPECT_NO_THROW((void)r->dump()) << pb;
  }
}

// ---- envelope errors ----

TEST(ProtobufDecode, RejectsBodiesWithoutTheMagic) {
  EXPECT_EQ(decode_error(""), "empty data");
  EXPECT_NE(
      decode_error(R"({"apiVersion":"v1","kind":"Namespace"})").find("does not appear to be a protobuf"),
      std::string::npos);
  EXPECT_NE(decode_error("k8s").find("does not appear to be a protobuf"), std::string::npos);
  EXPECT_NE(decode_error(std::string("k8s\1", 4) + "xx").find("does not appear"), std::string::npos);
  EXPECT_EQ(decode_error(std::string("k8s\0", 4)), "empty body");
  EXPECT_FALSE(has_k8s_protobuf_magic("k8s"));
  EXPECT_TRUE(has_k8s_protobuf_magic(std::string("k8s\0\x0a", 5)));
}

TEST(ProtobufDecode, UnsupportedKindErrorNamesIt) {
  std::string e = decode_error(envelope("example.com/v1", "Widget", ""));
  EXPECT_NE(e.find("Widget"), std::string::npos) << e;
  EXPECT_NE(e.find("example.com/v1"), std::string::npos) << e;
  e = decode_error(envelope("apps/v1beta1", "Deployment", ""));
  EXPECT_NE(e.find("apps/v1beta1, Kind=Deployment"), std::string::npos) << e;
}

TEST(ProtobufDecode, MissingKindOrVersionIsAnError) {
  EXPECT_NE(decode_error(envelope("v1", "", "")).find("Kind"), std::string::npos);
  EXPECT_NE(decode_error(envelope("", "Namespace", "")).find("apiVersion"), std::string::npos);
  EXPECT_NE(decode_error(std::string("k8s\0", 4) + bytes_field(2, "")).find("Kind"), std::string::npos);
}

TEST(ProtobufDecode, EmptyRawGivesTheZeroObject) {
  EXPECT_EQ(decode_ok(envelope("v1", "Namespace", "")),
            json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
      "metadata": {"creationTimestamp": null}, "spec": {}, "status": {}})"));
  // Non-pointer fields without omitempty: null selector (pointer), null containers (nil slice), zero structs.
  json d = decode_ok(envelope("apps/v1", "Deployment", ""));
  EXPECT_TRUE(d["spec"]["selector"].is_null());
  EXPECT_TRUE(d["spec"]["template"]["spec"]["containers"].is_null());
  EXPECT_FALSE(d["spec"].contains("replicas"));
  EXPECT_EQ(decode_ok(envelope("policy/v1", "PodDisruptionBudget", ""))["status"],
            json::parse(
                R"({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0})"));
  EXPECT_EQ(decode_ok(envelope("scheduling.k8s.io/v1", "PriorityClass", ""))["value"], 0);
}

TEST(ProtobufDecode, EnvelopeExtrasAreIgnored) {
  std::string type_meta = bytes_field(1, "v1") + bytes_field(2, "ConfigMap") + varint_field(7, 1);
  std::string raw = bytes_field(2, entry("a", "1"));
  std::string body = std::string("k8s\0", 4) + bytes_field(3, "gzip?") + bytes_field(1, type_meta) +
                     bytes_field(2, raw) + bytes_field(4, "application/vnd.kubernetes.protobuf") +
                     varint_field(9, 5);
  EXPECT_EQ(decode_ok(body)["data"], json({{"a", "1"}}));
}

// ---- malformed wire data ----

TEST(ProtobufDecode, TruncatedVarintsAndLengthsAreErrors) {
  std::string magic("k8s\0", 4);
  decode_error(magic + "\x0a");                          // key, no length
  decode_error(magic + "\x0a\xff");                      // length varint cut
  decode_error(magic + "\x0a\x05" + "ab");               // length past the end
  decode_error(magic + "\x80");                          // key varint cut
  decode_error(magic + std::string(11, '\xff'));         // varint longer than 64 bits
  decode_error(magic + key(5, 0));                       // unknown varint field, value missing
  decode_error(magic + key(5, 1) + "1234");              // unknown fixed64 field cut
  decode_error(magic + key(5, 5) + "12");                // unknown fixed32 field cut
  decode_error(magic + key(5, 2) + "\x03" + "ab");       // unknown bytes field past the end
  decode_error(magic + key(5, 3) + key(1, 0) + "\x01");  // group never closed
  decode_error(magic + "\x00\x00");                      // field number 0
  decode_error(magic + key(1, 4));                       // end group without start
  decode_error(magic + key(5, 6));                       // wire type 6
  decode_error(magic + key(1, 0) + "\x01");              // typeMeta as a varint
  // Inside raw: a Deployment whose spec length runs past the end of raw.
  decode_error(envelope("apps/v1", "Deployment", bytes_field(2, varint_field(1, 3)).substr(0, 3)));
}

TEST(ProtobufDecode, EveryTruncationOfAFixtureIsHandled) {
  for (const auto& pb : fixture_bodies()) {
    std::string body = read_file(pb);
    SCOPED_TRACE(pb.filename().string());
    // kubectl and our protoc bodies end with empty contentEncoding and contentType fields.
    ASSERT_EQ(body.substr(body.size() - 4), std::string("\x1a\x00\x22\x00", 4));
    // Where raw starts: magic, typeMeta key, one length byte, typeMeta.
    std::size_t raw_start = 4 + 2 + static_cast<unsigned char>(body[5]);
    ASSERT_EQ(body[raw_start], '\x12');
    for (std::size_t n = 0; n < body.size(); ++n) {
      auto r = decode_k8s_protobuf(std::string_view(body).substr(0, n));
      if (n > raw_start && n < body.size() - 4) {
        EXPECT_FALSE(r.has_value()) << "prefix of " << n << " bytes decoded";
      }
      if (r) {
        EXPECT_NO_THROW((void)r->dump());
      }
    }
  }
}

TEST(ProtobufDecode, WrongWireTypeForAKnownFieldNamesTheField) {
  std::string spec = bytes_field(1, "\x03");  // replicas as bytes
  std::string e = decode_error(envelope("apps/v1", "Deployment", bytes_field(2, spec)));
  EXPECT_NE(e.find("spec.replicas"), std::string::npos) << e;
  std::string container = varint_field(1, 1);  // name as varint
  std::string pod_spec = bytes_field(2, container);
  e = decode_error(envelope("v1", "Pod", bytes_field(2, pod_spec)));
  EXPECT_NE(e.find("spec.containers[0].name"), std::string::npos) << e;
}

TEST(ProtobufDecode, BadQuantityIntOrStringAndTimeAreErrors) {
  std::string hard = bytes_field(1, entry("cpu", bytes_field(1, "one")));
  std::string e = decode_error(envelope("v1", "ResourceQuota", bytes_field(2, hard)));
  EXPECT_NE(e.find("one"), std::string::npos) << e;
  EXPECT_NE(e.find("spec.hard"), std::string::npos) << e;
  decode_error(
      envelope("v1", "ResourceQuota", bytes_field(2, bytes_field(1, entry("cpu", bytes_field(1, ""))))));
  e = decode_error(
      envelope("v1", "ResourceQuota", bytes_field(2, bytes_field(1, entry("cpu", bytes_field(1, "1\xff"))))));
  EXPECT_NE(e.find("1\xef\xbf\xbd"), std::string::npos) << e;  // quoted, as valid UTF-8

  std::string pdb_spec = bytes_field(1, varint_field(1, 2));  // minAvailable with IntOrString type 2
  e = decode_error(envelope("policy/v1", "PodDisruptionBudget", bytes_field(2, pdb_spec)));
  EXPECT_NE(e.find("IntOrString"), std::string::npos) << e;

  std::string meta = bytes_field(8, varint_field(1, 253402300800));  // year 10000
  decode_error(envelope("v1", "Namespace", bytes_field(1, meta)));
  meta = bytes_field(8, varint_field(1, static_cast<std::uint64_t>(-62167219201LL)));  // year -1
  decode_error(envelope("v1", "Namespace", bytes_field(1, meta)));
}

// ---- semantics ----

TEST(ProtobufDecode, UnknownFieldsOfEveryWireTypeAreSkipped) {
  std::string unknown = varint_field(99, 7) + key(98, 1) + "12345678" + key(97, 5) + "1234" +
                        bytes_field(96, "zz") + key(95, 3) + varint_field(1, 1) + key(94, 3) + key(94, 4) +
                        key(95, 4);
  std::string spec = unknown + varint_field(1, 2) + unknown;
  json d = decode_ok(envelope("apps/v1", "Deployment", bytes_field(2, spec) + unknown));
  EXPECT_EQ(d["spec"]["replicas"], 2);
}

TEST(ProtobufDecode, PointerFieldsKeepZeroValuesOmitEmptyFieldsDropThem) {
  std::string spec = varint_field(1, 0) + varint_field(5, 0) + varint_field(7, 0) + varint_field(6, 0);
  json s = decode_ok(envelope("apps/v1", "Deployment", bytes_field(2, spec)))["spec"];
  EXPECT_EQ(s["replicas"], 0);              // *int32
  EXPECT_EQ(s["revisionHistoryLimit"], 0);  // *int32
  EXPECT_FALSE(s.contains("minReadySeconds"));
  EXPECT_FALSE(s.contains("paused"));
  // An empty map entry is the entry {"": ""}; maps not on the wire are omitted.
  std::string meta = bytes_field(11, "") + bytes_field(1, "");
  json m = decode_ok(envelope("v1", "Namespace", bytes_field(1, meta)))["metadata"];
  EXPECT_EQ(m, json::parse(R"({"labels": {"": ""}, "creationTimestamp": null})"));
}

TEST(ProtobufDecode, RepeatedFieldsAppendAndMessagesMerge) {
  std::string meta1 = bytes_field(1, "first") + bytes_field(11, entry("a", "1")) + bytes_field(14, "f1");
  std::string meta2 = bytes_field(1, "second") + bytes_field(11, entry("b", "2")) + bytes_field(14, "f2");
  json m = decode_ok(envelope("v1", "Namespace", bytes_field(1, meta1) + bytes_field(1, meta2)))["metadata"];
  EXPECT_EQ(m["name"], "second");
  EXPECT_EQ(m["labels"], json({{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(m["finalizers"], json({"f1", "f2"}));
}

TEST(ProtobufDecode, PackedAndUnpackedRepeatedIntegersDecodeAlike) {
  auto body = [](const std::string& values) {
    std::string exit_codes = bytes_field(2, "In") + values;
    std::string rule = bytes_field(1, "FailJob") + bytes_field(2, exit_codes);
    std::string spec = bytes_field(11, bytes_field(1, rule));
    return envelope("batch/v1", "Job", bytes_field(2, spec));
  };
  std::string packed = bytes_field(3, varint(1) + varint(300) + varint(static_cast<std::uint64_t>(-2LL)));
  std::string unpacked =
      varint_field(3, 1) + varint_field(3, 300) + varint_field(3, static_cast<std::uint64_t>(-2LL));
  json a = decode_ok(body(packed));
  json b = decode_ok(body(unpacked));
  json want = json::parse(R"({"operator": "In", "values": [1, 300, -2]})");
  EXPECT_EQ(a["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"], want);
  EXPECT_EQ(a, b);
  decode_error(body(bytes_field(3, "\x80")));  // packed varint cut
}

TEST(ProtobufDecode, IntegersTruncateLikeGo) {
  // PriorityClass.value is int32: a 64-bit varint keeps its low 32 bits.
  json p = decode_ok(envelope("scheduling.k8s.io/v1", "PriorityClass", varint_field(2, 0x1'0000'0005ULL)));
  EXPECT_EQ(p["value"], 5);
  p = decode_ok(
      envelope("scheduling.k8s.io/v1", "PriorityClass", varint_field(2, static_cast<std::uint64_t>(-7LL))));
  EXPECT_EQ(p["value"], -7);
  json ns = decode_ok(
      envelope("v1", "Namespace", bytes_field(1, varint_field(7, static_cast<std::uint64_t>(-1LL)))));
  EXPECT_EQ(ns["metadata"]["generation"], -1);
}

TEST(ProtobufDecode, TimesAreWholeSecondsInUtc) {
  auto created = [](const std::string& time_message) {
    return decode_ok(envelope("v1", "Namespace",
                              bytes_field(1, bytes_field(8, time_message))))["metadata"]["creationTimestamp"];
  };
  EXPECT_EQ(created(varint_field(1, 1714979289) + varint_field(2, 999)), "2024-05-06T07:08:09Z");
  EXPECT_TRUE(created("").is_null());
  EXPECT_EQ(created(varint_field(2, 5)), "1970-01-01T00:00:00Z");  // non-empty: Unix(0), not the zero time
  EXPECT_TRUE(created(varint_field(1, static_cast<std::uint64_t>(-62135596800LL))).is_null());  // 0001-01-01
  EXPECT_EQ(created(varint_field(1, static_cast<std::uint64_t>(-62167219200LL))), "0000-01-01T00:00:00Z");
  EXPECT_EQ(created(varint_field(1, 253402300799)), "9999-12-31T23:59:59Z");
  EXPECT_EQ(created(varint_field(1, 951782400)), "2000-02-29T00:00:00Z");
  EXPECT_EQ(created(varint_field(1, static_cast<std::uint64_t>(-1LL))), "1969-12-31T23:59:59Z");
}

TEST(ProtobufDecode, QuantitiesAreStoredAsKubeApiserverWritesThem) {
  std::string hard = bytes_field(1, entry("cpu", bytes_field(1, "0.5"))) +
                     bytes_field(1, entry("memory", bytes_field(1, "1024Mi"))) +
                     bytes_field(1, entry("pods", ""));
  json q = decode_ok(envelope("v1", "ResourceQuota", bytes_field(2, hard)));
  EXPECT_EQ(q["spec"]["hard"], json::parse(R"({"cpu": "500m", "memory": "1Gi", "pods": "0"})"));
}

TEST(ProtobufDecode, IntOrStringAndBytes) {
  std::string pdb_spec = bytes_field(1, varint_field(1, 1) + bytes_field(3, "30%")) +
                         bytes_field(3, varint_field(2, static_cast<std::uint64_t>(-1LL)));
  json s = decode_ok(envelope("policy/v1", "PodDisruptionBudget", bytes_field(2, pdb_spec)))["spec"];
  EXPECT_EQ(s["minAvailable"], "30%");
  EXPECT_EQ(s["maxUnavailable"], -1);
  json secret = decode_ok(
      envelope("v1", "Secret",
               bytes_field(2, entry("k", std::string("\0\xff", 2))) + bytes_field(2, entry("empty", ""))));
  EXPECT_EQ(secret["data"], json::parse(R"({"k": "AP8=", "empty": ""})"));
}

TEST(ProtobufDecode, InvalidUtf8BecomesReplacementCharacters) {
  std::string meta = bytes_field(1,
                                 "a\xff"
                                 "b") +
                     bytes_field(11, entry("k\xc0", "\xed\xa0\x80ok\xe2\x98\x83"));
  json m = decode_ok(envelope("v1", "Namespace", bytes_field(1, meta)))["metadata"];
  EXPECT_EQ(m["name"],
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(m["labels"], json({{"k\xef\xbf\xbd", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdok\xe2\x98\x83"}}));
  EXPECT_NO_THROW((void)m.dump());
  // One U+FFFD per byte that does not start a valid sequence, as Go's utf8.DecodeRune consumes them.
  auto name = [](std::string_view raw) {
    return decode_ok(envelope("v1", "Namespace", bytes_field(1, bytes_field(1, raw))))["metadata"]["name"]
        .get<std::string>();
  };
  const std::string r = "\xef\xbf\xbd";
  EXPECT_EQ(name("\xc0\x80"), r + r);                                               // overlong NUL
  EXPECT_EQ(name("\xf4\x90\x80\x80"), r + r + r + r);                               // past U+10FFFF
  EXPECT_EQ(name("x\xe2\x98"), "x" + r + r);                                        // cut sequence
  EXPECT_EQ(name("\xf0\x9f\x98\x80\xdf\xbf\x7f"), "\xf0\x9f\x98\x80\xdf\xbf\x7f");  // valid 4, 2, 1 bytes
}

TEST(ProtobufDecode, InlineStructsLandInTheParentObject) {
  std::string volume =
      bytes_field(1, "cfg") + bytes_field(2, bytes_field(19, bytes_field(1, bytes_field(1, "app"))));
  std::string pod_spec = bytes_field(1, volume) + bytes_field(2, bytes_field(1, "c"));
  json spec = decode_ok(envelope("v1", "Pod", bytes_field(2, pod_spec)))["spec"];
  EXPECT_EQ(spec["volumes"], json::parse(R"([{"name": "cfg", "configMap": {"name": "app"}}])"));
  EXPECT_EQ(spec["containers"], json::parse(R"([{"name": "c", "resources": {}}])"));
}

TEST(ProtobufDecode, DeleteOptionsFromATypedClient) {  // helm uninstall: client-go sends DELETE bodies as protobuf
  std::string raw = std::string("\x08\x00", 2) + "\x22\x0a" + "Background";  // gracePeriodSeconds 0, propagation
  auto r = decode_k8s_protobuf(envelope("v1", "DeleteOptions", raw));
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ((*r)["kind"], "DeleteOptions");
  EXPECT_EQ((*r)["gracePeriodSeconds"], 0);
  EXPECT_EQ((*r)["propagationPolicy"], "Background");
}

// ---- robustness ----

TEST(ProtobufDecode, RandomBytesNeverCrash) {
  std::mt19937 rng(20241129);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> len(0, 96);
  auto kinds = protobuf_kinds();
  int decoded = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string noise;
    for (int n = len(rng); n > 0; --n) noise += static_cast<char>(byte(rng));
    // Half straight after the magic, half as the raw message of a real kind (to reach the message decoder).
    const auto& k = kinds[static_cast<std::size_t>(i) % kinds.size()];
    std::string body = i % 2 == 0 ? std::string("k8s\0", 4) + noise : envelope(k.api_version, k.kind, noise);
    common::Result<json> r;
    ASSERT_NO_THROW(r = decode_k8s_protobuf(body)) << i;
    if (!r) {
      EXPECT_NO_THROW((void)json(r.error().str()).dump()) << i;  // error texts are UTF-8 as well
    }
    if (r) {
      ++decoded;
      EXPECT_NO_THROW((void)r->dump()) << i;
    }
  }
  EXPECT_GT(decoded, 0);  // some noise is valid protobuf: the loop reached the table-driven decoder
}

TEST(ProtobufDecode, MutatedFixturesNeverCrash) {
  auto bodies = fixture_bodies();
  ASSERT_FALSE(bodies.empty());
  std::vector<std::string> data;
  for (const auto& p : bodies) data.push_back(read_file(p));
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string body = data[static_cast<std::size_t>(i) % data.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      std::size_t pos = 4 + rng() % (body.size() - 4);
      switch (rng() % 3) {
        case 0:
          body[pos] = static_cast<char>(rng());
          break;
        case 1:
          body.erase(pos, 1 + rng() % 8);
          break;
        default:
          body.insert(pos, 1, static_cast<char>(rng()));
          break;
      }
      if (body.size() <= 4) body = data[0];
    }
    common::Result<json> r;
    ASSERT_NO_THROW(r = decode_k8s_protobuf(body)) << i;
    if (!r) {
      EXPECT_NO_THROW((void)json(r.error().str()).dump()) << i;  // error texts are UTF-8 as well
    }
    if (r) {
      EXPECT_NO_THROW((void)r->dump()) << i;
    }
  }
}

// ---- the tables themselves ----

void check_message(const ProtoMessage& m, std::set<const ProtoMessage*>& seen) {
  if (!seen.insert(&m).second) return;
  SCOPED_TRACE(std::string(m.name));
  std::set<std::uint32_t> numbers;
  std::set<std::string_view> names;
  // JSON names of the message including those of inline structs, which share the object.
  auto collect = [&](auto&& self, const ProtoMessage& msg) -> void {
    for (const auto& f : msg.fields) {
      if (f.type == ProtoType::kInline) {
        self(self, *f.message);
      } else {
        EXPECT_TRUE(names.insert(f.json_name).second) << "duplicate JSON name " << f.json_name;
      }
    }
  };
  collect(collect, m);
  for (const auto& f : m.fields) {
    EXPECT_TRUE(numbers.insert(f.number).second) << "duplicate field number " << f.number;
    EXPECT_GT(f.number, 0u);
    bool nested = f.type == ProtoType::kMessage || f.type == ProtoType::kInline;
    EXPECT_EQ(nested, f.message != nullptr) << f.json_name;
    if (f.type == ProtoType::kInline) {
      EXPECT_FALSE(f.repeated);
    }
    // A Go struct value is never omitted; only pointers (kOptional/kNullable) can be.
    if (nested && !f.repeated) {
      EXPECT_NE(f.presence, ProtoPresence::kOmitEmpty) << f.json_name;
    }
    if (f.message != nullptr) check_message(*f.message, seen);
  }
}

TEST(ProtobufDecode, TablesAreConsistent) {
  std::set<const ProtoMessage*> seen;
  std::set<std::pair<std::string_view, std::string_view>> kinds;
  for (const auto& k : protobuf_kinds()) {
    EXPECT_TRUE(kinds.insert({k.api_version, k.kind}).second) << k.kind;
    ASSERT_NE(k.message, nullptr) << k.kind;
    EXPECT_EQ(find_protobuf_kind(k.api_version, k.kind), k.message);
    ASSERT_FALSE(k.message->fields.empty());
    check_message(*k.message, seen);
    if (k.kind == "DeleteOptions") continue;  // an options kind, sent as a request body only
    // Every top-level object kind has metadata as field 1.
    EXPECT_EQ(k.message->fields[0].number, 1u);
    EXPECT_EQ(k.message->fields[0].json_name, "metadata");
  }
  EXPECT_GT(seen.size(), 80u);
  EXPECT_EQ(find_protobuf_kind("v1", "Deployment"), nullptr);
}

}  // namespace
}  // namespace kubex::sim
