// launches.cc: see launches.h.
#include "rules/launches.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "rules/vocabulary.h"

namespace tpt {

namespace {

// Configuration keys that one run prints the same way in every file.
constexpr const char* kRunKeys[] = {"tp_size", "pp_size", "model_path", "model", "mem_fraction_static",
                                    "gpu_memory_utilization", "max_model_len", "context_length"};

std::string Scalar(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
  if (j.is_number()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", j.get<double>());
    return buf;
  }
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  return "";
}

struct FileView {
  std::map<std::string, std::string> config;  // first printed value of each run key
  double first_ts = NAN, last_ts = NAN;        // absolute timestamps only
};

bool IsFailure(const Event& e);
bool IsProgress(const std::string& kind);

}  // namespace

std::string DifferentRuns(const std::vector<Event>& events) {
  std::map<std::string, FileView> files;
  for (const Event& e : events) {
    if (e.file.empty()) continue;
    FileView& f = files[e.file];
    if (e.kind == "server_args") {
      FieldValue args = e.Get("args");
      for (const char* k : kRunKeys) {
        const nlohmann::json* v = nullptr;
        if (FieldValue field = e.Get(k); field.present()) v = &field.json();
        else if (args.is_object() && args.json().contains(k)) v = &args.json()[k];
        if (v != nullptr && !f.config.count(k)) {
          std::string s = Scalar(*v);
          if (!s.empty()) f.config[k] = s;
        }
      }
    }
    if (e.ts && !e.ts_is_time_of_day) {
      if (std::isnan(f.first_ts)) f.first_ts = *e.ts;
      f.last_ts = *e.ts;
    }
  }
  if (files.size() < 2) return "";
  for (auto a = files.begin(); a != files.end(); ++a) {
    for (auto b = std::next(a); b != files.end(); ++b) {
      for (const char* k : kRunKeys) {
        auto x = a->second.config.find(k), y = b->second.config.find(k);
        if (x != a->second.config.end() && y != b->second.config.end() && x->second != y->second)
          return a->first + " has " + k + "=" + x->second + " but " + b->first + " has " + k + "=" + y->second;
      }
      // Files of one run share its clock: more than a day between them is two
      // runs (a day, not hours: one file may print local time, another UTC).
      constexpr double kGap = 26 * 3600;
      const FileView &p = a->second, &q = b->second;
      if (!std::isnan(p.first_ts) && !std::isnan(q.first_ts) &&
          (q.first_ts > p.last_ts + kGap || p.first_ts > q.last_ts + kGap))
        return a->first + " and " + b->first + " were written more than a day apart (their timestamps do not overlap)";
    }
  }
  return "";
}

namespace {

// parser/events.json ends_launch / progress.
bool IsFailure(const Event& e) {
  const EventKind* k = FindEventKind(e.kind);
  return e.consequence || (k != nullptr && k->ends_launch);
}

bool IsProgress(const std::string& kind) {
  const EventKind* k = FindEventKind(kind);
  return k != nullptr && k->progress;
}

}  // namespace

std::vector<size_t> SplitLaunches(const std::vector<Event>& events) {
  std::vector<size_t> starts = {0};
  std::set<std::string> files;
  for (const Event& e : events) files.insert(e.file);
  if (files.size() != 1) return starts;
  // A start line begins a new launch only once the current one died or was
  // up (ready, or serving): a server prints its configuration more than once
  // while starting (vLLM's API server and engine, a speculative draft), never
  // after its end. Healthy starts one after the other (a server stopped and
  // started again, logs concatenated) are launches too.
  // The lines between the last one of a launch that moved (a phase, a
  // failure) and the next start line (a version banner, an environment
  // dump) belong to the next launch.
  bool progressed = false, ended = false, up = false, seen_start = false;
  size_t last_moved = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.kind == "server_args") {
      if (seen_start && (ended || up)) {
        starts.push_back(std::max(last_moved + 1, starts.back() + 1));
        progressed = ended = up = false;
      }
      seen_start = true;
      last_moved = i;
      continue;
    }
    if (IsProgress(e.kind)) progressed = true;
    if (e.kind == "startup_complete" || e.kind == "batch_stats" || e.kind == "http_access") up = true;
    if (IsFailure(e) && (progressed || seen_start)) ended = true;
    if (IsProgress(e.kind) || IsFailure(e)) last_moved = i;
  }
  return starts;
}

std::vector<std::string> FoldersWithOwnStarts(const std::string& dir, const std::vector<Event>& events) {
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  base += '/';
  std::set<std::string> folders;
  for (const Event& e : events) {
    if (e.kind != "server_args" || e.file.compare(0, base.size(), base) != 0) continue;
    size_t slash = e.file.find('/', base.size());
    if (slash != std::string::npos) folders.insert(e.file.substr(base.size(), slash - base.size()));
  }
  return {folders.begin(), folders.end()};
}

}  // namespace tpt
