// prefilter_bench: which lines hold a pattern literal? Hyperscan block mode
// over whole 1 MiB buffers (what the parser does) against RE2::Set run line by
// line, on the same file with the built-in formats' literals; and RE2's
// FilteredRE2, which derives its own atoms from the regexes (no declared
// literals) and leaves finding them to the caller (here an RE2::Set over the
// lowercased line, as FilteredRE2's atoms are lowercase).
//   prefilter_bench serving.log
#include <hs/hs.h>
#include <re2/filtered_re2.h>
#include <re2/re2.h>
#include <re2/set.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "parser/format_set.h"

namespace {

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

struct HitLines {
  const char* base;
  const char* last_line = reinterpret_cast<const char*>(1);  // no line yet (nullptr = the first line)
  unsigned long long lines = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: prefilter_bench LOG\n");
    return 2;
  }
  auto formats = tpt::FormatSet::LoadBuiltin();
  if (!formats.ok()) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<std::string> chunks;  // ~1 MiB of whole lines each
  std::string line, cur;
  while (std::getline(in, line)) {
    cur += line;
    cur += '\n';
    if (cur.size() >= (1 << 20)) chunks.push_back(std::move(cur)), cur.clear();
  }
  if (!cur.empty()) chunks.push_back(cur);

  hs_scratch_t* scratch = nullptr;
  hs_alloc_scratch(const_cast<hs_database_t*>(formats->literal_db()), &scratch);
  double t0 = CpuSeconds();
  unsigned long long hs_lines = 0;
  for (const std::string& c : chunks) {
    HitLines h{c.data()};
    hs_scan(formats->literal_db(), c.data(), c.size(), 0, scratch,
            [](unsigned, unsigned long long, unsigned long long to, unsigned, void* ctx) {
              auto* h = static_cast<HitLines*>(ctx);
              const char* p = h->base + to - 1;
              const char* start = static_cast<const char*>(memrchr(h->base, '\n', p - h->base));
              if (start != h->last_line) ++h->lines, h->last_line = start;
              return 0;
            },
            &h);
    hs_lines += h.lines;
  }
  double t1 = CpuSeconds();

  RE2::Options opt;
  opt.set_max_mem(256 << 20);
  RE2::Set set(opt, RE2::UNANCHORED);
  for (const auto& p : formats->patterns()) {
    for (const auto& l : p.literals) set.Add(RE2::QuoteMeta(l), nullptr);
  }
  set.Compile();
  double t2 = CpuSeconds();
  unsigned long long set_lines = 0;
  std::vector<int> v;
  for (const std::string& c : chunks) {
    size_t pos = 0;
    while (pos < c.size()) {
      size_t nl = c.find('\n', pos);
      re2::StringPiece l(c.data() + pos, nl - pos);
      if (set.Match(l, nullptr)) ++set_lines;
      pos = nl + 1;
    }
  }
  double t3 = CpuSeconds();
  std::printf("hyperscan_block_cpu_s=%.3f lines_with_hits=%llu\nre2_set_per_line_cpu_s=%.3f lines_with_hits=%llu\n",
              t1 - t0, hs_lines, t3 - t2, set_lines);

  // FilteredRE2: atoms derived from the patterns' regexes (min length 3).
  re2::FilteredRE2 filtered(3);
  for (const auto& p : formats->patterns()) {
    RE2::Options o;
    o.set_case_sensitive(!p.caseless);
    int id;
    filtered.Add(p.re->pattern(), o, &id);
  }
  std::vector<std::string> atoms;
  filtered.Compile(&atoms);
  RE2::Set atom_set(opt, RE2::UNANCHORED);
  for (const auto& a : atoms) atom_set.Add(RE2::QuoteMeta(a), nullptr);
  atom_set.Compile();
  double t4 = CpuSeconds();
  unsigned long long atom_lines = 0, filtered_lines = 0;
  std::string low;
  for (const std::string& c : chunks) {
    size_t pos = 0;
    while (pos < c.size()) {
      size_t nl = c.find('\n', pos);
      low.assign(c, pos, nl - pos);
      for (char& ch : low) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      v.clear();
      if (atom_set.Match(low, &v)) {
        ++atom_lines;
        if (filtered.FirstMatch(re2::StringPiece(c.data() + pos, nl - pos), v) >= 0) ++filtered_lines;
      }
      pos = nl + 1;
    }
  }
  double t5 = CpuSeconds();
  size_t shortest = atoms.empty() ? 0 : std::min_element(atoms.begin(), atoms.end(), [](const auto& a, const auto& b) {
                                         return a.size() < b.size();
                                       })->size();
  std::printf("filtered_re2_cpu_s=%.3f atoms=%zu shortest_atom=%zu lines_with_atoms=%llu lines_matching_a_regex=%llu\n",
              t5 - t4, atoms.size(), shortest, atom_lines, filtered_lines);
  return 0;
}
