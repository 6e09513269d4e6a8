// stack_dump.cc: py-spy and faulthandler thread dumps -> stack_thread events; see stack_dump.h.
#include "parser/stack_dump.h"

#include <re2/re2.h>

#include "parser/flight_recorder.h"
#include "parser/reader_internal.h"

namespace tpt {
namespace {

// py-spy (src/dump.rs): `Thread 12345 (active+gil): "MainThread"`; older
// versions print the id in hex, some none (`Thread (idle): "MainThread"`).
const RE2& PySpyThread() {
  static const RE2 re(R"re(^Thread(?: (0x[0-9A-Fa-f]+|\d+))? \(([a-z+]+)\): "(.*)"\s*$)re");
  return re;
}
// `    fn (file.py:123)`, padded by --native; a native frame has no line.
const RE2& PySpyFrame() {
  static const RE2 re(R"re(^    (\S.*?)\s+\(([^()]*?)(?::(\d+))?\)\s*$)re");
  return re;
}
// CPython faulthandler.c: "Current thread 0x... (most recent call first):" / "Thread 0x...".
const RE2& FaultThread() {
  static const RE2 re(R"re(^(Current thread|Thread) (0x[0-9a-fA-F]+) \(most recent call first\):\s*$)re");
  return re;
}
const RE2& FaultFrame() {
  static const RE2 re(R"re(^  File "(.*)", line (\d+) in (.*?)\s*$)re");
  return re;
}

// gdb's `thread apply all bt` (gdb/thread.c thr_try_catch_cmd: "\nThread %s
// (%s):\n", the thread's number and its target id, e.g. `Thread 0x7f.. (LWP
// 123) "python3"`; gdb/stack.c print_frame: `#N  0xADDR in fn (args) at
// file:line` or `... from lib.so`; frame 0 may omit the address).
const RE2& GdbThread() {
  static const RE2 re(R"re(^Thread (\d+(?:\.\d+)?) \((.*)\):\s*$)re");
  return re;
}
const RE2& GdbFrame() {
  static const RE2 re(R"re(^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(.+?) \(.*?\)(?: at (\S+):(\d+)| from (\S+))?\s*$)re");
  return re;
}
// A native frame of the C library, the loader or the kernel's entry: a wait
// primitive, never the place that explains a hang ("where" skips them).
bool IsSystemFrame(const std::string& fn, const std::string& file) {
  for (const char* lib : {"libc.so", "libpthread", "ld-linux", "linux-vdso", "/sysdeps/", "nptl/"})
    if (file.find(lib) != std::string::npos) return true;
  return fn == "??" || fn.rfind("__", 0) == 0 || fn.rfind("pthread_", 0) == 0 || fn == "syscall" ||
         fn.find("futex") != std::string::npos || fn == "clone" || fn == "clone3" || fn == "start_thread";
}

bool FirstLines(std::string_view head, size_t n, std::vector<std::string_view>* out) {
  size_t from = 0;
  while (out->size() < n && from < head.size()) {
    size_t nl = head.find('\n', from);
    if (nl == std::string_view::npos) nl = head.size();
    std::string_view line = head.substr(from, nl - from);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out->push_back(line);
    from = nl + 1;
  }
  return !out->empty();
}

}  // namespace

bool LooksLikeStackDump(std::string_view head) {
  std::vector<std::string_view> lines;
  // gdb: its attach banner ("[New LWP ...]", "[Thread debugging using
  // libthread_db enabled]", the current frame), then a thread header whose
  // next line is frame #0, within the first lines.
  if (FirstLines(head, 64, &lines)) {
    for (size_t i = 0; i + 1 < lines.size(); ++i)
      if (RE2::FullMatch(lines[i], GdbThread())) return lines[i + 1].rfind("#0 ", 0) == 0;
  }
  lines.clear();
  if (!FirstLines(head, 2, &lines)) return false;
  if (lines[0].rfind("Process ", 0) == 0 && lines.size() > 1 && lines[1].rfind("Python v", 0) == 0) return true;
  // faulthandler's threads and nothing else: a log that holds such a block
  // ("Fatal Python error: Segmentation fault" and the threads) stays a log.
  if (!RE2::FullMatch(lines[0], FaultThread())) return false;
  const size_t end = head.size() >= reader_internal::kSniffBytes ? head.rfind('\n') : head.size();  // a cut last line is not judged
  lines.clear();
  if (!FirstLines(head.substr(0, end == std::string_view::npos ? 0 : end), 200, &lines)) return false;
  // Thread headers, their indented frames ("  File ...", "  <no Python frame>",
  // Python 3.13's C frames), its "Current thread's C stack trace" header and
  // "Extension modules:" line.
  for (std::string_view l : lines)
    if (!RE2::FullMatch(l, FaultThread()) && l.rfind("  ", 0) != 0 && l.rfind("Current thread's C stack", 0) != 0 &&
        l.rfind("Extension modules:", 0) != 0)
      return false;
  return true;
}

std::vector<Event> StackDumpEvents(std::string_view text, const std::string& path, int source) {
  std::vector<Event> out;
  const int rank = RankFromDumpName(path);
  Event* cur = nullptr;
  bool in_threading = false;
  auto close = [&] {
    if (!cur) return;
    if (cur->Get("tool").string() == "faulthandler") cur->Set("main", !in_threading);
    cur = nullptr;
    in_threading = false;
  };
  // A thread's header line opens its event.
  auto open = [&](std::string_view line, uint64_t line_no, uint64_t offset, const char* pattern, const char* tool) {
    close();
    Event& e = out.emplace_back();
    e.kind = "stack_thread";
    e.family = "stacks";
    e.pattern_id = pattern;
    e.source = source;
    e.file = path;
    e.line = line_no;
    e.offset = offset;
    e.rank = rank;
    e.text = std::string(line);
    e.Set("tool", tool);
    e.Set("frames", nlohmann::json::array());
    cur = &e;
  };
  // A frame of the open thread; `program` frames give "where" and program_frames.
  auto frame = [&](std::string_view line, const std::string& fn, const std::string& file, const std::string& lineno,
                   bool program) {
    cur->extra_lines.push_back(std::string(line));
    std::string t = fn + " (" + file + (lineno.empty() ? "" : ":" + lineno) + ")";
    nlohmann::json& frames = cur->fields()["frames"];
    if (frames.size() < 32) frames.push_back(t);
    if (!program) return;
    if (!cur->Get("where").present()) cur->Set("where", t);
    nlohmann::json& kept = cur->fields()["program_frames"];
    if (!kept.is_array()) kept = nlohmann::json::array();
    if (kept.size() < 4) kept.push_back(t);
  };
  uint64_t line_no = 0;
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(from, nl - from);
    const uint64_t offset = from;
    from = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string id, state, name, file, fn, lineno, target, lib;
    if (RE2::FullMatch(line, GdbThread(), &id, &target)) {
      open(line, line_no, offset, "gdb", "gdb");
      cur->Set("thread", id);
      if (std::string n; RE2::PartialMatch(target, R"re("(.*)"$)re", &n)) cur->Set("name", n);
      cur->Set("main", id == "1" || id == "1.1");  // gdb numbers threads as they start: 1 is the process's first
      continue;
    }
    if (RE2::FullMatch(line, FaultThread(), &state, &id) || RE2::FullMatch(line, PySpyThread(), &id, &state, &name)) {
      const bool fault = line.find("(most recent call first)") != std::string_view::npos;
      open(line, line_no, offset, fault ? "faulthandler" : "py_spy", fault ? "faulthandler" : "py-spy");
      cur->Set("thread", id);
      if (fault) {
        cur->Set("state", state == "Current thread" ? "current" : "");
      } else {
        cur->Set("state", state);
        cur->Set("name", name);
        cur->Set("main", name == "MainThread");
      }
      continue;
    }
    if (!cur) continue;
    const std::string tool = cur->Get("tool").string();
    if (tool == "gdb") {
      if (!RE2::FullMatch(line, GdbFrame(), &fn, &file, &lineno, &lib)) continue;
      if (file.empty()) file = lib;
      frame(line, fn, file, lineno, !IsSystemFrame(fn, file));
      continue;
    }
    const bool matched = tool == "faulthandler" ? RE2::FullMatch(line, FaultFrame(), &file, &lineno, &fn)
                                                : RE2::FullMatch(line, PySpyFrame(), &fn, &file, &lineno);
    if (!matched) continue;  // py-spy --locals lines, blank lines
    if (file.find("threading.py") != std::string::npos) in_threading = true;
    // A program frame: a Python file outside torch and the interpreter (not a native library).
    frame(line, fn, file, lineno, !lineno.empty() && !IsLibraryFrame(file));
  }
  close();
  return out;
}

}  // namespace tpt
