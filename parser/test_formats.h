// test_formats.h: a FormatSet for the parser's own tests: the real wrappers.json
// and python.json plus a small "demo" family, so engine tests do not depend on
// the content of the other format files.
#pragma once

#include <string>

#include "parser/format_set.h"

namespace tpt::testing {

inline const char* kDemoFamily = R"J({
  "schema": 1, "family": "demo",
  "prefixes": [{"id": "sglang_like",
    "regex": "\\[(?P<date>\\d{4}-\\d\\d-\\d\\d) (?P<time>\\d\\d:\\d\\d:\\d\\d)(?: TP(?P<tp_rank>\\d+))?\\] ",
    "samples": [{"line": "[2025-10-14 10:00:01 TP3] x", "fields": {"tp_rank": 3}}]}],
  "patterns": [
    {"id": "load_end", "kind": "weights_load_end", "literals": ["Load weight end"],
     "regex": "Load weight end\\. .*?avail mem=(?P<avail>[\\d.]+) GB",
     "fields": {"avail_bytes": {"group": "avail", "type": "bytes", "unit": "GB_as_GiB"}},
     "samples": [{"line": "Load weight end. t=X, avail mem=2.00 GB", "fields": {"avail_bytes": 2147483648}}],
     "near_misses": ["Load weight end."]},
    {"id": "decode", "kind": "batch_stats", "literals": ["Decode batch"],
     "regex": "Decode batch\\. #running-req: (?P<running>\\d+)",
     "fields": {"running_reqs": {"group": "running", "type": "int"}}, "set": {"phase": "decode"},
     "samples": [{"line": "Decode batch. #running-req: 3", "fields": {"running_reqs": 3, "phase": "decode"}}],
     "near_misses": ["Decode batch."]},
    {"id": "oom", "kind": "cuda_oom", "literals": ["CUDA out of memory"],
     "regex": "CUDA out of memory\\. Tried to allocate (?P<tried>[\\d.]+) (?P<unit>[KMG]iB)",
     "fields": {"tried_bytes": {"group": "tried", "type": "bytes", "unit_group": "unit"}},
     "samples": [{"line": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "fields": {"tried_bytes": 2147483648}}],
     "near_misses": ["CUDA out of memory"]}
  ]})J";

inline StatusOr<FormatSet> TestFormats() {
  std::vector<FormatSource> files;
  for (const auto& s : FormatSet::BuiltinSources()) {
    if (s.name.find("wrappers.json") != std::string::npos || s.name.find("python.json") != std::string::npos) {
      files.push_back(s);
    }
  }
  files.push_back({"demo.json", kDemoFamily});
  return FormatSet::Load(files, /*strict=*/true);
}

}  // namespace tpt::testing
