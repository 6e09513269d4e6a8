// unpaste_judge.cc: what the paste layer's joins and its learning ask of a line
// (parser/unpaste.h): does it open a line of its own (a format's prefix), could it
// be the rest of a wrapped line, which patterns' literals it holds and how well
// they match it (Hyperscan's literal database, then each pattern).
#include <hs/hs.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "parser/format_set.h"
#include "parser/unpaste.h"
#include "parser/unpaste_internal.h"

namespace tpt {

using unpaste_internal::StartsWith;
using unpaste_internal::Trim;

bool UnpasteSource::HasOwnStart(std::string_view line) const {
  return formats_ && formats_->HasLineStart(line);
}

// Does `next`, after a line cut at the width, start a line of its own? Not
// when its start is the rest of a token the cut went through: NCCL's
// `host:pid:tid [dev]` cut inside the host name leaves a line that opens with
// the host's tail (`98ff:1439:1439 [0] NCCL INFO`), which reads as a start on
// its own and also with the cut line's last word before it.
bool UnpasteSource::StartsOwnLine(std::string_view cut, std::string_view next) const {
  // A drawn table's rows share one width: the next row is a row.
  if (IsDrawnTableRow(cut) && IsDrawnTableRow(next)) return true;
  if (!HasOwnStart(next)) return false;
  if (cut.empty() || next.empty() || cut.back() == ' ' || next[0] == ' ') return true;
  const size_t space = cut.find_last_of(" \t");
  std::string joined(cut.substr(space == std::string_view::npos ? 0 : space + 1));
  if (joined.size() < 3) return true;
  joined += next.substr(0, std::min<size_t>(next.size(), 256));
  return !HasOwnStart(joined);
}

// Could `line` be the rest of a line the author wrapped between words? Not a
// line of its own: not blank or indented (a frame), no prefix, not a
// traceback header or an exception line.
bool UnpasteSource::ContinuesWrapped(std::string_view line) const {
  // One leading space: a terminal cut at a space. Two or a tab: indentation.
  if (!line.empty() && line[0] == ' ' && line.size() > 1 && line[1] != ' ' && line[1] != '\t') line.remove_prefix(1);
  if (line.empty() || line[0] == ' ' || line[0] == '\t') return false;
  if ((line[0] == '|' || line[0] == '+') && IsDrawnTableRow(line)) return false;
  // (The headers and levels below start with one of `TFDIWE`: most lines, a
  // prefix's `[` or a date's digit, are not compared with them.)
  const char c0 = line[0];
  const bool header_letter = c0 == 'T' || c0 == 'F' || c0 == 'D';
  const bool level_letter = c0 == 'I' || c0 == 'W' || c0 == 'E' || c0 == 'D' || c0 == 'T';
  if (header_letter && (StartsWith(line, "Traceback") || StartsWith(line, "File \"") ||
                        StartsWith(line, "During handling") || StartsWith(line, "The above exception")))
    return false;
  // `SomeError: ...`, `torch.OutOfMemoryError: ...`, `KeyError: 'x'`
  size_t colon = line.find(": ");
  if (colon != std::string_view::npos && colon < 128) {
    std::string_view type = line.substr(0, colon);
    bool ident = std::all_of(type.begin(), type.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
    if (ident && (type.find("Error") != std::string_view::npos || type.find("Exception") != std::string_view::npos ||
                  type.find("Warning") != std::string_view::npos || type.find("Interrupt") != std::string_view::npos))
      return false;
  }
  // uvicorn's own start: its level padded to 9 columns (`INFO:     `,
  // `WARNING:  `; uvicorn/logging.py ColourizedFormatter: levelname + ':' + 8 - len(levelname) spaces + ' '). A
  // terminal or an author wraps at one space, never before a run of them.
  if (level_letter) {
    for (std::string_view level : {"INFO:  ", "WARNING:  ", "ERROR:  ", "DEBUG:  ", "TRACE:  "}) {
      if (StartsWith(line, level)) return false;
    }
  }
  return !HasOwnStart(line);
}

bool UnpasteSource::ContinuesWrapped(Line& line) const {
  if (line.continues < 0) line.continues = ContinuesWrapped(Text(line)) ? 1 : 0;
  return line.continues == 1;
}

namespace {
struct HitCtx {
  const std::vector<LiteralTarget>* targets;
  std::vector<int> patterns;
};
int OnLiteral(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
  auto* c = static_cast<HitCtx*>(ctx);
  if (id < c->targets->size() && (*c->targets)[id].type == LiteralTarget::kPattern) c->patterns.push_back((*c->targets)[id].index);
  return 0;
}
}  // namespace

bool UnpasteSource::LiteralHits(std::string_view line, std::vector<int>* hit) {
  hit->clear();
  if (!formats_ || !scratch_ || line.empty()) return false;
  HitCtx ctx{&formats_->targets(), {}};
  hs_scan(formats_->literal_db(), line.data(), static_cast<unsigned>(std::min<size_t>(line.size(), 1u << 30)), 0, scratch_,
          &OnLiteral, &ctx);
  std::sort(ctx.patterns.begin(), ctx.patterns.end());
  ctx.patterns.erase(std::unique(ctx.patterns.begin(), ctx.patterns.end()), ctx.patterns.end());
  *hit = std::move(ctx.patterns);
  return !hit->empty();
}

int UnpasteSource::PatternScore(std::string_view line, std::vector<int>* hit) {
  if (!formats_ || !scratch_ || line.empty()) return -1;
  HitCtx ctx{&formats_->targets(), {}};
  if (hit->empty()) {
    // The patterns whose literal is in the line; a joined text is scored on
    // the same ones (a later line's own pattern never pulls it in).
    hs_scan(formats_->literal_db(), line.data(), static_cast<unsigned>(std::min<size_t>(line.size(), 1u << 30)), 0, scratch_,
            &OnLiteral, &ctx);
    if (ctx.patterns.empty()) return -1;
    std::sort(ctx.patterns.begin(), ctx.patterns.end());
    ctx.patterns.erase(std::unique(ctx.patterns.begin(), ctx.patterns.end()), ctx.patterns.end());
    *hit = ctx.patterns;
  } else {
    ctx.patterns = *hit;
  }
  LineMeta meta;
  FormatSet::Stripped st = formats_->StripLine(line, &meta);
  std::string_view msg = line.substr(st.begin, st.end - st.begin);
  int best = 0;
  for (int p : ctx.patterns) {
    Event e;
    std::string err;
    if (formats_->MatchPattern(formats_->patterns()[p], msg, &e, &err)) {
      int score = 1;
      for (const auto& [k, v] : e.fields().items())
        if (!v.is_null()) ++score;
      best = std::max(best, score);
    }
  }
  return best;
}

std::vector<int> UnpasteSource::Scores(std::string_view line, const std::vector<int>& patterns) {
  std::vector<int> out(patterns.size(), 0);
  LineMeta meta;
  FormatSet::Stripped st = formats_->StripLine(line, &meta);
  std::string_view msg = line.substr(st.begin, st.end - st.begin);
  for (size_t i = 0; i < patterns.size(); ++i) {
    Event e;
    std::string err;
    if (formats_->MatchPattern(formats_->patterns()[patterns[i]], msg, &e, &err)) {
      out[i] = 1;
      for (const auto& [k, v] : e.fields().items())
        if (!v.is_null()) ++out[i];
    }
  }
  return out;
}

}  // namespace tpt
