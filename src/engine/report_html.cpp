// `kubex report -o html` (RPT-4): one self-contained page, no script, no font, no request of any kind (its
// Content-Security-Policy forbids them): title, cluster, date and window; the headline; inline SVG charts of GPUs
// as written vs held per namespace and of pods per GPU; the workloads with the idle ones first; the
// consolidation section; the resizes applied by eviction.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "common/time_format.h"
#include "engine/report_model.h"
#include "engine/report_text.h"

namespace kubex::engine {
namespace {

namespace dr = decide::report;

std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Horizontal grouped bars: per namespace, GPUs as written (grey) over GPUs held (green).
std::string namespace_chart(const dr::Summary& s) {
  const double row_h = 34, label_w = 170, bar_w = 420, top = 28;
  double max = 0;
  for (const auto& t : s.namespaces) max = std::max({max, static_cast<double>(t.as_written), static_cast<double>(t.held)});
  if (max <= 0) max = 100;
  const double height = top + row_h * static_cast<double>(std::max<std::size_t>(s.namespaces.size(), 1)) + 10;
  std::string out = "<svg class=\"chart\" id=\"chart-namespaces\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    num(label_w + bar_w + 90) + "\" height=\"" + num(height) +
                    "\" role=\"img\" aria-label=\"GPUs as written vs held per namespace\">";
  out += "<rect x=\"" + num(label_w) + "\" y=\"6\" width=\"12\" height=\"10\" class=\"written\"/><text x=\"" +
         num(label_w + 16) + "\" y=\"15\">as written</text>";
  out += "<rect x=\"" + num(label_w + 100) + "\" y=\"6\" width=\"12\" height=\"10\" class=\"held\"/><text x=\"" +
         num(label_w + 116) + "\" y=\"15\">held now</text>";
  double y = top;
  for (const auto& t : s.namespaces) {
    const double w1 = bar_w * static_cast<double>(t.as_written) / max;
    const double w2 = bar_w * static_cast<double>(t.held) / max;
    out += "<text x=\"0\" y=\"" + num(y + 18) + "\">" + esc(t.ns) + "</text>";
    out += "<rect class=\"written\" x=\"" + num(label_w) + "\" y=\"" + num(y) + "\" width=\"" + num(w1) +
           "\" height=\"13\"><title>" + esc(t.ns) + ": " + decide::format_gpu(t.as_written) +
           " GPUs as written</title></rect>";
    out += "<text x=\"" + num(label_w + w1 + 4) + "\" y=\"" + num(y + 11) + "\">" + decide::format_gpu(t.as_written) +
           "</text>";
    out += "<rect class=\"held\" x=\"" + num(label_w) + "\" y=\"" + num(y + 15) + "\" width=\"" + num(w2) +
           "\" height=\"13\"><title>" + esc(t.ns) + ": " + decide::format_gpu(t.held) + " GPUs held</title></rect>";
    out += "<text x=\"" + num(label_w + w2 + 4) + "\" y=\"" + num(y + 26) + "\">" + decide::format_gpu(t.held) +
           "</text>";
    y += row_h;
  }
  return out + "</svg>";
}

// Vertical bars: how many GPUs hold 0, 1, 2, … pods.
std::string pods_per_gpu_chart(const std::map<int, int>& ppg) {
  const double col_w = 56, plot_h = 140, top = 16, left = 10;
  int max = 1;
  for (const auto& [k, n] : ppg) max = std::max(max, n);
  // Wide enough for the caption too (issue 34: with one or two columns it was clipped at the SVG's edge); 11px
  // sans-serif averages under 7px a character.
  const std::string caption = "GPUs by the pods they hold";
  const double width = std::max(left + col_w * static_cast<double>(std::max<std::size_t>(ppg.size(), 1)) + 20,
                                left + 7.0 * static_cast<double>(caption.size()) + 20);
  std::string out = "<svg class=\"chart\" id=\"chart-pods-per-gpu\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    num(width) + "\" height=\"" + num(top + plot_h + 40) +
                    "\" role=\"img\" aria-label=\"GPUs by the number of pods they hold\">";
  double x = left;
  for (const auto& [k, n] : ppg) {
    const double h = plot_h * n / max;
    out += "<rect class=\"held\" x=\"" + num(x + 8) + "\" y=\"" + num(top + plot_h - h) + "\" width=\"" +
           num(col_w - 16) + "\" height=\"" + num(h) + "\"><title>" + std::to_string(n) + " GPUs hold " +
           std::to_string(k) + " pods</title></rect>";
    out += "<text x=\"" + num(x + col_w / 2) + "\" y=\"" + num(top + plot_h - h - 3) + "\" text-anchor=\"middle\">" +
           std::to_string(n) + "</text>";
    out += "<text x=\"" + num(x + col_w / 2) + "\" y=\"" + num(top + plot_h + 16) + "\" text-anchor=\"middle\">" +
           std::to_string(k) + (k == 1 ? " pod" : " pods") + "</text>";
    x += col_w;
  }
  out += "<text class=\"caption\" x=\"" + num(left) + "\" y=\"" + num(top + plot_h + 34) + "\">" + caption + "</text>";
  return out + "</svg>";
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222;max-width:1200px}"
    "h1{font-size:1.5em;margin-bottom:0}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
    ".meta{color:#666}.headline{font-size:1.1em;white-space:pre-line}"
    "table{border-collapse:collapse;font-size:.9em}th,td{padding:3px 8px;border-bottom:1px solid #eee;"
    "text-align:left}td.n{text-align:right}tr.idle td{background:#fff4e5}"
    ".chart text{font-size:11px;fill:#333}.written{fill:#b0b7c3}.held{fill:#2e9e5b}"
    ".warn{color:#a15c00}.charts{display:flex;gap:3em;flex-wrap:wrap}";

}  // namespace

void print_report_html(const ReportData& r, std::ostream& out) {
  const std::string when = common::format_rfc3339(r.now);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
      << "<title>kubex report " << esc(when) << "</title><style>" << kStyle << "</style></head><body>\n";
  out << "<h1>kubex report</h1>\n<p class=\"meta\">Cluster " << esc(r.cluster) << " &middot; " << esc(when)
      << " &middot; last " << esc(r.since) << " &middot; Prometheus " << esc(r.prometheus_url)
      << (r.prometheus_error.empty() ? "" : " <span class=\"warn\">(no data: " + esc(r.prometheus_error) + ")</span>")
      << "</p>\n";
  out << "<p class=\"headline\" id=\"headline\">" << esc(headline(r)) << "</p>\n";

  out << "<div class=\"charts\"><div><h2>GPUs as written vs held, per namespace</h2>" << namespace_chart(r.summary)
      << "</div><div><h2>Pods per GPU</h2>" << pods_per_gpu_chart(r.pods_per_gpu) << "</div></div>\n";

  out << "<h2>Idle workloads</h2>\n<p>Holding at least "
      << esc(gpus_or_dash(static_cast<double>(r.idle.minimum_gpus_milli) / 1000.0))
      << " GPU with p95 SM use under " << r.idle.sm_percent << "% of a GPU and memory under " << r.idle.memory_percent
      << "% of what they hold, over at least 1h of data. kubex never scales anything to zero on its own.</p>\n";
  out << "<table id=\"idle\"><tr><th>Namespace</th><th>Workload</th><th>GPUs held</th><th>GPU-hours</th>"
      << (r.priced ? "<th>Idle cost</th>" : "") << "<th>Why</th></tr>\n";
  bool any = false;
  for (const auto& w : r.summary.workloads) {
    if (!w.idle) continue;
    any = true;
    out << "<tr class=\"idle\"><td>" << esc(w.ns) << "</td><td>" << esc(w.kind + "/" + w.name) << "</td><td class=\"n\">"
        << decide::format_gpu(w.held) << "</td><td class=\"n\">" << dr::format_hours(w.gpu_hours_held) << "</td>";
    if (r.priced) out << "<td class=\"n\">" << esc(w.priced ? dr::format_money(w.idle_cost) : "-") << "</td>";
    out << "<td>" << esc(w.idle_reason) << "</td></tr>\n";
  }
  if (!any) out << "<tr><td colspan=\"6\">none</td></tr>\n";
  out << "</table>\n";

  out << "<h2>Workloads</h2>\n<table id=\"workloads\"><tr><th>Namespace</th><th>Workload</th><th>Managed</th>"
         "<th>Pods</th><th>As written</th><th>Held</th><th>Saved</th><th>SM p95</th><th>Memory max</th>"
         "<th>GPU-hours saved</th>"
      << (r.priced ? "<th>Cost saved</th>" : "") << "</tr>\n";
  for (const auto& w : r.summary.workloads) {
    const bool data = has_data(w.usage);
    out << "<tr" << (w.idle ? " class=\"idle\"" : "") << "><td>" << esc(w.ns) << "</td><td>"
        << esc(w.kind + "/" + w.name) << "</td><td>" << (w.managed ? "yes" : "no") << "</td><td class=\"n\">"
        << w.replicas << "</td><td class=\"n\">" << decide::format_gpu(w.as_written) << "</td><td class=\"n\">"
        << decide::format_gpu(w.held) << "</td><td class=\"n\">" << decide::format_gpu(w.saved_gpus())
        << "</td><td class=\"n\">" << (data ? gpus_or_dash(w.usage.sm_p95_gpus) : "no data") << "</td><td class=\"n\">"
        << (data ? gpus_or_dash(w.usage.memory_max_gpus) : "no data") << "</td><td class=\"n\">"
        << dr::format_hours(w.gpu_hours_saved) << "</td>";
    if (r.priced) out << "<td class=\"n\">" << esc(w.priced ? dr::format_money(w.saved) : "-") << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n";

  out << "<h2>Totals</h2>\n<table id=\"totals\"><tr><th>Namespace</th><th>Workloads</th><th>Idle</th>"
         "<th>As written</th><th>Held</th><th>Saved</th><th>GPU-hours saved</th><th>Idle GPU-hours</th>"
      << (r.priced ? "<th>Cost saved</th><th>Idle cost</th>" : "") << "</tr>\n";
  auto totals = [&](const dr::Totals& t, const std::string& name) {
    out << "<tr><td>" << esc(name) << "</td><td class=\"n\">" << t.workloads << "</td><td class=\"n\">"
        << t.idle_workloads << "</td><td class=\"n\">" << decide::format_gpu(t.as_written) << "</td><td class=\"n\">"
        << decide::format_gpu(t.held) << "</td><td class=\"n\">" << esc(saved_text(t)) << "</td><td class=\"n\">"
        << dr::format_hours(t.gpu_hours_saved) << "</td><td class=\"n\">" << dr::format_hours(t.idle_gpu_hours)
        << "</td>";
    if (r.priced) {
      out << "<td class=\"n\">" << esc(t.saved.empty() ? "-" : dr::format_money(t.saved)) << "</td><td class=\"n\">"
          << esc(t.idle_cost.empty() ? "-" : dr::format_money(t.idle_cost)) << "</td>";
    }
    out << "</tr>\n";
  };
  for (const auto& t : r.summary.namespaces) totals(t, t.ns);
  totals(r.summary.cluster, "(cluster)");
  out << "</table>\n";

  out << "<h2>Consolidation</h2>\n<ul id=\"consolidation\">";
  if (!r.consolidation_error.empty()) out << "<li class=\"warn\">cannot be read: " << esc(r.consolidation_error) << "</li>";
  if (r.consolidation.empty() && r.consolidation_error.empty()) out << "<li>no GpuConsolidationPolicy</li>";
  for (const auto& p : r.consolidation) out << "<li>" << esc(consolidation_line(p)) << "</li>";
  out << "</ul>\n<p>Drains kubex carried out in the window:</p>\n<ul id=\"drains\">";
  if (r.drains.empty()) out << "<li>none</li>";
  for (const auto& d : r.drains) out << "<li>" << esc(drain_line(d)) << "</li>";
  out << "</ul>\n";

  out << "<h2>Resizes applied by eviction</h2>\n<ul id=\"resizes\">";
  if (!r.events_error.empty()) out << "<li class=\"warn\">events cannot be read: " << esc(r.events_error) << "</li>";
  if (r.resizes.empty() && r.events_error.empty()) out << "<li>none</li>";
  for (const auto& e : r.resizes) {
    out << "<li>" << esc(e.at + " " + e.ns + " " + (e.workload.empty() ? "?" : e.workload) + " pod " + e.pod + ": " +
                         e.message)
        << "</li>";
  }
  out << "</ul>\n</body></html>\n";
}

}  // namespace kubex::engine
