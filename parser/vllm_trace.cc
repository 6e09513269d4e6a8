// vllm_trace.cc: vLLM's function-call trace -> the traced thread's stack; see vllm_trace.h.
#include "parser/vllm_trace.h"

#include <cctype>
#include <deque>
#include <filesystem>

#include <re2/re2.h>

#include "parser/flight_recorder.h"
#include "parser/timestamps.h"

namespace tpt {
namespace {

// `YYYY-MM-DD HH:MM:SS.ffffff ` (datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")).
constexpr size_t kStampLen = 26;
bool IsStamp(std::string_view s) {
  if (s.size() < kStampLen + 1 || s[kStampLen] != ' ') return false;
  static constexpr char kShape[] = "dddd-dd-dd dd:dd:dd.dddddd";
  for (size_t i = 0; i < kStampLen; ++i)
    if (kShape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != kShape[i]) return false;
  return true;
}

struct Frame {
  std::string fn, file;
  int64_t line = 0;
  std::string Text() const { return fn + " (" + file + ":" + std::to_string(line) + ")"; }
};

// "fn in file.py:12" at the start of `s`, up to `sep` (" from " / " to ")
// or the end; the rest after `sep` in *rest.
bool ParseFrame(std::string_view s, const char* sep, Frame* f, std::string_view* rest) {
  const size_t in = s.find(" in ");
  if (in == std::string_view::npos || in == 0) return false;
  f->fn = std::string(s.substr(0, in));
  std::string_view place = s.substr(in + 4);
  size_t end = std::string_view::npos;
  if (sep) {
    // The first separator after a ":<digits>" (a path may hold the word).
    for (size_t at = place.find(sep); at != std::string_view::npos; at = place.find(sep, at + 1)) {
      size_t d = at;
      while (d > 0 && std::isdigit(static_cast<unsigned char>(place[d - 1]))) --d;
      if (d < at && d > 0 && place[d - 1] == ':') {
        end = at;
        break;
      }
    }
    if (end == std::string_view::npos) return false;
    *rest = place.substr(end + std::char_traits<char>::length(sep));
    place = place.substr(0, end);
  }
  const size_t colon = place.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= place.size() || place.size() - colon > 10) return false;
  for (size_t i = colon + 1; i < place.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(place[i]))) return false;
  f->file = std::string(place.substr(0, colon));
  f->line = std::stoll(std::string(place.substr(colon + 1)));
  return true;
}

// The calls of one traced thread, replayed a line at a time.
class Replay {
 public:
  Replay(std::string path, int source) : path_(std::move(path)), source_(source) {}

  void Line(std::string_view line, uint64_t line_no, uint64_t offset) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!IsStamp(line)) return;
    std::string_view rest = line.substr(kStampLen + 1);
    const bool call = rest.rfind("Call to ", 0) == 0;
    if (!call && rest.rfind("Return from ", 0) != 0) return;
    rest.remove_prefix(call ? 8 : 12);
    Frame f, other;
    std::string_view tail;
    if (!ParseFrame(rest, call ? " from " : " to ", &f, &tail)) return;
    const bool has_other = ParseFrame(tail, nullptr, &other, nullptr);
    ++lines_;
    last_line_ = line_no;
    last_offset_ = offset;
    last_text_ = std::string(line);
    stamp_ = std::string(line.substr(0, kStampLen));
    if (call) {
      // The caller stands where it called from (or is the outermost frame
      // known, when the trace began inside it).
      if (has_other && !other.fn.empty()) {
        if (stack_.empty()) stack_.push_back(other);
        else if (stack_.back().fn == other.fn && stack_.back().file == other.file) stack_.back().line = other.line;
      }
      stack_.push_back(f);
      if (stack_.size() > kMaxTraceDepth) stack_.pop_front();
      return;
    }
    // A return pops its frame (and any above it a return was not written for).
    for (size_t k = stack_.size(); k-- > 0;)
      if (stack_[k].fn == f.fn && stack_[k].file == f.file) {
        stack_.resize(k);
        break;
      }
    if (has_other && !other.fn.empty()) {
      if (stack_.empty()) stack_.push_back(other);  // returned into a frame called before the trace began
      else if (stack_.back().fn == other.fn && stack_.back().file == other.file) stack_.back().line = other.line;
    }
  }

  std::vector<Event> Finish() const {
    std::vector<Event> out;
    if (lines_ == 0) return out;
    const std::string name = std::filesystem::path(path_).filename().string();
    Event& e = out.emplace_back();
    e.kind = "stack_thread";
    e.family = "stacks";
    e.pattern_id = "vllm_trace";
    e.source = source_;
    e.file = path_;
    e.line = last_line_;
    e.offset = last_offset_;
    // vLLM's own name ends in the time it began, not a rank.
    std::string pid, tid;
    const bool own_name = RE2::PartialMatch(name, R"re(^VLLM_TRACE_FUNCTION_for_process_(\d+)_thread_(\d+)_at_)re", &pid, &tid);
    e.rank = own_name ? -1 : RankFromDumpName(path_);
    if (own_name && pid.size() < 10) e.pid = std::stoi(pid);
    if (auto ts = ParseTimestamp(stamp_); ts && !ts->time_of_day) e.ts = ts->value;
    e.Set("tool", "vllm_trace");
    if (!tid.empty()) e.Set("thread", tid);
    e.Set("main", false);
    nlohmann::json frames = nlohmann::json::array(), program = nlohmann::json::array();
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      const std::string t = it->Text();
      e.extra_lines.push_back("    " + t);
      if (frames.size() < 32) frames.push_back(t);
      if (!IsLibraryFrame(it->file)) {
        if (!e.Get("where").present()) e.Set("where", t);
        if (program.size() < 4) program.push_back(t);
      }
    }
    e.Set("frames", frames);
    if (!program.empty()) e.Set("program_frames", program);
    e.Set("open_calls", stack_.size());
    e.text = "vLLM function trace (VLLM_TRACE_FUNCTION) of " +
             (own_name ? "process " + pid + " thread " + tid : name) + ": " + std::to_string(stack_.size()) +
             " call(s) open at its last line, " + std::to_string(lines_) + " line(s) read";
    return out;
  }

 private:
  std::string path_;
  int source_;
  std::deque<Frame> stack_;  // outermost first
  uint64_t lines_ = 0, last_line_ = 0, last_offset_ = 0;
  std::string last_text_, stamp_;
};

}  // namespace

