// Wire-format decoder for Kubernetes protobuf request bodies; the per-kind tables are in protobuf_types.cpp.
#include "sim/apiserver/protobuf.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/base64.h"
#include "common/quantity.h"

namespace kubex::sim {
namespace {

using common::Error;
using common::fail;
using common::Result;
using nlohmann::json;

constexpr std::string_view kMagic{"k8s\0", 4};

enum WireType : std::uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};

// Prefixes the path of an error that came up from inside field `name` (element `index` when >= 0).
Error nest(Error e, std::string_view name, long long index = -1) {
  std::string prefix(name);
  if (index >= 0) prefix += "[" + std::to_string(index) + "]";
  e.path = e.path.empty() ? prefix : (e.path.front() == '[' ? prefix + e.path : prefix + "." + e.path);
  return e;
}

// A cursor over one message's bytes. Every read checks the remaining length.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }

  Result<std::uint64_t> varint() {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return fail("unexpected end of data in varint");
      auto b = static_cast<unsigned char>(data_[pos_++]);
      value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return value;
    }
    return fail("varint overflows 64 bits");
  }

  Result<std::string_view> bytes() {
    auto len = varint();
    if (!len) return std::unexpected(len.error());
    if (*len > data_.size() - pos_)
      return fail("length " + std::to_string(*len) + " runs past the end of data");
    std::string_view out = data_.substr(pos_, static_cast<std::size_t>(*len));
    pos_ += static_cast<std::size_t>(*len);
    return out;
  }

  Result<void> advance(std::size_t n) {
    if (n > data_.size() - pos_) return fail("unexpected end of data in fixed-size field");
    pos_ += n;
    return {};
  }

  // Reads a field key: number and wire type.
  Result<std::pair<std::uint32_t, std::uint32_t>> key() {
    auto k = varint();
    if (!k) return std::unexpected(k.error());
    std::uint64_t number = *k >> 3;
    auto wire = static_cast<std::uint32_t>(*k & 7);
    if (number == 0 || number > 0x1fffffff) return fail("illegal field number " + std::to_string(number));
    if (wire == kEndGroup) return fail("end group without a start group");
    if (wire > kFixed32) return fail("illegal wire type " + std::to_string(wire));
    return std::pair{static_cast<std::uint32_t>(number), wire};
  }

  // Skips the value of a field whose key has been read (nested groups included).
  Result<void> skip(std::uint32_t wire) {
    int depth = 0;
    while (true) {
      Result<void> r;
      switch (wire) {
        case kVarint: {
          auto v = varint();
          if (!v) return std::unexpected(v.error());
          break;
        }
        case kFixed64:
          r = advance(8);
          break;
        case kLengthDelimited: {
          auto b = bytes();
          if (!b) return std::unexpected(b.error());
          break;
        }
        case kFixed32:
          r = advance(4);
          break;
        case kStartGroup:
          ++depth;
          break;
        case kEndGroup:
          --depth;
          break;
        default:
          return fail("illegal wire type " + std::to_string(wire));
      }
      if (!r) return r;
      if (depth == 0) return {};
      auto k = varint();
      if (!k) return std::unexpected(k.error());
      if ((*k >> 3) == 0) return fail("illegal field number 0");
      wire = static_cast<std::uint32_t>(*k & 7);
    }
  }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

// Length of the valid UTF-8 sequence at s[i] (no overlong forms, surrogates or code points past U+10FFFF),
// or 0 when s[i] does not start one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned c = at(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xbf;  // range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  }
  return n;
}

// Go's encoding/json writes each byte that does not start a valid UTF-8 sequence as U+FFFD.
std::string to_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool is_varint_type(ProtoType t) {
  return t == ProtoType::kInt32 || t == ProtoType::kInt64 || t == ProtoType::kBool;
}

json varint_value(ProtoType t, std::uint64_t v) {
  switch (t) {
    case ProtoType::kInt32:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case ProtoType::kBool:
      return v != 0;
    default:
      return static_cast<std::int64_t>(v);
  }
}

// resource.Quantity {string(1)}: kube-apiserver parses the text and writes back its own form of it.
Result<json> quantity_value(std::string_view data) {
  Reader r(data);
  std::string text;
  bool seen = false;
  while (!r.done()) {
    auto k = r.key();
    if (!k) return std::unexpected(k.error());
    if (k->first != 1) {
      if (auto s = r.skip(k->second); !s) return std::unexpected(s.error());
      continue;
    }
    if (k->second != kLengthDelimited) return fail("wrong wire type for quantity string");
    auto b = r.bytes();
    if (!b) return std::unexpected(b.error());
    text.assign(*b);
    seen = true;
  }
  if (!seen) return json("0");
  auto q = common::Quantity::parse(text);
  if (!q) return fail(to_utf8(q.error().message));  // names the quantity, which may not be UTF-8
  return json(q->str());
}

