// nccl_ras.cc: ncclras output -> ras_* events; see nccl_ras.h.
#include "parser/nccl_ras.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

namespace tpt {
namespace {

// src/ras/client_support.cc (NCCL 2.30.7), the lines read:
// "NCCL version %s compiled with CUDA %d.%d"
const RE2& Version() {
  static const RE2 re(R"re(^NCCL version (\S+) compiled with CUDA (\S+)\s*$)re");
  return re;
}
// The job summary's values under "(total)   per node  per process    (total)  (total)".
const RE2& JobRow() {
  static const RE2 re(R"re(^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$)re");
  return re;
}
// "%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s": group, comms, nodes, ranks per
// node, ranks per comm, ranks in group, status, errors.
const RE2& GroupRow() {
  static const RE2 re(R"re(^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+([A-Z_,]+)\s+([A-Z_,]+)\s*$)re");
  return re;
}
// "#%d-%d (%016lx) INCOMPLETE" (and ERROR, MISMATCH).
const RE2& CommHeader() {
  static const RE2 re(R"re(^#(\d+)-(\d+) \(([0-9a-fA-F]+)\) ([A-Z_,]+)\s*$)re");
  return re;
}
// "  Rank %d -- GPU %s managed by process %d on node %s"
const RE2& RankLine() {
  static const RE2 re(R"re(^\s+Rank (\d+)(?: has status \S+)? -- (?:GPU (.+?) managed by process (\d+) on node (\S+)|\[process information not found\])\s*$)re");
  return re;
}
// NCCL 2.24's "  The missing rank: 21" / "The missing ranks: 3, 21".
const RE2& MissingRanks() {
  static const RE2 re(R"re(^\s+The missing ranks?: ([\d, ]+)\s*$)re");
  return re;
}
// "  Process %d on node %s managing GPU%s %s" (the DEAD and INCOMPLETE lists).
const RE2& ProcessLine() {
  static const RE2 re(R"re(^\s+Process (\d+) on node (\S+) managing GPUs? (.+?)\s*$)re");
  return re;
}
// Monitor mode: "[2025-12-19 13:07:07] PEER_DEAD: Process %d on node %s managing GPU %s".
const RE2& MonitorDead() {
  static const RE2 re(R"re(^\s*\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] PEER_DEAD: Process (\d+) on node (\S+) managing GPUs? (.+?)\s*$)re");
  return re;
}

double Seconds(const std::string& ts) {  // "YYYY-MM-DD HH:MM:SS", as UTC
  std::tm tm{};
  if (sscanf(ts.c_str(), "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
             &tm.tm_sec) != 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

Event Base(const std::string& kind, const std::string& path, int source, uint64_t line, std::string_view text) {
  Event e;
  e.kind = kind;
  e.family = "nccl_ras";
  e.pattern_id = "ncclras";
  e.source = source;
  e.file = path;
  e.line = line;
  e.text = std::string(text);
  return e;
}

std::string Key(const std::string& pid, const std::string& node) { return pid + "@" + node; }

// Ranks of the largest communicator are the job's global ranks; the others'
// are theirs alone (comm_rank), so only the former carry a rank.
void PlaceRanks(std::vector<Event>* out, const std::set<std::string>& dead) {
  int64_t largest = 0;
  for (const Event& e : *out)
    if (e.kind == "ras_missing_rank" && e.Get("comm_size").is_number())
      largest = std::max(largest, static_cast<int64_t>(e.Get("comm_size").number()));
  for (Event& e : *out) {
    if (e.kind != "ras_missing_rank") continue;
    const bool whole = !e.Get("comm_size").is_number() || static_cast<int64_t>(e.Get("comm_size").number()) == largest;
    if (whole) e.rank = static_cast<int>(e.Get("comm_rank").number());
    if (e.Get("pid").is_string() && dead.count(Key(e.Get("pid").string(), e.Get("node").string())))
      e.Set("dead", true);
  }
}

std::vector<Event> JsonEvents(std::string_view text, const std::string& path, int source, std::string* error) {
  std::vector<Event> out;
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = path + ": NCCL RAS JSON output that does not parse (cut or damaged); run `ncclras -f json` again";
    return out;
  }
  Event head = Base("ras_status", path, source, 0, "NCCL RAS status (json)");
  if (j.contains("nccl_version") && j["nccl_version"].is_string()) head.Set("nccl_version", j["nccl_version"]);
  if (j.contains("timestamp") && j["timestamp"].is_string()) {
    head.Set("timestamp", j["timestamp"]);
    if (double t = Seconds(j["timestamp"].get<std::string>())) head.ts = t;
  }
  out.push_back(head);
  std::set<std::string> dead;
  if (!j.contains("communicators") || !j["communicators"].is_array()) return out;
  for (const auto& c : j["communicators"]) {
    if (!c.is_object() || !c.contains("missing_ranks") || !c["missing_ranks"].is_array()) continue;
    std::string hash = c.contains("hash") && c["hash"].is_string() ? c["hash"].get<std::string>() : "";
    if (hash.rfind("0x", 0) == 0) hash = hash.substr(2);  // as the text report prints it (%016lx)
    for (const auto& m : c["missing_ranks"]) {
      if (!m.is_object() || !m.contains("rank") || !m["rank"].is_number_integer()) continue;
      const int rank = m["rank"].get<int>();
      const std::string node = m.value("host", std::string());
      const std::string pid = m.contains("pid") && m["pid"].is_number_integer() ? std::to_string(m["pid"].get<int64_t>()) : "";
      const nlohmann::json status = m.value("status", nlohmann::json::object());
      const bool is_dead = status.is_object() && status.value("considered_dead", false);
      Event e = Base("ras_missing_rank", path, source, 0,
                     "communicator " + hash + ": rank " + std::to_string(rank) + " missing" +
                         (pid.empty() ? "" : ", process " + pid + " on node " + node) + (is_dead ? ", considered dead" : ""));
      e.ts = head.ts;
      e.Set("comm_hash", hash);
      e.Set("comm_rank", rank);
      if (c.contains("size") && c["size"].is_number_integer()) e.Set("comm_size", c["size"]);
      if (!pid.empty()) {
        e.Set("pid", pid);
        e.Set("node", node);
      }
      if (m.contains("cuda_dev") && m["cuda_dev"].is_number_integer()) e.Set("gpu", std::to_string(m["cuda_dev"].get<int>()));
      e.Set("unresponsive", status.is_object() && status.value("unresponsive", false));
      out.push_back(std::move(e));
      if (is_dead && !pid.empty() && dead.insert(Key(pid, node)).second) {
        Event p = Base("ras_process", path, source, 0, "process " + pid + " on node " + node + " considered dead");
        p.ts = head.ts;
        p.Set("pid", pid);
        p.Set("node", node);
        p.Set("state", "dead");
        out.push_back(std::move(p));
      }
    }
  }
  PlaceRanks(&out, dead);
  return out;
}

}  // namespace

bool LooksLikeNcclRas(std::string_view head) {
  size_t k = 0;
  while (k < head.size() && std::isspace(static_cast<unsigned char>(head[k]))) ++k;
  head.remove_prefix(k);
  if (head.rfind("NCCL version ", 0) == 0) {
    const size_t nl = head.find('\n');
    const std::string_view first = head.substr(0, nl);
    return first.find(" compiled with CUDA ") != std::string_view::npos &&
           (head.find("Job summary") != std::string_view::npos || head.find("Communicators...") != std::string_view::npos ||
            head.find("Gathering data about the RAS network") != std::string_view::npos);
  }
  if (head.rfind("RAS Monitor Mode", 0) == 0) return true;
  return head.rfind("{", 0) == 0 && head.find("\"communicators\"") != std::string_view::npos &&
         head.find("\"nccl_version\"") != std::string_view::npos && head.find("\"pg_config\"") == std::string_view::npos;
}

std::vector<Event> NcclRasEvents(std::string_view text, const std::string& path, int source, std::string* error) {
  if (!text.empty() && text.find_first_not_of(" \t\r\n") != std::string_view::npos &&
      text[text.find_first_not_of(" \t\r\n")] == '{')
    return JsonEvents(text, path, source, error);
  std::vector<Event> out;
  std::set<std::string> dead;
  std::map<int, int64_t> comm_size;  // group -> ranks per comm
  enum { kNone, kErrors, kWarnings } section = kNone;
  std::string sub;  // DEAD, INCOMPLETE (job processes), or a communicator's "#G-C"
  std::string comm_hash, comm_id, comm_status;
  int comm_group = -1;
  std::string prev;
  size_t from = 0;
  uint64_t line_no = 0;
  auto missing_rank = [&](int rank, const std::string& gpu, const std::string& pid, const std::string& node,
                          std::string_view line) {
    Event e = Base("ras_missing_rank", path, source, line_no, line);
    e.Set("comm", comm_id);
    e.Set("comm_hash", comm_hash);
    e.Set("comm_rank", rank);
    if (comm_size.count(comm_group)) e.Set("comm_size", comm_size[comm_group]);
    if (!gpu.empty()) e.Set("gpu", gpu);
    if (!pid.empty()) {
      e.Set("pid", pid);
      e.Set("node", node);
    }
    out.push_back(std::move(e));
  };
  // A report pasted indented (a code block, a quote) keeps its layout under
  // the indentation of its first line, which every line loses here.
  size_t indent = 0;
  {
    size_t first = text.find_first_not_of(" \t\r\n");
    size_t bol = first == std::string_view::npos ? 0 : text.rfind('\n', first);
    bol = bol == std::string_view::npos || first == std::string_view::npos ? 0 : bol + 1;
    if (first != std::string_view::npos) indent = first - bol;
  }
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(from, nl - from);
    from = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (indent > 0 && line.size() >= indent && line.find_first_not_of(" \t") >= indent) line.remove_prefix(indent);
    std::string a, b, c, d, e5, f, g, h;
    if (RE2::FullMatch(line, Version(), &a, &b)) {
      Event e = Base("ras_status", path, source, line_no, line);
      e.Set("nccl_version", a);
      e.Set("cuda", b);
      out.push_back(std::move(e));
    } else if (!out.empty() && out.front().kind == "ras_status" && prev.find("(total)") == 0 &&
               RE2::FullMatch(line, JobRow(), &a, &b, &c, &d, &e5)) {
      Event& s = out.front();
      s.Set("nodes", std::stoll(a));
      s.Set("processes", std::stoll(d));
      s.Set("gpus", std::stoll(e5));
    } else if (line.rfind("===", 0) == 0 && (prev == "Errors" || prev == "Warnings")) {
      section = prev == "Errors" ? kErrors : kWarnings;
      sub.clear();
    } else if (section == kNone && RE2::FullMatch(line, GroupRow(), &a, &b, &c, &d, &e5, &f, &g, &h)) {
      comm_size[std::stoi(a)] = std::stoll(e5);
    } else if (section != kNone && (line == "DEAD" || line == "INCOMPLETE" || line == "TIMEOUT")) {
      sub = std::string(line);
    } else if (section != kNone && RE2::FullMatch(line, CommHeader(), &a, &b, &c, &d)) {
      sub = "#comm";
      comm_group = std::stoi(a);
      comm_id = "#" + a + "-" + b;
      comm_hash = c;
      comm_status = d;
    } else if (section != kNone && sub == "#comm" && line.find("ranks have different") != std::string_view::npos) {
      // A MISMATCH block's reason ("Communicator ranks have different
      // AllGather operation counts"): the event a log line of it gives
      // (formats/nccl.json mismatched_collective), which the rules read.
      Event e = Base("collective_mismatch", path, source, line_no, line);
      size_t b = line.find_first_not_of(' ');
      e.Set("message", std::string(line.substr(b == std::string_view::npos ? 0 : b)));
      e.Set("comm", comm_id);
      out.push_back(std::move(e));
    } else if (section == kErrors && sub == "#comm" && comm_status.find("INCOMPLETE") != std::string::npos &&
               RE2::FullMatch(line, RankLine(), &a, &b, &c, &d)) {
      missing_rank(std::stoi(a), b, c, d, line);
    } else if (section == kErrors && sub == "#comm" && RE2::FullMatch(line, MissingRanks(), &a)) {
      std::string num;
      for (char ch : a + ",") {
        if (std::isdigit(static_cast<unsigned char>(ch)) && num.size() < 9) {
          num += ch;
        } else if (!num.empty()) {
          missing_rank(std::stoi(num), "", "", "", line);
          num.clear();
        }
      }
    } else if (section == kErrors && (sub == "DEAD" || sub == "INCOMPLETE") &&
               RE2::FullMatch(line, ProcessLine(), &a, &b, &c)) {
      Event e = Base("ras_process", path, source, line_no, line);
      e.Set("pid", a);
      e.Set("node", b);
      e.Set("gpus", c);
      e.Set("state", sub == "DEAD" ? "dead" : "missing");
      if (sub == "DEAD") dead.insert(Key(a, b));
      out.push_back(std::move(e));
    } else if (RE2::FullMatch(line, MonitorDead(), &a, &b, &c, &d)) {
      Event e = Base("ras_process", path, source, line_no, line);
      if (double t = Seconds(a)) e.ts = t;
      e.Set("pid", b);
      e.Set("node", c);
      e.Set("gpus", d);
      e.Set("state", "dead");
      dead.insert(Key(b, c));
      out.push_back(std::move(e));
    }
    prev = std::string(line);
  }
  PlaceRanks(&out, dead);
  return out;
}

}  // namespace tpt