bool LooksLikeVllmTrace(std::string_view head) {
  const size_t nl = head.find('\n');
  std::string_view first = head.substr(0, nl);
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
  if (!IsStamp(first)) return false;
  std::string_view rest = first.substr(kStampLen + 1);
  const bool call = rest.rfind("Call to ", 0) == 0;
  if (!call && rest.rfind("Return from ", 0) != 0) return false;
  Frame f;
  std::string_view tail;
  return ParseFrame(rest.substr(call ? 8 : 12), call ? " from " : " to ", &f, &tail);
}

std::vector<Event> VllmTraceEvents(std::string_view text, const std::string& path, int source) {
  Replay r(path, source);
  uint64_t line_no = 0;
  for (size_t from = 0; from < text.size();) {
    size_t nl = text.find('\n', from);
    if (nl == std::string_view::npos) nl = text.size();
    r.Line(text.substr(from, nl - from), ++line_no, from);
    from = nl + 1;
  }
  return r.Finish();
}

std::unique_ptr<EventStream> ReadVllmTrace(std::unique_ptr<ByteSource> source, const std::string& path, int source_index) {
  // Lines split here over the source's reads (a trace's lines are short; one
  // longer than kMaxLine is skipped), so memory stays a buffer and the stack.
  constexpr size_t kChunk = size_t{1} << 16, kMaxLine = size_t{1} << 16;
  Replay r(path, source_index);
  std::string error, carry;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  uint64_t line_no = 0, offset = 0, bytes = 0;
  bool skipping = false;  // inside a line longer than kMaxLine
  for (;;) {
    auto n = source->Read(buf.get(), kChunk);
    if (!n.ok()) {
      error = path + ": " + n.status().message() + " (the trace read up to there is used)";
      break;
    }
    if (*n == 0) break;
    bytes += *n;
    std::string_view chunk(buf.get(), *n);
    for (size_t from = 0; from < chunk.size();) {
      const size_t nl = chunk.find('\n', from);
      if (nl == std::string_view::npos) {
        if (!skipping) carry.append(chunk.substr(from));
        if (carry.size() > kMaxLine) {
          carry.clear();
          skipping = true;
        }
        break;
      }
      if (!skipping) {
        carry.append(chunk.substr(from, nl - from));
        r.Line(carry, ++line_no, offset);
      } else {
        ++line_no;
      }
      offset = bytes - chunk.size() + nl + 1;
      carry.clear();
      skipping = false;
      from = nl + 1;
    }
  }
  if (!carry.empty() && !skipping) r.Line(carry, ++line_no, offset);
  return std::make_unique<VectorEvents>(r.Finish(), std::move(error), bytes);
}

}  // namespace tpt
