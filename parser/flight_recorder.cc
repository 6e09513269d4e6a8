// flight_recorder.cc: a flight-recorder dump -> fr_* events; see flight_recorder.h.
#include "parser/flight_recorder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>

#include "parser/pickle_reader.h"
#include "parser/read_whole.h"

namespace tpt {
namespace {

// torch's keys (FlightRecorder.hpp DEFINE_CONSTANT): the top dict holds
// "version" and "pg_config" (pickle: first; JSON: keys sorted, so "entries"
// and "comm_lib_version" come first).
bool HasTorchKeys(std::string_view head) {
  auto has = [&](std::string_view k) { return head.find(k) != std::string_view::npos; };
  return has("pg_config") || (has("entries") && has("collective_seq_id")) ||
         (has("version") && has("pg_status"));
}

// A number that JSON dumps write as a string (pg_status) or as an int;
// kNoInt when absent or not a number.
constexpr int64_t kNoInt = std::numeric_limits<int64_t>::min();
int64_t Int(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end()) return kNoInt;
  const nlohmann::json& v = *it;
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return static_cast<int64_t>(v.get<double>());
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() > 18) return kNoInt;
    size_t k = s[0] == '-' ? 1 : 0;
    if (k == s.size()) return kNoInt;
    for (size_t i = k; i < s.size(); ++i)
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return kNoInt;
    return std::stoll(s);
  }
  return kNoInt;
}

std::string Str(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The keys of a record the choice of records to keep reads (the newest per
// process group, p2p apart) and the p2p counts (FlightRecorderEvents).
constexpr const char* kRecordKeysForChoice[] = {"process_group", "pg_id", "is_p2p", "profiling_name", "record_id"};

// A pickled dump as JSON, but for its records: each only with the keys above
// (a dump holds thousands with 9 frames each, of which 8 a group are used;
// converting them all was most of the time: bench/RESULTS.md).
StatusOr<nlohmann::json> SummaryJson(const PickleRef& root) {
  if (!root.is_dict()) return nlohmann::json::array();  // "not a dict", said by the caller
  nlohmann::json dump = nlohmann::json::object();
  for (const char* k : {"version", "pg_config", "pg_status", "comm_lib_version", "nccl_version"}) {
    if (const PickleRef v = root[k]) {
      auto j = v.ToJson();
      if (!j.ok()) return j.status();
      dump[k] = std::move(*j);
    }
  }
  const PickleRef records = root["entries"];
  if (!records) return dump;
  if (!records.is_list()) {
    dump["entries"] = nullptr;
    return dump;
  }
  nlohmann::json entries = nlohmann::json::array();
  for (size_t i = 0; i < records.size(); ++i) {
    const PickleRef r = records[i];
    nlohmann::json brief = r.is_dict() ? nlohmann::json::object() : nlohmann::json();
    if (r.is_dict())
      for (const char* k : kRecordKeysForChoice)
        if (const PickleRef v = r[k]) {
          auto j = v.ToJson();
          if (!j.ok()) return j.status();
          brief[k] = std::move(*j);
        }
    entries.push_back(std::move(brief));
  }
  dump["entries"] = std::move(entries);
  return dump;
}

// Frames of torch's own code and the launcher's: the "where" is the first other one.
}  // namespace

bool IsLibraryFrame(const std::string& file) {
  // py-spy prints paths relative to sys.path ("torch/distributed/...", "threading.py").
  const std::string f = "/" + file;
  for (const char* p : {"/torch/", "/multiprocessing/", "/threading.py", "<string>", "/runpy.py", "/concurrent/"})
    if (f.find(p) != std::string::npos) return true;
  // The standard library (lib/python3.x/...), not what is installed beside it (site-packages: the server).
  return file.find("/lib/python") != std::string::npos && file.find("-packages/") == std::string::npos;
}

namespace {

std::string FrameText(const nlohmann::json& f) {
  if (!f.is_object()) return "";
  std::string name = Str(f, "name"), file = Str(f, "filename");
  const int64_t line = Int(f, "line");
  return name + " (" + file + (line != kNoInt ? ":" + std::to_string(line) : "") + ")";
}

// A p2p record's profiling_name: "nccl:send 1->2" (src->dst) or
// "nccl:recv 3<-0" (dst<-src), ranks of the process group (torch's own
// analyser reads them so: torch/distributed/flight_recorder/components/
// types.py, Op). Gives "send"/"recv" and the peer's group rank, or "".
std::string P2pOp(const std::string& name, int64_t* peer) {
  const size_t colon = name.find(':'), space = name.find(' ', colon == std::string::npos ? 0 : colon);
  if (colon == std::string::npos || space == std::string::npos) return "";
  const std::string type = name.substr(colon + 1, space - colon - 1), ends = name.substr(space + 1);
  const char* sep = type == "send" ? "->" : type == "recv" ? "<-" : nullptr;
  const size_t at = sep ? ends.find(sep) : std::string::npos;
  if (at == std::string::npos) return "";
  const std::string other = ends.substr(at + 2);
  if (other.empty() || other.size() > 9 || other.find_first_not_of("0123456789") != std::string::npos) return "";
  *peer = std::stoll(other);
  return type;
}

Event Base(const std::string& kind, const std::string& path, int source, int rank, uint64_t line) {
  Event e;
  e.kind = kind;
  e.family = "torch_fr";
  e.pattern_id = "flight_recorder";
  e.source = source;
  e.file = path;
  e.line = line;
  e.rank = rank;
  return e;
}

}  // namespace

bool LooksLikeFlightRecorder(std::string_view head) {
  if (LooksLikePickle(head)) {
    // PROTO n, then (FRAME) the top dict: EMPTY_DICT, or MARK ... for DICT.
    size_t k = 2;
    if (head.size() > k + 9 && static_cast<uint8_t>(head[k]) == 0x95) k += 9;
    return head.size() > k && (head[k] == '}' || head[k] == '(') && HasTorchKeys(head.substr(0, 4096));
  }
  size_t k = 0;
  while (k < head.size() && std::isspace(static_cast<unsigned char>(head[k]))) ++k;
  return k < head.size() && head[k] == '{' && HasTorchKeys(head);
}

bool IsDumpSummaryKind(const std::string& kind) {
  return kind == "fr_dump" || kind == "fr_pg_status" || kind == "fr_collective";
}

int RankFromDumpName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".xz", ".zst", ".json", ".pkl", ".pickle", ".bin", ".txt", ".log", ".out"}) {
    const size_t n = std::char_traits<char>::length(ext);
    if (name.size() > n && name.compare(name.size() - n, n, ext) == 0) name.resize(name.size() - n);
  }
  size_t end = name.size(), begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  if (begin == end || end - begin > 6) return -1;
  return std::stoi(name.substr(begin, end - begin));
}