// intstr.IntOrString {type(1), intVal(2), strVal(3)}.
Result<json> int_or_string_value(std::string_view data) {
  Reader r(data);
  std::int64_t type = 0;
  std::int32_t int_val = 0;
  std::string str_val;
  while (!r.done()) {
    auto k = r.key();
    if (!k) return std::unexpected(k.error());
    auto [number, wire] = *k;
    if (number == 1 || number == 2) {
      if (wire != kVarint) return fail("wrong wire type for int-or-string field " + std::to_string(number));
      auto v = r.varint();
      if (!v) return std::unexpected(v.error());
      if (number == 1)
        type = static_cast<std::int64_t>(*v);
      else
        int_val = static_cast<std::int32_t>(static_cast<std::uint32_t>(*v));
    } else if (number == 3) {
      if (wire != kLengthDelimited) return fail("wrong wire type for int-or-string field 3");
      auto b = r.bytes();
      if (!b) return std::unexpected(b.error());
      str_val = to_utf8(*b);
    } else if (auto s = r.skip(wire); !s) {
      return std::unexpected(s.error());
    }
  }
  if (type == 0) return json(int_val);
  if (type == 1) return json(std::move(str_val));
  return fail("impossible IntOrString.Type " + std::to_string(type));
}

// metav1.Time {seconds(1), nanos(2)}. Empty bytes are the zero time (JSON null); like apimachinery the
// nanoseconds are dropped, and JSON shows whole seconds in UTC.
Result<json> time_value(std::string_view data) {
  if (data.empty()) return json(nullptr);
  Reader r(data);
  std::int64_t seconds = 0;
  while (!r.done()) {
    auto k = r.key();
    if (!k) return std::unexpected(k.error());
    auto [number, wire] = *k;
    if (number == 1 || number == 2) {
      if (wire != kVarint) return fail("wrong wire type for time field " + std::to_string(number));
      auto v = r.varint();
      if (!v) return std::unexpected(v.error());
      if (number == 1) seconds = static_cast<std::int64_t>(*v);
    } else if (auto s = r.skip(wire); !s) {
      return std::unexpected(s.error());
    }
  }
  constexpr std::int64_t kGoZeroTime = -62135596800;  // 0001-01-01T00:00:00Z, Go's zero time
  constexpr std::int64_t kYear0 = -62167219200;       // 0000-01-01T00:00:00Z
  constexpr std::int64_t kYear10000 = 253402300800;   // 10000-01-01T00:00:00Z
  if (seconds == kGoZeroTime) return json(nullptr);
  if (seconds < kYear0 || seconds >= kYear10000) {
    return fail("time " + std::to_string(seconds) + "s since the epoch is outside years 0000-9999");
  }
  std::int64_t days = seconds / 86400;
  std::int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60), static_cast<int>(rem % 60));
  return json(buf);
}

// One {key(1), value(2)} entry of a map field.
Result<std::pair<std::string, json>> map_entry(std::string_view data, ProtoType type) {
  Reader r(data);
  std::string key;
  json value = type == ProtoType::kQuantityMap ? json("0") : json("");
  while (!r.done()) {
    auto k = r.key();
    if (!k) return std::unexpected(k.error());
    auto [number, wire] = *k;
    if (number != 1 && number != 2) {
      if (auto s = r.skip(wire); !s) return std::unexpected(s.error());
      continue;
    }
    if (wire != kLengthDelimited)
      return fail("wrong wire type for map entry field " + std::to_string(number));
    auto b = r.bytes();
    if (!b) return std::unexpected(b.error());
    if (number == 1) {
      key = to_utf8(*b);
    } else if (type == ProtoType::kStringMap) {
      value = to_utf8(*b);
    } else if (type == ProtoType::kBytesMap) {
      value = common::base64_encode(*b);
    } else {
      auto q = quantity_value(*b);
      if (!q) return std::unexpected(nest(q.error(), key));
      value = std::move(*q);
    }
  }
  return std::pair{std::move(key), std::move(value)};
}

const ProtoField* find_field(const ProtoMessage& m, std::uint32_t number) {
  for (const auto& f : m.fields) {
    if (f.number == number) return &f;
  }
  return nullptr;
}

Result<void> decode_message(std::string_view data, const ProtoMessage& m, json& obj);

