// parse_bench: time ParseRun over LOG... on one core with the built-in formats.
//
// Prints bytes, lines, events, seconds, GB/s, lines/s and peak RSS (getrusage),
// one `key=value` per line so bench/run_parser_bench.sh can read them.
//   parse_bench serving.log
//   parse_bench --literals > lits.txt        # the prefilter literals, for rg -F -f
//   parse_bench --dump serving.log > ev.jsonl   # every event as JSON Lines (to diff two builds)
//   parse_bench --decode serving.log         # also reads every event's fields and wrapper
//
// Events decode their fields and wrapper metadata on first read (event.h):
// the default run counts events as `tptriage analyze` keeps them (most are
// never read); --decode pays for every one, as `tptriage events` does.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "parser/event_json.h"
#include "parser/format_set.h"
#include "parser/parser.h"

namespace {

class CountSink : public tpt::EventSink {
 public:
  bool OnEvent(const tpt::Event& e) override {
    ++events;
    if (decode) {
      auto count = [&](std::string_view, const tpt::FieldValue&) { ++values; };
      e.ForEachField(count);
      e.ForEachWrapper(count);
    }
    if (dump) std::printf("%s\n", tpt::EventToJson(e).dump().c_str());
    return true;
  }
  unsigned long long events = 0, values = 0;
  bool dump = false, decode = false;
};

}  // namespace

int main(int argc, char** argv) {
  auto formats = tpt::FormatSet::LoadBuiltin();
  if (!formats.ok()) {
    std::fprintf(stderr, "parse_bench: %s\n", formats.status().message().c_str());
    return 2;
  }
  if (argc == 2 && !std::strcmp(argv[1], "--literals")) {
    std::set<std::string> lits;
    for (const auto& p : formats->patterns()) lits.insert(p.literals.begin(), p.literals.end());
    for (const auto& b : formats->blocks()) lits.insert(b.literals.begin(), b.literals.end());
    for (const auto& l : lits) std::printf("%s\n", l.c_str());
    return 0;
  }
  bool dump = argc > 1 && !std::strcmp(argv[1], "--dump");
  bool decode = argc > 1 && !std::strcmp(argv[1], "--decode");
  std::vector<std::string> inputs(argv + 1 + (dump || decode), argv + argc);
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: parse_bench [--dump | --decode] LOG... | parse_bench --literals\n");
    return 2;
  }
  tpt::ParseOptions opts;
  CountSink sink;
  sink.dump = dump;
  sink.decode = decode;
  std::vector<tpt::InputReport> reports;
  auto t0 = std::chrono::steady_clock::now();
  tpt::Status s = tpt::ParseRun(inputs, *formats, opts, &sink, &reports);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::fprintf(stderr, "parse_bench: %s\n", s.message().c_str());
    return 2;
  }
  unsigned long long bytes = 0, lines = 0, long_lines = 0;
  for (const auto& r : reports) {
    bytes += r.bytes;
    lines += r.lines;
    long_lines += r.long_lines;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  // CPU time (user + sys) is what a shared machine measures fairly.
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  if (dump) return 0;
  std::printf("bytes=%llu\nlines=%llu\nlong_lines=%llu\nevents=%llu\nwall_seconds=%.3f\ncpu_seconds=%.3f\n"
              "gb_per_cpu_s=%.3f\nlines_per_cpu_s=%.0f\npeak_rss_mib=%.1f\n",
              bytes, lines, long_lines, sink.events, secs, cpu, bytes / cpu / 1e9, lines / cpu, ru.ru_maxrss / 1024.0);
  if (decode) std::printf("decoded_values=%llu\n", sink.values);
  return 0;
}