std::vector<Event> FlightRecorderEvents(std::string_view bytes, const std::string& path, int source, std::string* error) {
  std::vector<Event> out;
  const bool pickle = LooksLikePickle(bytes);
  std::string cut;
  nlohmann::json dump;
  std::optional<PickleDoc> doc;  // a pickle's records, converted to JSON only where kept
  if (pickle) {
    auto d = ReadPickleDoc(bytes, path, &cut);
    if (!d.ok()) {
      *error = d.status().message();
      return out;
    }
    doc = std::move(*d);
    auto v = SummaryJson(doc->root());
    if (!v.ok()) {
      *error = v.status().message();
      return out;
    }
    dump = std::move(*v);
  } else {
    dump = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (dump.is_discarded()) {
      // A JSON dump cut mid-file: nlohmann reads no prefix, so the entries before the cut are lost.
      *error = path + ": a flight-recorder JSON dump that does not parse (cut or damaged); dump it again, "
                      "or use the pickle form (TORCH_NCCL_DUMP_ON_TIMEOUT writes it), which reads up to a cut";
      return out;
    }
  }
  if (!dump.is_object()) {
    *error = path + ": not a flight-recorder dump (its top value is not a dict)";
    return out;
  }
  const int rank = RankFromDumpName(path);
  const std::string version = Str(dump, "version");
  const nlohmann::json empty = nlohmann::json::object();
  if (!dump.contains("entries") || !dump["entries"].is_array()) dump["entries"] = nlohmann::json::array();
  nlohmann::json& entries_ref = dump["entries"];  // a pickle's kept records are made whole in it, below
  const nlohmann::json& entries = entries_ref;
  const nlohmann::json& pg_status = dump.contains("pg_status") && dump["pg_status"].is_object() ? dump["pg_status"] : empty;
  const nlohmann::json& pg_config = dump.contains("pg_config") && dump["pg_config"].is_object() ? dump["pg_config"] : empty;

  Event head = Base("fr_dump", path, source, rank, 0);
  head.Set("version", version);
  head.Set("format", pickle ? "pickle" : "json");
  head.Set("records", entries.is_array() ? entries.size() : 0);
  head.Set("process_groups", pg_status.size());
  head.Set("cut", !cut.empty());
  if (std::string lib = Str(dump, "comm_lib_version"); !lib.empty()) head.Set("comm_lib_version", lib);
  if (std::string lib = Str(dump, "nccl_version"); !lib.empty()) head.Set("comm_lib_version", lib);
  // pg_config: name -> {name, desc, ranks: "[0, 1]"}; the ranks of each group.
  nlohmann::json groups = nlohmann::json::object();
  for (auto it = pg_config.begin(); it != pg_config.end(); ++it)
    if (it->is_object()) groups[it.key()] = Str(*it, "ranks");
  head.Set("pg_ranks", groups);
  head.text = "flight recorder dump (torch format " + (version.empty() ? std::string("?") : version) + ", " +
              (pickle ? "pickle" : "json") + "): " + std::to_string(entries.size()) + " collective record(s), " +
              std::to_string(pg_status.size()) + " process group(s)" + (cut.empty() ? "" : ", cut");
  out.push_back(std::move(head));

  for (auto it = pg_status.begin(); it != pg_status.end(); ++it) {
    if (!it->is_object()) continue;
    Event e = Base("fr_pg_status", path, source, rank, 0);
    e.Set("pg_id", it.key());
    std::string text = "pg " + it.key() + ":";
    for (const char* k : {"last_enqueued_collective", "last_started_collective", "last_completed_collective"}) {
      const int64_t v = Int(*it, k);
      std::string field = std::string(k).substr(5, std::string(k).find('_', 5) - 5);  // enqueued, started, completed
      if (v != kNoInt) e.Set("last_" + field, v);
      text += " last " + field + " " + (v != kNoInt ? std::to_string(v) : std::string("?"));
    }
    e.text = text;
    out.push_back(std::move(e));
  }

  // Memory follows the ranks, not the buffer: per process group only the
  // newest kKeepRecords collectives and as many p2p records become events (the
  // hang is at the front), and only the newest kKeepFrames carry their frames.
  std::map<std::string, size_t> newer;  // pg -> records seen so far from the newest
  std::vector<uint8_t> keep(entries.size(), 1), frames_kept(entries.size(), 1);
  size_t left_out = 0;
  for (size_t i = entries.size(); i-- > 0;) {
    const nlohmann::json& r = entries[i];
    if (!r.is_object()) continue;
    std::string pg = r.contains("process_group") ? r["process_group"].dump() : std::string();
    if (r.contains("pg_id")) pg += "/" + r["pg_id"].dump();
    if (r.contains("is_p2p") && r["is_p2p"].is_boolean() && r["is_p2p"].get<bool>()) pg += "/p2p";
    const size_t n = newer[pg]++;
    if (n >= kKeepRecords) {
      keep[i] = 0;
      ++left_out;
    }
    if (n >= kKeepFrames) frames_kept[i] = 0;
  }
  if (left_out > 0) out.front().Set("records_left_out", left_out);
  // A pickle's records were read as their keys the choice above needs: the
  // kept ones now whole (frames and all).
  if (doc) {
    const PickleRef records = doc->root()["entries"];
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!keep[i]) continue;
      auto whole = records[i].ToJson();
      if (!whole.ok()) {
        *error = whole.status().message();
        return {};
      }
      entries_ref[i] = std::move(*whole);
    }
  }
  // torch's ring buffer overwrote older records when the first one kept is
  // not record 0: counts from the dump's start are then not the job's.
  if (!entries.empty() && entries[0].is_object()) {
    const int64_t first = Int(entries[0], "record_id");
    out.front().Set("wrapped", first != kNoInt && first > 0);
  }
  // Per p2p record, how many of its kind with its peer the dump holds up to
  // it (every record counted, kept or not): the k-th send of a to b pairs
  // with the k-th recv of b from a.
  std::vector<int64_t> p2p_nth(entries.size(), 0);
  {
    std::map<std::string, int64_t> seen;  // pg + op + peer -> count
    for (size_t i = 0; i < entries.size(); ++i) {
      const nlohmann::json& r = entries[i];
      if (!r.is_object() || !(r.contains("is_p2p") && r["is_p2p"].is_boolean() && r["is_p2p"].get<bool>())) continue;
      int64_t peer = -1;
      const std::string type = P2pOp(Str(r, "profiling_name"), &peer);
      if (type.empty()) continue;
      std::string key = (r.contains("process_group") ? r["process_group"].dump() : std::string()) + type + std::to_string(peer);
      p2p_nth[i] = ++seen[key];
    }
  }
  size_t skipped = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!keep[i]) continue;
    const nlohmann::json& r = entries[i];
    if (!r.is_object() || !r.contains("collective_seq_id") || !r.contains("profiling_name")) {
      ++skipped;  // a record cut before its keys
      continue;
    }
    Event e = Base("fr_collective", path, source, rank, i + 1);
    const int64_t seq = Int(r, "collective_seq_id"), p2p = Int(r, "p2p_seq_id"), record = Int(r, "record_id");
    const std::string op = Str(r, "profiling_name"), state = Str(r, "state");
    std::string pg_name, pg_desc;
    if (auto pg = r.find("process_group"); pg != r.end() && pg->is_array()) {
      if (pg->size() > 0 && (*pg)[0].is_string()) pg_name = (*pg)[0].get<std::string>();
      if (pg->size() > 1 && (*pg)[1].is_string()) pg_desc = (*pg)[1].get<std::string>();
    }
    const int64_t pg_id = Int(r, "pg_id");
    if (seq != kNoInt) e.Set("seq", seq);
    if (p2p != kNoInt) e.Set("p2p_seq", p2p);
    if (record != kNoInt) e.Set("record_id", record);
    if (pg_id != kNoInt) e.Set("pg_id", pg_id);
    if (pg_name.empty() && pg_id != kNoInt) pg_name = std::to_string(pg_id);
    e.Set("pg", pg_name);
    if (!pg_desc.empty()) e.Set("pg_desc", pg_desc);
    e.Set("op", op);
    e.Set("state", state);
    const bool is_p2p = r.contains("is_p2p") && r["is_p2p"].is_boolean() && r["is_p2p"].get<bool>();
    e.Set("is_p2p", is_p2p);
    if (int64_t peer = -1; is_p2p && !P2pOp(op, &peer).empty()) {
      e.Set("p2p_op", P2pOp(op, &peer));
      e.Set("peer", peer);
      e.Set("p2p_nth", p2p_nth[i]);
    }
    for (const char* k : {"input_sizes", "output_sizes", "input_dtypes", "output_dtypes"})
      if (r.contains(k)) e.Set(k, r[k]);
    if (const int64_t t = Int(r, "time_created_ns"); t != kNoInt && t > 0) e.ts = static_cast<double>(t) / 1e9;
    std::string where;
    if (auto f = r.find("frames"); frames_kept[i] && f != r.end() && f->is_array()) {
      nlohmann::json frames = nlohmann::json::array();
      for (const auto& fr : *f) {
        if (frames.size() >= 16) break;
        std::string t = FrameText(fr);
        frames.push_back(t);
        if (where.empty() && fr.is_object() && !IsLibraryFrame(Str(fr, "filename"))) where = t;
      }
      e.Set("frames", frames);
      if (!where.empty()) e.Set("where", where);
    }
    e.text = "record " + (record != kNoInt ? std::to_string(record) : std::to_string(i)) + ": pg " + pg_name +
             (pg_desc.empty() ? "" : " (" + pg_desc + ")") +
             (is_p2p ? " p2p seq " + (p2p != kNoInt ? std::to_string(p2p) : std::string("?"))
                     : " seq " + (seq != kNoInt ? std::to_string(seq) : std::string("?"))) +
             " " + op + " in " + (r.contains("input_sizes") ? r["input_sizes"].dump() : "?") + " " + state +
             (where.empty() ? "" : ", called from " + where);
    out.push_back(std::move(e));
  }
  if (!cut.empty()) {
    *error = cut + (skipped ? " (" + std::to_string(skipped) + " record(s) cut before their keys were left out)" : "");
  } else if (skipped) {
    *error = path + ": " + std::to_string(skipped) + " record(s) without collective_seq_id or profiling_name were left out";
  }
  if (rank < 0) {
    std::string w = path + ": a flight-recorder dump whose file name ends in no rank (torch names it "
                           "TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank); its records are read with the rank unknown: "
                           "rename it to end in its rank";
    *error = error->empty() ? w : *error + "; " + w;
  }
  return out;
}