// The value of one length-delimited occurrence of a non-varint field.
Result<json> single_value(const ProtoField& f, std::string_view b) {
  switch (f.type) {
    case ProtoType::kString:
      return json(to_utf8(b));
    case ProtoType::kBytes:
      return json(common::base64_encode(b));
    case ProtoType::kQuantity:
      return quantity_value(b);
    case ProtoType::kIntOrString:
      return int_or_string_value(b);
    case ProtoType::kTime:
      return time_value(b);
    default: {
      json obj = json::object();
      if (auto r = decode_message(b, *f.message, obj); !r) return std::unexpected(r.error());
      return obj;
    }
  }
}

json& slot(json& obj, std::string_view name, json::value_t type) {
  json& s = obj[std::string(name)];
  if (s.type() != type) s = json(type);
  return s;
}

// Decodes one occurrence of field `f` (its key already read) into `obj`, merging as protobuf does:
// scalars take the last value, lists append, maps add entries, messages merge.
Result<void> decode_field(Reader& r, std::uint32_t wire, const ProtoField& f, json& obj) {
  if (is_varint_type(f.type)) {
    if (wire == kVarint) {
      auto v = r.varint();
      if (!v) return std::unexpected(v.error());
      if (f.repeated) {
        slot(obj, f.json_name, json::value_t::array).push_back(varint_value(f.type, *v));
      } else {
        obj[std::string(f.json_name)] = varint_value(f.type, *v);
      }
      return {};
    }
    if (wire == kLengthDelimited && f.repeated) {  // packed
      auto b = r.bytes();
      if (!b) return std::unexpected(b.error());
      json& list = slot(obj, f.json_name, json::value_t::array);
      Reader packed(*b);
      while (!packed.done()) {
        auto v = packed.varint();
        if (!v) return std::unexpected(v.error());
        list.push_back(varint_value(f.type, *v));
      }
      return {};
    }
    return fail("wrong wire type " + std::to_string(wire) + " (want 0)");
  }
  if (wire != kLengthDelimited) return fail("wrong wire type " + std::to_string(wire) + " (want 2)");
  auto b = r.bytes();
  if (!b) return std::unexpected(b.error());
  switch (f.type) {
    case ProtoType::kInline:
      return decode_message(*b, *f.message, obj);
    case ProtoType::kStringMap:
    case ProtoType::kBytesMap:
    case ProtoType::kQuantityMap: {
      auto entry = map_entry(*b, f.type);
      if (!entry) return std::unexpected(entry.error());
      slot(obj, f.json_name, json::value_t::object)[entry->first] = std::move(entry->second);
      return {};
    }
    case ProtoType::kMessage:
      if (!f.repeated) return decode_message(*b, *f.message, slot(obj, f.json_name, json::value_t::object));
      break;
    default:
      break;
  }
  json& list = f.repeated ? slot(obj, f.json_name, json::value_t::array) : obj;
  auto v = single_value(f, *b);
  if (!v) {
    return std::unexpected(f.repeated ? nest(v.error(), "", static_cast<long long>(list.size())) : v.error());
  }
  if (f.repeated) {
    list.push_back(std::move(*v));
  } else {
    obj[std::string(f.json_name)] = std::move(*v);
  }
  return {};
}

Result<void> decode_message(std::string_view data, const ProtoMessage& m, json& obj) {
  Reader r(data);
  while (!r.done()) {
    auto k = r.key();
    if (!k) return std::unexpected(k.error());
    auto [number, wire] = *k;
    const ProtoField* f = find_field(m, number);
    if (f == nullptr) {
      if (auto s = r.skip(wire); !s) return s;
      continue;
    }
    if (auto d = decode_field(r, wire, *f, obj); !d) {
      if (f->type == ProtoType::kInline) return d;
      return std::unexpected(nest(d.error(), f->json_name));
    }
  }
  return {};
}

bool is_empty(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return true;
    case json::value_t::string:
      return v.get_ref<const std::string&>().empty();
    case json::value_t::boolean:
      return !v.get<bool>();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return v.get<std::int64_t>() == 0;
    case json::value_t::array:
    case json::value_t::object:
      return v.empty();
    default:
      return false;
  }
}

void finalize(json& obj, const ProtoMessage& m);

// What Go's encoding/json writes for a field holding its type's zero value.
json zero_value(const ProtoField& f) {
  if (f.repeated) return nullptr;
  switch (f.type) {
    case ProtoType::kString:
      return "";
    case ProtoType::kInt32:
    case ProtoType::kInt64:
    case ProtoType::kIntOrString:
      return 0;
    case ProtoType::kBool:
      return false;
    case ProtoType::kQuantity:
      return "0";
    case ProtoType::kMessage: {
      json obj = json::object();
      finalize(obj, *f.message);
      return obj;
    }
    default:
      return nullptr;  // nil []byte and maps, zero metav1.Time
  }
}

