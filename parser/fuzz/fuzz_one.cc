// fuzz_one.cc: see fuzz_one.h.
#include "parser/fuzz/fuzz_one.h"

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "parser/event_json.h"
#include "parser/flight_recorder.h"
#include "parser/nccl_ras.h"
#include "parser/stack_dump.h"
#include "parser/vllm_trace.h"
#include "parser/match/fast_layout.h"
#include "parser/format_set.h"
#include "parser/reader.h"
#include "parser/stream_parser.h"
#include "parser/values.h"

namespace tpt::fuzz {

void FuzzOne(const uint8_t* data, size_t size) {
  static const FormatSet* formats = [] {
    auto f = FormatSet::LoadBuiltin();
    if (!f.ok()) std::abort();
    return new FormatSet(std::move(*f));
  }();
  if (size == 0) return;
  const size_t kBuffers[] = {1, 3, 7, 64, 4096};
  const size_t kMaxLine[] = {1, 16, 200, 1 << 20};
  size_t buffer = kBuffers[data[0] % 5];
  size_t max_line = kMaxLine[(data[0] / 5) % 4];
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  // Side parsers see arbitrary text too.
  (void)ParsePythonKv(text);
  (void)ParseTimestamp(text);
  (void)ConvertField(text, "list", "", false);
  (void)ConvertField(text, "bytes", text.substr(0, 3), false);

  // The build's compiled fast layouts take exactly the interpreter's steps
  // (fast_layout_emit.cc), on any bytes: the whole text (capped) and its first lines.
  static const std::vector<const FastLayout*> layouts = formats->FastLayouts();
  auto same_as_interpreter = [&](std::string_view t) {
    std::vector<std::string_view> code, interp;
    for (const FastLayout* fl : layouts) {
      bool a = fl->Match(t, &code), b = fl->MatchInterpreted(t, &interp);
      if (a != b) std::abort();
      for (size_t g = 0; a && g < interp.size(); ++g) {
        if (code[g].data() != interp[g].data() || code[g].size() != interp[g].size()) std::abort();
      }
    }
  };
  same_as_interpreter(std::string_view(text).substr(0, 4096));
  for (size_t from = 0, n = 0; from < text.size() && n < 32; ++n) {
    size_t nl = text.find('\n', from);
    if (nl == std::string::npos) nl = text.size();
    same_as_interpreter(std::string_view(text).substr(from, nl - from));
    from = nl + 1;
  }

  // Flight-recorder dumps (pickle and JSON), stack dumps and ncclras reports
  // through their own readers, as a rank 0 file; every event they give must
  // write as JSON (throws, i.e. aborts, on invalid UTF-8).
  {
    std::string error;
    std::vector<std::vector<Event>> all;
    all.push_back(FlightRecorderEvents(text, "nccl_trace_rank_0", 0, &error));
    (void)LooksLikeStackDump(text);
    all.push_back(StackDumpEvents(text, "stacks_rank_0.txt", 0));
    (void)LooksLikeNcclRas(text);
    all.push_back(NcclRasEvents(text, "ncclras_0.txt", 0, &error));
    (void)LooksLikeVllmTrace(text);
    all.push_back(VllmTraceEvents(text, "vllm_trace_rank_0.log", 0));
    for (const auto& events : all)
      for (const Event& ev : events) (void)EventToJson(ev).dump();
  }

  auto opened = WrapInput(std::make_unique<StringSource>(text), "fuzz");
  if (!opened.ok()) return;
  ParseOptions opt;
  opt.max_line_bytes = max_line;
  StreamEvents stream(std::move(opened->source), *formats, opt, buffer, 0, "fuzz");
  Event e;
  while (stream.Next(&e)) {
    std::string s = EventToJson(e).dump();  // throws (aborts) on invalid UTF-8
    // What the JSON Lines reader will do with it (throws, i.e. aborts, if the dump is not JSON).
    if (!nlohmann::json::parse(s).is_object()) std::abort();
    if (e.text.size() > StreamParser::kMaxTextBytes) std::abort();
  }
}

}  // namespace tpt::fuzz
