// formats_fuzz_one.cc: see formats_fuzz_one.h.
#include "parser/fuzz/formats_fuzz_one.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "parser/event_json.h"
#include "parser/format_set.h"
#include "parser/reader.h"
#include "parser/stream_parser.h"

namespace tpt::fuzz {

void FuzzFormatsOne(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const bool check_samples = data[0] & 1;
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto formats = FormatSet::Load({{"fuzz.json", text}}, /*strict=*/false, check_samples);
  if (!formats.ok()) return;
  (void)formats->problems();
  // Lines of the usual shapes, through the parser the file made.
  static const char* kLog =
      "[2025-10-14 10:00:01 TP3] Load weight end. type=X, avail mem=21.70 GB, mem usage=72.30 GB.\n"
      "node1:1234:1290 [0] NCCL WARN NET/IB : Got async event : port error\n"
      "INFO 03-28 21:38:23 [worker.py:10] Memory profiling takes 3.2 seconds\n"
      "Traceback (most recent call last):\n"
      "  File \"/x/y.py\", line 3, in run\n"
      "    f()\n"
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
      "(Worker_TP1 pid=7) ERROR 10-02 09:01:30 [a.py:1] x=1 y=2.5 z=[1, 2] {'k': 'v'}\n";
  auto opened = WrapInput(std::make_unique<StringSource>(kLog), "fuzz");
  if (!opened.ok()) std::abort();
  ParseOptions opt;
  StreamEvents stream(std::move(opened->source), *formats, opt, 4096, 0, "fuzz");
  Event e;
  while (stream.Next(&e)) {
    std::string s = EventToJson(e).dump();  // throws (aborts) on invalid UTF-8
    if (!nlohmann::json::parse(s).is_object()) std::abort();
  }
}

}  // namespace tpt::fuzz