// Applies the JSON presence rules of each field after all of the message's bytes have been merged.
void finalize(json& obj, const ProtoMessage& m) {
  for (const auto& f : m.fields) {
    if (f.type == ProtoType::kInline) {
      finalize(obj, *f.message);
      continue;
    }
    auto it = obj.find(std::string(f.json_name));
    if (it != obj.end()) {
      if (f.type == ProtoType::kMessage) {
        if (f.repeated) {
          for (auto& item : *it) finalize(item, *f.message);
        } else {
          finalize(*it, *f.message);
        }
      }
      if (f.presence == ProtoPresence::kOmitEmpty && is_empty(*it)) obj.erase(it);
    } else if (f.presence == ProtoPresence::kAlways) {
      obj[std::string(f.json_name)] = zero_value(f);
    } else if (f.presence == ProtoPresence::kNullable) {
      obj[std::string(f.json_name)] = nullptr;
    }
  }
}

// The runtime.Unknown envelope.
struct Envelope {
  std::string api_version;
  std::string kind;
  std::string_view raw;
};

Result<void> decode_type_meta(std::string_view data, Envelope& env) {
  Reader r(data);
  while (!r.done()) {
    auto k = r.key();
    if (!k) return std::unexpected(k.error());
    auto [number, wire] = *k;
    if (number != 1 && number != 2) {
      if (auto s = r.skip(wire); !s) return s;
      continue;
    }
    if (wire != kLengthDelimited) return fail("wrong wire type for typeMeta field " + std::to_string(number));
    auto b = r.bytes();
    if (!b) return std::unexpected(b.error());
    (number == 1 ? env.api_version : env.kind) = to_utf8(*b);
  }
  return {};
}

Result<Envelope> decode_envelope(std::string_view data) {
  Envelope env;
  Reader r(data);
  while (!r.done()) {
    auto k = r.key();
    if (!k) return std::unexpected(k.error());
    auto [number, wire] = *k;
    if (number != 1 && number != 2) {  // contentEncoding, contentType: ignored, as kube-apiserver does
      if (auto s = r.skip(wire); !s) return std::unexpected(s.error());
      continue;
    }
    if (wire != kLengthDelimited) {
      return fail("wrong wire type for envelope field " + std::to_string(number));
    }
    auto b = r.bytes();
    if (!b) return std::unexpected(b.error());
    if (number == 2) {
      env.raw = *b;
    } else if (auto t = decode_type_meta(*b, env); !t) {
      return std::unexpected(nest(t.error(), "typeMeta"));
    }
  }
  return env;
}

Result<json> decode(std::string_view body) {
  if (body.empty()) return fail("empty data");
  if (!has_k8s_protobuf_magic(body)) {
    return fail("provided data does not appear to be a protobuf message, expected prefix \"k8s\\x00\"");
  }
  if (body.size() == kMagic.size()) return fail("empty body");
  auto env = decode_envelope(body.substr(kMagic.size()));
  if (!env) {
    auto e = env.error();
    e.message = "invalid protobuf envelope: " + e.message;
    return std::unexpected(std::move(e));
  }
  if (env->kind.empty()) return fail("Object 'Kind' is missing in the protobuf envelope");
  if (env->api_version.empty()) return fail("Object 'apiVersion' is missing in the protobuf envelope");
  const ProtoMessage* m = find_protobuf_kind(env->api_version, env->kind);
  if (m == nullptr) {
    return fail("protobuf decoding of " + env->api_version + ", Kind=" + env->kind +
                " is not supported; send it as application/json");
  }
  json obj = json::object();
  if (auto d = decode_message(env->raw, *m, obj); !d) {
    auto e = d.error();
    e.message = "invalid protobuf " + env->api_version + " " + env->kind + ": " + e.message;
    return std::unexpected(std::move(e));
  }
  finalize(obj, *m);
  obj["apiVersion"] = env->api_version;
  obj["kind"] = env->kind;
  return obj;
}

}  // namespace

bool has_k8s_protobuf_magic(std::string_view body) {
  return body.starts_with(kMagic);
}

Result<json> decode_k8s_protobuf(std::string_view body) {
  try {
    return decode(body);
  } catch (const std::exception& e) {  // only std::bad_alloc is expected here; nothing else may escape
    return fail(std::string("decoding protobuf: ") + e.what());
  }
}

}  // namespace kubex::sim