std::unique_ptr<EventStream> ReadFlightRecorder(std::unique_ptr<ByteSource> source, const std::string& path,
                                                int source_index, const std::vector<std::string>& kinds) {
  std::string bytes, error;
  if (Status read = ReadWhole(source.get(), kMaxFlightRecorderBytes, &bytes); !read.ok()) {
    if (bytes.size() > kMaxFlightRecorderBytes)
      return std::make_unique<VectorEvents>(
          std::vector<Event>{}, path + ": a flight-recorder dump larger than " +
                                    std::to_string(kMaxFlightRecorderBytes >> 20) +
                                    " MiB is not read (torch keeps TORCH_NCCL_TRACE_BUFFER_SIZE records, 2000 by "
                                    "default); pass a smaller dump",
          bytes.size());
    error = read.message();
  }
  std::string read_error;
  std::vector<Event> events = FlightRecorderEvents(bytes, path, source_index, &read_error);
  if (!kinds.empty()) {
    events.erase(std::remove_if(events.begin(), events.end(),
                                [&](const Event& e) { return std::find(kinds.begin(), kinds.end(), e.kind) == kinds.end(); }),
                 events.end());
  }
  if (!read_error.empty()) error = error.empty() ? read_error : error + "; " + read_error;
  return std::make_unique<VectorEvents>(std::move(events), std::move(error), bytes.size());
}

}  // namespace tpt
