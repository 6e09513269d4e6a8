// parser.cc: inputs of a run -> streams -> merged events; see parser.h.
#include "parser/parser.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <queue>

#include "parser/format_set.h"
#include "parser/rank_resolve.h"
#include "parser/reader.h"
#include "parser/stream_parser.h"
#include "parser/unpaste.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

bool HasLogExtension(const fs::path& p) {
  static const char* kExt[] = {".log", ".txt", ".out", ".err", ".gz", ".jsonl"};
  std::string ext = p.extension().string();
  for (auto e : kExt) {
    if (ext == e) return true;
  }
  // rank0.log.1 style rotations.
  std::string name = p.filename().string();
  return name.find(".log.") != std::string::npos;
}

bool ExtensionlessText(const fs::path& p) {
  if (p.has_extension()) return false;
  auto opened = OpenInput(p.string());
  return opened.ok() && !opened->empty && !opened->looks_binary;
}

struct Expanded {
  std::string path;
  std::string error;  // set when the input cannot be used
};

void ExpandInputs(const std::vector<std::string>& inputs, std::vector<Expanded>* out) {
  for (const std::string& in : inputs) {
    if (in == "-") {
      out->push_back({in, ""});
      continue;
    }
    std::error_code ec;
    fs::file_status st = fs::status(in, ec);
    if (ec || !fs::exists(st)) {
      out->push_back({in, in + ": no such file or directory; check the path"});
      continue;
    }
    if (!fs::is_directory(st)) {
      out->push_back({in, ""});
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(in, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (!it->is_regular_file(ec2)) continue;
      const fs::path& p = it->path();
      std::string name = p.filename().string();
      if (!name.empty() && name[0] == '.') continue;
      if (HasLogExtension(p) || ExtensionlessText(p)) found.push_back(p.string());
    }
    std::sort(found.begin(), found.end());
    if (found.empty()) {
      out->push_back({in, in + ": directory holds no logs (*.log, *.txt, *.out, *.err, *.gz or text files "
                              "without extension); pass the log files themselves"});
      continue;
    }
    for (auto& f : found) out->push_back({f, ""});
  }
}

// Merge key: the event's time where it has one, else the last time of its
// stream (so untimed lines stay after what preceded them); time-of-day stamps
// are placed on the last date seen.
struct Clock {
  double last_key = -std::numeric_limits<double>::infinity();
  double day_base = 0;  // midnight of the last absolute time seen in this stream
  bool has_day = false;
};

double MergeKey(const Event& e, Clock* c, const double* global_day) {
  if (e.ts) {
    if (!e.ts_is_time_of_day) {
      c->day_base = std::floor(*e.ts / 86400.0) * 86400.0;
      c->has_day = true;
      c->last_key = *e.ts;
    } else {
      double base = c->has_day ? c->day_base : (global_day ? *global_day : 0);
      c->last_key = base + *e.ts;
    }
  }
  return c->last_key;
}

}  // namespace

std::string LongLineWarning(const InputReport& r, const ParseOptions& options) {
  if (r.long_lines == 0) return "";
  const std::string name = r.path == "-" ? "<stdin>" : r.path;
  return name + ": " + std::to_string(r.long_lines) + " line(s) longer than " + std::to_string(options.max_line_bytes) +
         " bytes were cut (only their first " + std::to_string(options.max_line_bytes) +
         " bytes were matched; raise --max-line-bytes to read them whole)";
}

std::vector<std::string> InputWarnings(const InputReport& r, const ParseOptions& options) {
  std::vector<std::string> out;
  if (!r.error.empty()) out.push_back(r.error);
  if (std::string w = LongLineWarning(r, options); !w.empty()) out.push_back(std::move(w));
  return out;
}

