// report_fixture.cc: renders hand-made Analysis values (report/test_fixtures.h)
// in any format, for checks that need a file: the browser check of the HTML
// page (tests/html_check.sh) and schema validators.
//
//   tpt_report_fixture html out.html --many --hostile
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "report/report.h"
#include "report/test_fixtures.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tpt_report_fixture FORMAT OUT [--many] [--hostile]\n");
    return 2;
  }
  auto format = tpt::report::ParseFormat(argv[1]);
  if (!format.ok()) {
    std::fprintf(stderr, "tpt_report_fixture: %s\n", format.status().message().c_str());
    return 2;
  }
  bool many = false, hostile = false;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--many") {
      many = true;
    } else if (a == "--hostile") {
      hostile = true;
    } else {
      std::fprintf(stderr, "tpt_report_fixture: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  namespace t = tpt::report::testing;
  std::vector<tpt::report::RunResult> runs;
  runs.push_back(t::AsRun("job-1187", t::KvNoRoom({.seed = 1, .hostile_text = hostile})));
  if (many) {
    runs.push_back(t::AsRun("job-1191", t::NcclTimeout(3)));
    runs.push_back(t::AsRun("job-1195", t::Healthy()));
    runs.push_back(t::AsRun("job-1203", t::KvNoRoom({.seed = 4, .tp = 8})));
    runs.push_back(t::AsRun("job-1222", t::NcclTimeout(6)));
    runs.push_back(t::AsRun("job-1240", t::KvNoRoom({.seed = 7})));
  }
  auto report = tpt::report::MakeReport(std::move(runs), many, "test");
  std::ofstream out(argv[2], std::ios::binary);
  if (!out) {
    std::fprintf(stderr, "tpt_report_fixture: cannot write %s\n", argv[2]);
    return 2;
  }
  tpt::report::MakeReporter(*format)->Write(report, out);
  return out ? 0 : 1;
}
