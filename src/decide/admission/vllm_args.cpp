#include "decide/admission/vllm_args.h"

#include <algorithm>
#include <cctype>

namespace kubex::decide {

namespace {

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

std::string image_repository_path(std::string_view image) {
  if (auto at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    auto slash = image.find('/', start);
    parts.push_back(
        image.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() > 1) {
    const std::string_view host = parts.front();
    if (host.find('.') != std::string_view::npos || host.find(':') != std::string_view::npos ||
        host == "localhost") {
      parts.erase(parts.begin());
    }
  }
  std::string_view& last = parts.back();
  if (auto colon = last.find(':'); colon != std::string_view::npos) last = last.substr(0, colon);
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '/';
    out += parts[i];
  }
  return out;
}

bool is_vllm_container(std::string_view image, const std::vector<std::string>& command,
                       const std::vector<std::string>& args, std::string_view model_engine) {
  if (model_engine == "VLLM") return true;
  if (lower(image_repository_path(image)).find("vllm") != std::string::npos) return true;
  std::vector<std::string_view> tokens;
  for (const auto* list : {&command, &args}) {
    for (const auto& e : *list) {
      auto t = split_ws(e);
      tokens.insert(tokens.end(), t.begin(), t.end());
    }
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == "vllm" && i + 1 < tokens.size() && tokens[i + 1] == "serve") return true;
    if (tokens[i].find("vllm.entrypoints") != std::string_view::npos) return true;
  }
  return false;
}

Hundredths vllm_memory_utilization(std::string_view sharing_mode, int buffer_percent,
                                   std::optional<Hundredths> fraction) {
  const Hundredths keep = 100 - std::clamp(buffer_percent, 0, 100);  // (1 - b/100) in hundredths
  const bool capped = sharing_mode == "HamiCore" || sharing_mode == "HAMiCore";  // the container sees its cap
  Hundredths v = keep;
  if (!capped && fraction) v = (*fraction * keep) / 100;  // exact floor
  return std::max<Hundredths>(v, 5);
}

VllmRewrite rewrite_vllm_args(const std::vector<std::string>& command, const std::vector<std::string>& args,
                              std::string_view value) {
  struct Item {
    bool in_args;
    std::string text;
    bool deleted = false;
  };
  std::vector<Item> items;
  for (const auto& e : command) items.push_back({false, e});
  for (const auto& e : args) items.push_back({true, e});

  const std::string flag(kGpuMemoryUtilizationFlag);
  const std::string with_value = flag + "=" + std::string(value);
  bool found = false, embedded = false;
  std::optional<std::string> previous;
  for (std::size_t i = 0; i < items.size(); ++i) {
    Item& it = items[i];
    if (it.deleted) continue;
    const bool equals_form = it.text.starts_with(flag + "=");
    const bool split_form = it.text == flag;
    if (!equals_form && !split_form) {
      for (std::string_view t : split_ws(it.text)) {
        if (t == flag || t.starts_with(flag + "=")) embedded = true;
      }
      continue;
    }
    const bool has_value_item = split_form && i + 1 < items.size() && !items[i + 1].text.starts_with("--");
    if (found) {  // (2) a duplicate
      it.deleted = true;
      if (has_value_item) items[i + 1].deleted = true;
    } else if (equals_form || !has_value_item) {  // (1)
      if (equals_form) previous = it.text.substr(flag.size() + 1);
      it.text = with_value;
    } else {
      previous = items[i + 1].text;
      items[i + 1].text = std::string(value);
    }
    if (has_value_item) ++i;
    found = true;
  }

  VllmRewrite out;
  if (!found && embedded) {  // (4)
    out.not_rewritable = true;
    out.command = command;
    out.args = args;
    return out;
  }
  for (const auto& it : items) {
    if (it.deleted) continue;
    (it.in_args ? out.args : out.command).push_back(it.text);
  }
  if (!found) out.args.push_back(with_value);  // (3)
  out.previous = std::move(previous);
  out.changed = out.command != command || out.args != args;
  return out;
}

}  // namespace kubex::decide