Status ParseRun(const std::vector<std::string>& inputs, const FormatSet& formats, const ParseOptions& options,
                EventSink* sink, std::vector<InputReport>* reports) {
  std::vector<InputReport> local;
  if (!reports) reports = &local;
  reports->clear();
  if (inputs.empty()) return InvalidArgumentError("no input given; pass log files, directories or - for stdin");

  std::vector<Expanded> expanded;
  ExpandInputs(inputs, &expanded);
  struct Stream {
    std::unique_ptr<StreamEvents> events;
    size_t report;
    Clock clock;
    const Event* head = nullptr;  // valid until the stream is advanced
    bool has_head = false;
    uint64_t count = 0;
  };
  std::vector<Stream> streams;
  size_t usable = 0;
  for (const Expanded& x : expanded) {
    if (x.error.empty()) ++usable;
  }
  // Many streams share the memory budget: each gets a smaller buffer.
  size_t buffer = std::max<size_t>(options.buffer_bytes, 1);
  if (usable > 8) buffer = std::max(std::min<size_t>(buffer, 64 * 1024), buffer * 8 / usable);

  for (const Expanded& x : expanded) {
    InputReport r;
    r.path = x.path;
    r.error = x.error;
    if (r.error.empty()) {
      auto opened = OpenInput(x.path);
      std::string name = x.path == "-" ? "<stdin>" : x.path;
      if (!opened.ok()) {
        r.error = opened.status().message();
      } else if (opened->empty) {
        r.error = name + ": empty; nothing to read (was the log captured? check the redirect)";
      } else if (opened->looks_binary) {
        r.error = name + ": looks binary (many NUL/control bytes or invalid UTF-8: random, compressed or encrypted data), not a text log; pass the text log" +
                  std::string(opened->gzip ? "" : " (or its .gz)");
      } else {
        Stream s;
        s.report = reports->size();
        // Pasted logs (quoted, fenced, boxed, hard-wrapped) read as printed: parser/unpaste.h.
        auto unpasted = std::make_unique<UnpasteSource>(std::move(opened->source), &formats);
        s.events = std::make_unique<StreamEvents>(std::move(unpasted), formats, options, buffer,
                                                  static_cast<int>(reports->size()), x.path);
        streams.push_back(std::move(s));
      }
    }
    reports->push_back(std::move(r));
  }

  // k-way merge by (key, stream index, order within the stream): stable.
  double global_day = 0;
  bool have_global_day = false;
  auto advance = [&](Stream& s) {
    s.head = s.events->NextRef();
    s.has_head = s.head != nullptr;
    if (s.has_head && s.head->ts && !s.head->ts_is_time_of_day && !have_global_day) {
      global_day = std::floor(*s.head->ts / 86400.0) * 86400.0;
      have_global_day = true;
    }
  };
  using Item = std::pair<double, size_t>;  // key, stream
  auto cmp = [](const Item& a, const Item& b) { return a.first > b.first || (a.first == b.first && a.second > b.second); };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
  for (size_t i = 0; i < streams.size(); ++i) {
    advance(streams[i]);
    if (streams[i].has_head && streams.size() > 1) {
      heap.push({MergeKey(*streams[i].head, &streams[i].clock, have_global_day ? &global_day : nullptr), i});
    }
  }
  if (streams.size() == 1) {
    // One stream: its own order is the merge order, and no key is needed.
    Stream& s = streams[0];
    while (s.has_head) {
      ++s.count;
      if (!sink->OnEvent(*s.head)) break;  // the sink asked to stop
      s.head = s.events->NextRef();
      s.has_head = s.head != nullptr;
    }
  }
  while (!heap.empty()) {
    size_t i = heap.top().second;
    heap.pop();
    Stream& s = streams[i];
    ++s.count;
    if (!sink->OnEvent(*s.head)) break;  // the sink asked to stop
    advance(s);
    if (s.has_head) heap.push({MergeKey(*s.head, &s.clock, have_global_day ? &global_day : nullptr), i});
  }
  bool any_read = false;
  for (Stream& s : streams) {
    InputReport& r = (*reports)[s.report];
    r.bytes = s.events->bytes();
    r.lines = s.events->lines();
    r.long_lines = s.events->long_lines();
    r.events = s.count;
    if (!s.events->error().empty()) r.error = s.events->error();
    if (r.bytes > 0) any_read = true;
  }
  if (!any_read) {
    std::string why;
    for (const auto& r : *reports) {
      if (!r.error.empty()) why += (why.empty() ? "" : "; ") + r.error;
    }
    return NotFoundError("nothing could be read: " + (why.empty() ? std::string("no input") : why));
  }
  return OkStatus();
}

namespace {

// Keeps everything except high-volume kinds beyond their first and last N.
class MemorySink : public EventSink {
 public:
  MemorySink(ParsedRun* run, size_t keep) : run_(run), keep_(keep) {}
  bool OnEvent(const Event& e) override {
    uint64_t seq = seq_++;
    if (IsHighVolume(e.kind)) {
      Capped& c = capped_[e.kind];
      if (c.first < keep_) {
        ++c.first;
      } else {
        // The last keep_ in a ring: the oldest slot is refilled in place.
        if (keep_ == 0) {
          ++c.dropped;
        } else if (c.tail.size() < keep_) {
          c.tail.emplace_back(seq, e);
        } else {
          if (c.next == c.tail.size()) c.next = 0;
          auto& slot = c.tail[c.next++];
          slot.first = seq;
          CopyEventReusing(e, &slot.second);
          ++c.dropped;
        }
        return true;
      }
    }
    kept_.push_back({seq, e});
    return true;
  }
  void Finish() {
    for (auto& [kind, c] : capped_) {
      if (c.dropped > 0) run_->dropped[kind] = c.dropped;
      for (auto& t : c.tail) kept_.push_back(std::move(t));  // ring order: the sort below restores it
    }
    std::stable_sort(kept_.begin(), kept_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    run_->events.reserve(kept_.size());
    for (auto& k : kept_) run_->events.push_back(std::move(k.second));
    kept_.clear();
  }

 private:
  static bool IsHighVolume(const std::string& kind) { return kind == "batch_stats" || kind == "http_access"; }
  struct Capped {
    size_t first = 0;
    uint64_t dropped = 0;
    std::vector<std::pair<uint64_t, Event>> tail;  // a ring once full
    size_t next = 0;  // the ring's oldest slot
  };
  ParsedRun* run_;
  size_t keep_;
  uint64_t seq_ = 0;
  std::vector<std::pair<uint64_t, Event>> kept_;
  std::map<std::string, Capped> capped_;
};

}  // namespace

StatusOr<ParsedRun> ParseRunToMemory(const std::vector<std::string>& inputs, const FormatSet& formats,
                                     const ParseOptions& options) {
  ParsedRun run;
  MemorySink sink(&run, options.keep_high_volume);
  Status s = ParseRun(inputs, formats, options, &sink, &run.inputs);
  if (!s.ok()) return s;
  sink.Finish();
  ResolveRanks(&run.events);
  return run;
}

}  // namespace tpt
