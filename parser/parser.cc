// parser.cc: inputs of a run -> streams -> merged events; see parser.h.
#include "parser/parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <queue>
#include <unordered_map>

#include "parser/flight_recorder.h"
#include "parser/nccl_ras.h"
#include "parser/format_set.h"
#include "parser/json_reuse.h"
#include "parser/rank_resolve.h"
#include "parser/read_whole.h"
#include "parser/stack_dump.h"
#include "parser/vllm_trace.h"
#include "parser/reader.h"
#include "parser/stream_parser.h"
#include "parser/unpaste.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

bool ExtensionlessText(const fs::path& p) {
  if (p.has_extension()) return false;
  auto opened = OpenInput(p.string());
  return opened.ok() && !opened->empty && (!opened->looks_binary || opened->flight_recorder);
}

// An archive by its name (.zip, .tar, .tar.gz, ...): one inside an archive is not read.
bool LooksLikeArchiveName(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto ends = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  return ends(".zip") || ends(".tar") || ends(".tgz") || ends(".tar.gz") || ends(".tar.xz") || ends(".tar.zst") ||
         ends(".tar.bz2") || ends(".txz") || ends(".tbz2");
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
      if (ListArchive(in)) {  // a folder or file inside an archive
        st = fs::file_status(fs::file_type::regular);
      } else {
        out->push_back({in, in + ": no such file or directory; check the path"});
        continue;
      }
    }
    // An archive (or a folder in one: "logs.zip/build") reads like a folder.
    auto archive = fs::is_directory(st) ? std::nullopt : ListArchive(in);
    if (!fs::is_directory(st) && (!archive || std::count(archive->members.begin(), archive->members.end(), in))) {
      out->push_back({in, ""});  // a file (one named inside an archive too)
      continue;
    }
    std::vector<std::string> found;
    if (archive) {
      for (const std::string& m : archive->members) {
        if (LooksLikeArchiveName(m)) {  // never silently: it may hold the failure
          out->push_back({m, m + ": an archive inside an archive is not read; unpack " + archive->archive +
                                 " and pass this archive on its own"});
          continue;
        }
        if (ReadFromDirectory(m)) found.push_back(m);
      }
      for (const std::string& d : archive->duplicates) {
        out->push_back({d, d + ": the archive holds more than one file of this name; only the first was read "
                               "(a later copy, as tar -r appends, may hold the failure); unpack it and pass the "
                               "copy you mean"});
      }
      // A damaged archive is reported once; what was listed before the damage is read.
      if (!archive->error.empty()) {
        out->push_back({in, archive->error});
        if (found.empty()) continue;
      }
    } else {
      fs::recursive_directory_iterator it(in, fs::directory_options::skip_permission_denied, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        std::error_code ec2;
        if (!it->is_regular_file(ec2)) continue;
        const fs::path& p = it->path();
        std::string name = p.filename().string();
        if (!name.empty() && name[0] == '.') continue;
        if (IsArchiveFile(p.string())) {  // an archive in a folder reads as a folder too
          auto inner = ListArchive(p.string());
          if (inner && !inner->error.empty()) out->push_back({p.string(), inner->error});
          if (inner) {
            for (const std::string& m : inner->members) {
              if (LooksLikeArchiveName(m)) {
                out->push_back({m, m + ": an archive inside an archive is not read; unpack " + p.string() +
                                       " and pass this archive on its own"});
              } else if (ReadFromDirectory(m)) {
                found.push_back(m);
              }
            }
          }
          continue;
        }
        if (ReadFromDirectory(p.string())) found.push_back(p.string());
      }
    }
    std::sort(found.begin(), found.end());
    // A path inside an archive that names nothing there.
    if (archive && in != archive->archive && archive->members.empty() && archive->hidden == 0 &&
        archive->error.empty()) {
      out->push_back({in, in + ": no such file or folder in " + archive->archive + "; check the path"});
      continue;
    }
    if (found.empty()) {
      const std::string left_out =
          archive && archive->hidden > 0
              ? " (" + std::to_string(archive->hidden) + " hidden or unsafe member(s) left out: .name, __MACOSX/, ../, /abs)"
              : "";
      out->push_back({in, in + (archive ? ": archive" : ": directory") +
                              " holds no logs (*.log, *.txt, *.out, *.err, *.gz, *.xz, *.zst or text files "
                              "without extension)" + left_out + "; pass the log files themselves"});
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

size_t RunTotals::RanksSeen() const { return std::count(rank_seen.begin(), rank_seen.end(), uint8_t{1}); }

bool ReadFromDirectory(const std::string& path) {
  const fs::path p(path);
  return HasLogExtension(p) || ExtensionlessText(p);
}

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

namespace {

// Receives, with each event, its place in the merge: ParseRunToMemory re-merges
// what it kept when the inputs were read a group at a time.
class KeyedSink : public EventSink {
 public:
  virtual bool OnKeyedEvent(const Event& e, double key, size_t stream) = 0;
  bool OnEvent(const Event& e) override { return OnKeyedEvent(e, 0, 0); }
};

Status ParseRunImpl(const std::vector<std::string>& inputs, const FormatSet& formats, const ParseOptions& options,
                    EventSink* sink, KeyedSink* keyed, std::vector<InputReport>* reports,
                    size_t* groups_read = nullptr) {
  std::vector<InputReport> local;
  if (!reports) reports = &local;
  reports->clear();
  if (inputs.empty()) return InvalidArgumentError("no input given; pass log files, directories or - for stdin");
  SetExpandedByteBudget(options.max_input_bytes);  // per run

  std::vector<Expanded> expanded;
  ExpandInputs(inputs, &expanded);
  struct Stream {
    std::unique_ptr<EventStream> events;  // a text log's (StreamEvents) or a dump's
    size_t report;
    Clock clock;
    const Event* head = nullptr;  // valid until the stream is advanced
    bool has_head = false;
    uint64_t count = 0;
  };
  size_t usable = 0;
  for (const Expanded& x : expanded) {
    if (x.error.empty()) ++usable;
  }
  // Inputs are open a group at a time (at most max_open_inputs file
  // descriptors and read buffers, whatever the number of files).
  const size_t max_open = std::max<size_t>(options.max_open_inputs, 1);
  const size_t open_at_once = std::min(usable, max_open);
  // Many streams share the memory budget: each gets a smaller buffer.
  size_t buffer = std::max<size_t>(options.buffer_bytes, 1);
  if (open_at_once > 8) buffer = std::max(std::min<size_t>(buffer, 64 * 1024), buffer * 8 / open_at_once);

  double global_day = 0;
  bool have_global_day = false;
  bool any_read = false;
  bool stopped = false;
  size_t next_input = 0;
  size_t stream_base = 0;  // streams opened in earlier groups
  while (next_input < expanded.size()) {
    // Open the next group of inputs (those that cannot be used are reported as they come).
    std::vector<Stream> streams;
    while (next_input < expanded.size() && streams.size() < max_open) {
      const Expanded& x = expanded[next_input++];
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
          r.empty = true;
        } else if (opened->archive) {
          const std::string kind = opened->tar ? (*opened->compression ? std::string("a ") + opened->compression +
                                                                                "-compressed tar archive"
                                                                          : std::string("a tar archive"))
                                                : std::string("a zip archive");
          const std::string example = opened->tar ? "logs.tar.gz" : "logs.zip";
          r.error = x.path == "-" ? name + ": " + kind + "; pass it as a file (tptriage analyze " + example +
                                        "), not on stdin"
                                  : name + ": " + kind + ", not a text log (an archive inside an archive is not "
                                           "read); unpack it and pass its logs";
        } else if (opened->flight_recorder) {
          // A PyTorch flight-recorder dump (pickle or JSON): a peer of the logs, with its own reader.
          Stream s;
          s.report = reports->size();
          s.events = ReadFlightRecorder(std::move(opened->source), x.path, static_cast<int>(reports->size()),
                                        options.kinds);
          streams.push_back(std::move(s));
        } else if (opened->vllm_trace) {
          // vLLM's function-call trace (parser/vllm_trace.h): streamed, its open calls kept.
          Stream s;
          s.report = reports->size();
          s.events = ReadVllmTrace(std::move(opened->source), x.path, static_cast<int>(reports->size()));
          streams.push_back(std::move(s));
        } else if (opened->stack_dump || opened->nccl_ras) {
          // A rank's py-spy, faulthandler or gdb stacks (parser/stack_dump.h), or
          // ncclras output (parser/nccl_ras.h): read whole, bounded.
          Stream s;
          s.report = reports->size();
          const size_t limit = opened->stack_dump ? kMaxStackDumpBytes : kMaxNcclRasBytes;
          const char* what = opened->stack_dump ? "a stack dump" : "an ncclras report";
          std::string text, error;
          if (Status read = ReadWhole(opened->source.get(), limit, &text); !read.ok())
            error = name + ": " + (text.size() > limit
                                       ? std::string(what) + " larger than " + std::to_string(limit >> 20) +
                                             " MiB is not read; pass the one of the hung moment alone"
                                       : read.message());
          std::vector<Event> events;
          if (error.empty())
            events = opened->stack_dump ? StackDumpEvents(text, x.path, static_cast<int>(reports->size()))
                                        : NcclRasEvents(text, x.path, static_cast<int>(reports->size()), &error);
          if (!options.kinds.empty())
            events.erase(std::remove_if(events.begin(), events.end(),
                                        [&](const Event& e) {
                                          return std::find(options.kinds.begin(), options.kinds.end(), e.kind) ==
                                                 options.kinds.end();
                                        }),
                         events.end());
          s.events = std::make_unique<VectorEvents>(std::move(events), std::move(error), text.size());
          streams.push_back(std::move(s));
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
    auto advance = [&](Stream& s) {
      s.head = s.events->NextRef();
      s.has_head = s.head != nullptr;
      if (s.has_head && s.head->ts && !s.head->ts_is_time_of_day && !have_global_day) {
        global_day = std::floor(*s.head->ts / 86400.0) * 86400.0;
        have_global_day = true;
      }
    };
    auto deliver = [&](Stream& s, size_t i, double key) {
      ++s.count;
      return keyed ? keyed->OnKeyedEvent(*s.head, key, stream_base + i) : sink->OnEvent(*s.head);
    };
    using Item = std::pair<double, size_t>;  // key, stream
    auto cmp = [](const Item& a, const Item& b) { return a.first > b.first || (a.first == b.first && a.second > b.second); };
    std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
    const bool one = streams.size() == 1 && usable == 1;
    // A day known before the merge starts (a dump's records): a log's
    // time-of-day lines are placed on it from its first line, not at day 0
    // before every dated event.
    for (size_t i = 0; i < streams.size() && !have_global_day; ++i)
      if (std::optional<double> t = streams[i].events->DatedTimeHint()) {
        global_day = std::floor(*t / 86400.0) * 86400.0;
        have_global_day = true;
      }
    for (size_t i = 0; i < streams.size() && !stopped; ++i) {
      advance(streams[i]);
      if (streams[i].has_head && !one) {
        heap.push({MergeKey(*streams[i].head, &streams[i].clock, have_global_day ? &global_day : nullptr), i});
      }
    }
    if (one && !stopped) {
      // One stream: its own order is the merge order, and no key is needed.
      Stream& s = streams[0];
      while (s.has_head) {
        if (!deliver(s, 0, 0)) {  // the sink asked to stop
          stopped = true;
          break;
        }
        s.head = s.events->NextRef();
        s.has_head = s.head != nullptr;
      }
    }
    while (!heap.empty() && !stopped) {
      auto [key, i] = heap.top();
      heap.pop();
      Stream& s = streams[i];
      if (!deliver(s, i, key)) {  // the sink asked to stop
        stopped = true;
        break;
      }
      advance(s);
      if (s.has_head) heap.push({MergeKey(*s.head, &s.clock, have_global_day ? &global_day : nullptr), i});
    }
    for (Stream& s : streams) {
      InputReport& r = (*reports)[s.report];
      r.bytes = s.events->bytes();
      r.lines = s.events->lines();
      r.long_lines = s.events->long_lines();
      r.events = s.count;
      if (!s.events->error().empty()) r.error = s.events->error();
      if (r.bytes > 0) any_read = true;
    }
    stream_base += streams.size();
    if (groups_read) ++*groups_read;
    if (stopped) {
      // The sink stopped early: the inputs not reached are listed, unread.
      for (; next_input < expanded.size(); ++next_input) {
        InputReport r;
        r.path = expanded[next_input].path;
        r.error = expanded[next_input].error;
        reports->push_back(std::move(r));
      }
      break;
    }
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

}  // namespace

Status ParseRun(const std::vector<std::string>& inputs, const FormatSet& formats, const ParseOptions& options,
                EventSink* sink, std::vector<InputReport>* reports) {
  return ParseRunImpl(inputs, formats, options, sink, nullptr, reports);
}

namespace {

// Keeps what the rules read of a run of any length (bounded memory): per
// group of events (a kind as printed by one producer: kind, rank, local rank,
// tp/dp rank, pid and stream; batch_stats and http_access are one group per
// kind) the first and the last few events, in stream order, and counts the
// ones between. A group's dropped events all lie between its head and its
// tail, so "first", "last", phases, first errors and "what came after" stay
// exact; sums over every event (counts) come from RunTotals.
//
// Memory: the kept events are charged by their size; past
// ParseOptions::keep_bytes every group's head and tail are halved (the events
// let go become part of the dropped middle), down to one event each. Past
// kMaxGroups producers, new ones of a kind share one group.
//
// A dump's events (IsDumpSummaryKind) are kept whole, outside the groups:
// their reader already keeps a small summary per rank (the newest records of
// each process group), and thinning it would move a rank's front back (at
// 1,024 ranks the halved caps left rank 17 "at collective 1758" of 1999).
// They are charged to the budget, so the logs' events give way first.
class MemorySink : public KeyedSink {
 public:
  MemorySink(ParsedRun* run, const ParseOptions& o)
      : run_(run), keep_hv_(o.keep_high_volume), keep_(o.keep_per_group), budget_(o.keep_bytes) {}

  // A group's caps at the run's current scale (0 stays 0, else at least 1).
  size_t Cap(size_t cap) const { return cap == 0 ? 0 : std::max<size_t>(1, cap >> shift_); }

  bool OnKeyedEvent(const Event& e, double key, size_t stream) override {
    uint64_t seq = seq_++;
    ++run_->totals.events;
    if (e.rank >= 0 && e.rank < RunTotals::kMaxRanksSeen) {
      auto& seen = run_->totals.rank_seen;
      if (seen.size() <= static_cast<size_t>(e.rank)) seen.resize(e.rank + 1);
      seen[e.rank] = 1;
    }
    if (IsDumpSummaryKind(e.kind)) {
      whole_.push_back({seq, key, stream, e});
      Charge(whole_.back().e);
      if (bytes_ > budget_) Shrink();
      return true;
    }
    Group& g = GroupOf(e);
    if (g.head.size() < g.head_cap) {
      g.head.push_back({seq, key, stream, e});
      Charge(g.head.back().e);
    } else if (g.tail_cap == 0) {
      ++g.dropped;
    } else if (g.tail.size() < g.tail_cap) {
      g.tail.push_back({seq, key, stream, e});
      Charge(g.tail.back().e);
    } else {
      // The ring's oldest slot is refilled in place; it joins the dropped middle.
      if (g.next >= g.tail.size()) g.next = 0;
      auto& slot = g.tail[g.next++];
      bytes_ -= Size(slot.e);
      slot.seq = seq;
      slot.key = key;
      slot.stream = stream;
      CopyEventReusing(e, &slot.e);
      Charge(slot.e);
      ++g.dropped;
    }
    if (bytes_ > budget_) Shrink();
    return true;
  }

  // `remerge`: the inputs were read a group at a time, so the kept events are
  // merged again by their keys, as ParseRun merges open streams.
  void Finish(bool remerge) {
    std::vector<Kept> kept;
    struct Mark {
      uint64_t seq;  // the oldest kept tail event: every dropped one came before it
      uint64_t count;
      std::string kind;
    };
    std::vector<Mark> marks;
    for (auto& [key, g] : groups_) {
      Unroll(&g);
      if (g.dropped > 0) {
        run_->dropped[g.kind] = run_->dropped.value(g.kind, uint64_t{0}) + g.dropped;
        uint64_t after = g.tail.empty() ? kNone : g.tail.front().seq;
        marks.push_back({after, g.dropped, g.kind});
      }
      for (auto& h : g.head) kept.push_back(std::move(h));
      for (auto& t : g.tail) kept.push_back(std::move(t));
    }
    groups_.clear();
    recent_ = {};
    for (auto& w : whole_) kept.push_back(std::move(w));
    whole_.clear();
    std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) { return a.seq < b.seq; });
    std::vector<size_t> order(kept.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (remerge) order = Remerge(kept);
    run_->events.reserve(kept.size());
    std::map<uint64_t, size_t> index_of;  // seq of a marked event -> its index in events
    for (const Mark& m : marks) index_of[m.seq] = 0;
    for (size_t i : order) {
      if (auto it = index_of.find(kept[i].seq); it != index_of.end()) it->second = run_->events.size();
      run_->events.push_back(std::move(kept[i].e));
    }
    for (const Mark& m : marks) {
      size_t before = m.seq == kNone ? run_->events.size() : index_of[m.seq];
      run_->totals.dropped.push_back({m.kind, before, m.count});
    }
  }

 private:
  static constexpr size_t kMaxGroups = 4096;
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  struct Kept {
    uint64_t seq;   // place in the order events arrived
    double key;     // merge key (ParseRun)
    size_t stream;  // input stream, counted over every group of inputs
    Event e;
  };

  // The k-way merge of ParseRun over the kept events of every stream
  // (`kept` in arrival order, so each stream's own order): the order to emit them in.
  static std::vector<size_t> Remerge(const std::vector<Kept>& kept) {
    std::map<size_t, std::vector<size_t>> of_stream;
    for (size_t i = 0; i < kept.size(); ++i) of_stream[kept[i].stream].push_back(i);
    using Item = std::pair<double, size_t>;  // key, stream
    auto cmp = [](const Item& a, const Item& b) { return a.first > b.first || (a.first == b.first && a.second > b.second); };
    std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
    std::map<size_t, size_t> next;  // stream -> its next kept event
    for (auto& [st, list] : of_stream) {
      heap.push({kept[list[0]].key, st});
      next[st] = 0;
    }
    std::vector<size_t> order;
    order.reserve(kept.size());
    while (!heap.empty()) {
      size_t st = heap.top().second;
      heap.pop();
      const auto& list = of_stream[st];
      order.push_back(list[next[st]]);
      if (++next[st] < list.size()) heap.push({kept[list[next[st]]].key, st});
    }
    return order;
  }
  struct Group {
    std::string kind;
    size_t cap = 0;  // as configured; head_cap and tail_cap are it at the run's scale
    size_t head_cap = 0, tail_cap = 0;
    std::vector<Kept> head;
    std::vector<Kept> tail;  // a ring once full
    size_t next = 0;         // the ring's oldest slot
    uint64_t dropped = 0;
  };

  static bool IsHighVolume(const std::string& kind) { return kind == "batch_stats" || kind == "http_access"; }

  Group& GroupOf(const Event& e) {
    // Most events of a serving log are of the two high-volume kinds, one
    // group each: found without building a key or hashing it.
    const bool high_volume = IsHighVolume(e.kind);
    if (high_volume) {
      for (const RecentGroup& r : recent_)
        if (r.group && SameText(r.kind, e.kind)) return *r.group;
    }
    key_.assign(e.kind);
    if (!IsHighVolume(e.kind)) {
      key_ += '\0';
      for (int v : {e.rank, e.local_rank, e.tp_rank, e.dp_rank, e.pp_rank, e.pid, e.source}) {
        key_.append(reinterpret_cast<const char*>(&v), sizeof v);
      }
      key_ += e.process;
      if (groups_.size() >= kMaxGroups && !groups_.count(key_)) key_.assign(e.kind + std::string(1, '\1'));
    }
    auto [it, fresh] = groups_.try_emplace(key_);
    if (fresh) {
      Group& g = it->second;
      g.kind = e.kind;
      size_t cap = IsHighVolume(e.kind) ? keep_hv_ : keep_;
      g.cap = cap;
      g.head_cap = g.tail_cap = Cap(cap);
    }
    if (high_volume) {
      RecentGroup& r = recent_[recent_[0].group ? 1 : 0];
      r.kind = e.kind;
      r.group = &it->second;  // an unordered_map's elements stay put
    }
    return it->second;
  }

  // What one kept event costs, roughly (the struct, its strings, its decoded values).
  static size_t Size(const Event& e) {
    size_t n = sizeof(Event) + 512 + e.text.capacity() + e.file.capacity() + e.host.capacity() +
               e.process.capacity() + 4 * (e.deferred_fields_.spans.size() + e.deferred_prefix_.spans.size());
    for (const auto& l : e.extra_lines) n += sizeof(std::string) + l.capacity();
    return n;
  }
  void Charge(const Event& e) { bytes_ += Size(e); }

  // The ring in age order (oldest first).
  static void Unroll(Group* g) {
    if (g->next > 0 && g->next < g->tail.size())
      std::rotate(g->tail.begin(), g->tail.begin() + static_cast<std::ptrdiff_t>(g->next), g->tail.end());
    g->next = 0;
  }

  // Halve every group's head and tail until the kept events fit the budget.
  void Shrink() {
    while (bytes_ > budget_ && shift_ < 63 && (Cap(keep_) > 1 || Cap(keep_hv_) > 1)) {
      ++shift_;
      for (auto& [key, g] : groups_) {
        Unroll(&g);
        g.head_cap = g.tail_cap = Cap(g.cap);
        // The head's newest and the tail's oldest join the dropped middle.
        while (g.head.size() > g.head_cap) {
          bytes_ -= Size(g.head.back().e);
          g.head.pop_back();
          ++g.dropped;
        }
        if (g.tail.size() > g.tail_cap) {
          size_t cut = g.tail.size() - g.tail_cap;
          for (size_t i = 0; i < cut; ++i) bytes_ -= Size(g.tail[i].e);
          g.tail.erase(g.tail.begin(), g.tail.begin() + static_cast<std::ptrdiff_t>(cut));
          g.dropped += cut;
        }
        g.head.shrink_to_fit();
        g.tail.shrink_to_fit();
      }
    }
    if (bytes_ > budget_) budget_ = bytes_ + bytes_ / 2;  // one event per end of each group is the floor
  }

  ParsedRun* run_;
  size_t keep_hv_, keep_;
  size_t budget_;
  int shift_ = 0;  // caps are divided by 2^shift_ (raised by Shrink)
  size_t bytes_ = 0;
  uint64_t seq_ = 0;
  std::string key_;
  std::unordered_map<std::string, Group> groups_;
  struct RecentGroup {
    std::string kind;
    Group* group = nullptr;
  };
  std::array<RecentGroup, 2> recent_;  // of the high-volume kinds (GroupOf)
  std::vector<Kept> whole_;  // the dumps' events, kept whole
};

}  // namespace

StatusOr<ParsedRun> ParseRunToMemory(const std::vector<std::string>& inputs, const FormatSet& formats,
                                     const ParseOptions& options) {
  ParsedRun run;
  MemorySink sink(&run, options);
  size_t groups = 0;
  Status s = ParseRunImpl(inputs, formats, options, &sink, &sink, &run.inputs, &groups);
  if (!s.ok()) return s;
  sink.Finish(groups > 1);
  ResolveRanks(&run.events, &run.process_ranks);
  return run;
}

}  // namespace tpt
