#include "parser/match/fast_layout.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "parser/format_set.h"

namespace tpt {
namespace {

std::vector<std::string_view> Groups(const FastLayout& fl, std::string_view text, bool* ok) {
  std::vector<std::string_view> g;
  *ok = fl.Match(text, &g);
  return g;
}

TEST(FastLayout, LeadingLiteral) {
  EXPECT_EQ(FastLayout::LeadingLiteral("Decode batch(?:\\.)? #x"), "Decode batch");
  EXPECT_EQ(FastLayout::LeadingLiteral("\\\"(?P<m>GET|POST) "), "\"");
  EXPECT_EQ(FastLayout::LeadingLiteral("abc+d"), "ab");        // c is quantified
  EXPECT_EQ(FastLayout::LeadingLiteral("ab\\d+"), "ab");
  EXPECT_EQ(FastLayout::LeadingLiteral("abc|xyz"), "");        // top-level alternation
  EXPECT_EQ(FastLayout::LeadingLiteral("(?:abc|xyz)d"), "");
  EXPECT_EQ(FastLayout::LeadingLiteral("a(b|c)d"), "a");       // alternation inside a group is fine
  EXPECT_EQ(FastLayout::LeadingLiteral("[|]x"), "");
  EXPECT_EQ(FastLayout::LeadingLiteral("\\(x\\)"), "(x)");
}

TEST(FastLayout, CapturesLikeTheRegex) {
  RE2 re("Running: (?P<run>\\d+) reqs,(?: Swapped: (?P<sw>\\d+) reqs,)? (?:Pending|Waiting): (?P<wait>\\d+)");
  auto fl = FastLayout::Compile("Running: {run:digits} reqs,[ Swapped: {sw:digits} reqs,] {:Pending|Waiting}: {wait:digits}", re);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  bool ok = false;
  auto g = Groups(*fl, "x Running: 12 reqs, Waiting: 3 reqs", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[1], "12");
  EXPECT_EQ(g[2].data(), nullptr);  // optional section left out
  EXPECT_EQ(g[3], "3");
  EXPECT_EQ(g[0], "Running: 12 reqs, Waiting: 3");
  g = Groups(*fl, "Running: 1 reqs, Swapped: 7 reqs, Pending: 0 reqs", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[2], "7");
  // Another shape: the layout declines, the regex decides.
  Groups(*fl, "Running: 1 reqs, Queued: 0 reqs", &ok);
  EXPECT_FALSE(ok);
}

TEST(FastLayout, SpansAndAnchoredPrefixes) {
  RE2 re("\\[(?P<date>\\d{4}-\\d\\d-\\d\\d) (?P<time>\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?)(?: Mode\\.\\w+)?(?: TP(?P<tp>\\d+))?\\] ");
  auto fl = FastLayout::Compile(
      "\\[{date={:digits=4}-{:digits=2}-{:digits=2}} {time={:digits=2}:{:digits=2}:{:digits=2}[.{:digits}]}"
      "[ Mode.{:word}][ TP{tp:digits}]\\] ",
      re, /*anchored=*/true);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  bool ok = false;
  auto g = Groups(*fl, "[2025-10-14 10:00:01.250 Mode.DECODE TP3] Decode batch.", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[1], "2025-10-14");
  EXPECT_EQ(g[2], "10:00:01.250");
  EXPECT_EQ(g[3], "3");
  EXPECT_EQ(g[0], "[2025-10-14 10:00:01.250 Mode.DECODE TP3] ");
  g = Groups(*fl, "[2025-10-14 10:00:01] x", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[2], "10:00:01");
  EXPECT_EQ(g[3].data(), nullptr);
  // Anchored: a prefix later in the line is not this layout's business.
  Groups(*fl, "x [2025-10-14 10:00:01] x", &ok);
  EXPECT_FALSE(ok);
  bool taken = false;
  for (const char* line : {"[2025-10-14 10:00:01 TP] x", "[2025-10-14 10:00:01.x TP1] x", "[2025-10-14 10:00:01 Mode. TP1] x",
                           "[2025-10-14 10:00:01 TP1]x", "[2025-1-14 10:00:01 TP1] x"}) {
    EXPECT_EQ(fl->Disagreement(line, re, &taken), "") << line;
    EXPECT_FALSE(taken) << line;
  }
}

// A run followed by text it could also take: RE2 backs off to the longest
// run after which the text matches; so does the layout.
TEST(FastLayout, RunsBackOffLikeTheRegex) {
  RE2 re("(?:\x1b\\[[\\d;]*m)?\\[?(?P<f>[\\w./-]+)\\.py:(?P<l>\\d+)\\]");
  auto fl = FastLayout::Compile("[\x1b\\[{:[0-9;]*}m][\\[]{f:[\\w./-]+}.py:{l:digits}\\]", re, /*anchored=*/true);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  bool ok = false;
  auto g = Groups(*fl, "[loggers.py:116] Engine 000", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[1], "loggers");
  EXPECT_EQ(g[2], "116");
  g = Groups(*fl, "\x1b[1;36mvllm/v1/a.py.py:7] x", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[1], "vllm/v1/a.py");
  g = Groups(*fl, "\x1b[mx.py:1]", &ok);  // [0-9;]* may be empty
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[1], "x");
  bool taken = false;
  for (const char* line : {"[loggers.py:116] x", "a.py:1]", "a.py.py:1]", "a.py:x] b.py:2]", "[.py:1]", "\x1b[1mb.py:2]",
                           "\x1b[1;2", "a.pyc:1]"}) {
    EXPECT_EQ(fl->Disagreement(line, re, &taken), "") << line;
  }
}

TEST(FastLayout, GivesUpWhereTheRegexCouldChooseOtherwise) {
  // The section's skip finds a first 'g: ' that fails; the regex would try the second.
  RE2 re("a(?:.*?g: (?P<g>True|False),)?.*?t: (?P<t>\\d+)");
  auto fl = FastLayout::Compile("a[*g: {g:True|False},]*t: {t:digits}", re);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  bool taken = true;
  EXPECT_EQ(fl->Disagreement("a g: x, g: True, t: 5", re, &taken), "");
  EXPECT_FALSE(taken);
  // No 'g: ' at all: leaving the section out is what the regex does too.
  EXPECT_EQ(fl->Disagreement("a t: 5", re, &taken), "");
  EXPECT_TRUE(taken);
  // Taken section, then a failure: the regex would retry without it.
  EXPECT_EQ(fl->Disagreement("a g: True, x", re, &taken), "");
  EXPECT_FALSE(taken);
}

// A section that cannot start at the next byte is passed over without being
// run: the groups must still be the regex's (its own left out).
TEST(FastLayout, SectionsPassedOverByTheirFirstByte) {
  RE2 re("a(?:(?P<n>\\d+)x)?(?:(?P<w>[a-z]*)y)?(?: (?P<s>[a-z]*))?Z");
  //       gated by a digit    gated by [a-z]     starts with text
  auto fl = FastLayout::Compile("a[{n:digits}x][{w:[a-z]*}y][ {s:[a-z]*}]Z", re);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  bool ok = false;
  auto g = Groups(*fl, "a5xZ", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[1], "5");
  EXPECT_EQ(g[2].data(), nullptr);
  EXPECT_EQ(g[3].data(), nullptr);
  g = Groups(*fl, "-aZ", &ok);  // all three passed over
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[0], "aZ");
  EXPECT_EQ(g[1].data(), nullptr);
  EXPECT_EQ(g[2].data(), nullptr);
  g = Groups(*fl, "ayZ", &ok);  // an empty run in a taken section is a group, not a missing one
  ASSERT_TRUE(ok);
  ASSERT_NE(g[2].data(), nullptr);
  EXPECT_EQ(g[2], "");
  g = Groups(*fl, "a qZ", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[3], "q");
  bool taken = false;
  for (const char* line : {"a5xZ", "aZ", "aqyZ", "a5Z", "a5xqyZ", "a5x qZ", "a Z", "a5xqy Z", "a", "a5", "a5x", "aq", "a q",
                           "a5x5xZ", "b aZ", "aa5xZ", "a\xffZ", "ax5Z", "aqyqyZ", "ayyZ", "a qyZ"}) {
    EXPECT_EQ(fl->Disagreement(line, re, &taken), "") << line;
  }
  // Entered, failed at 'x' after setting its group, left out: the group is cleared.
  RE2 re2("a(?:(?P<n>\\d+)x)?(?P<m>\\d+)y");
  auto fl2 = FastLayout::Compile("a[{n:digits}x]{m:digits}y", re2);
  ASSERT_TRUE(fl2.ok()) << fl2.status().ToString();
  g = Groups(*fl2, "a12y", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(g[1].data(), nullptr);
  EXPECT_EQ(g[2], "12");
  EXPECT_EQ(fl2->Disagreement("a12y", re2, &taken), "");
}

// Skips in a section: whether their text occurs again is asked only when the
// section fails, for the first four lazily and for the rest at once.
TEST(FastLayout, SkipsInASectionDecideOnFailure) {
  RE2 re("a(?:.*?b.*?c.*?d.*?e.*?f\\d+,)?.*?t: (?P<t>\\d+)");
  auto fl = FastLayout::Compile("a[*b*c*d*e*f{:digits},]*t: {t:digits}", re);
  ASSERT_TRUE(fl.ok()) << fl.status().ToString();
  struct Case {
    const char* line;
    bool taken;
  };
  for (const Case& c : {Case{"a b c d e f1, t: 1", true},  // section taken
                        Case{"a b c d e fx t: 5", true},   // fails, no text again: left out
                        Case{"a b c d e fx t: 5 f", false},  // the fifth skip's text again
                        Case{"a b c d e fx t: 5 e", false},  // the fourth's
                        Case{"a b c d e fx t: 5 b", false},  // the first's
                        Case{"a b t: 5", true}, Case{"a t: 5", true}, Case{"a b c d e f1, t: x", false}}) {
    bool taken = !c.taken;
    EXPECT_EQ(fl->Disagreement(c.line, re, &taken), "") << c.line;
    EXPECT_EQ(taken, c.taken) << c.line;
  }
}

// Literal text of every length, compared a word at a time: a change at any
// byte declines.
TEST(FastLayout, LiteralsOfEveryLength) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (size_t len = 1; len <= alphabet.size(); ++len) {
    std::string lit = alphabet.substr(0, len);
    RE2 re("Q(?P<a>\\d+)" + lit + "(?P<b>\\d+)");
    auto fl = FastLayout::Compile("Q{a:digits}" + lit + "{b:digits}", re);
    ASSERT_TRUE(fl.ok()) << fl.status().ToString();
    std::string line = "xQ12" + lit + "34";
    bool ok = false;
    auto g = Groups(*fl, line, &ok);
    ASSERT_TRUE(ok) << line;
    EXPECT_EQ(g[2], "34");
    for (size_t k = 0; k < len; ++k) {
      std::string bad = line;
      bad[4 + k] = 'z';
      Groups(*fl, bad, &ok);
      EXPECT_FALSE(ok) << bad;
      Groups(*fl, line.substr(0, 4 + k), &ok);  // cut short inside the literal
      EXPECT_FALSE(ok) << line.substr(0, 4 + k);
    }
    // The text ends inside the literal while the bytes after it in memory
    // complete it: they are not the layout's to read.
    RE2 re_end("Q(?P<a>\\d+)" + lit);
    auto at_end = FastLayout::Compile("Q{a:digits}" + lit, re_end);
    ASSERT_TRUE(at_end.ok()) << at_end.status().ToString();
    std::string buffer = "xQ12" + lit + "......................";
    Groups(*at_end, std::string_view(buffer).substr(0, 4 + len), &ok);
    EXPECT_TRUE(ok);
    for (size_t k = 0; k < len; ++k) {
      Groups(*at_end, std::string_view(buffer).substr(0, 4 + k), &ok);
      EXPECT_FALSE(ok) << "cut at " << k << " of " << lit;
    }
  }
}

// Digit runs, numbers, non-space runs and fixed stretches are read 8 bytes at
// a time: random lines over the bytes next to the digits ('/' ':' and, with
// the high bit, 0xb0..0xb9) and around the spaces, of every length around 8,
// must give the regex's groups.
TEST(FastLayout, WordAtATimeAgreesWithTheRegex) {
  struct Case {
    const char* regex;
    const char* layout;
    bool anchored;
    const char* seed;  // a line it takes
  };
  const Case cases[] = {
      {"Q(?P<a>\\d+)x(?P<b>[\\d.]+)y(?:(?P<c>\\d+))?", "Q{a:digits}x{b:number}y[{c:digits}]", false,
       "Q1234567891x1.52.33456789y7"},
      {"(?P<d>\\d{4}-\\d\\d-\\d\\d) (?P<t>\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?)",
       "{d={:digits=4}-{:digits=2}-{:digits=2}} {t={:digits=2}:{:digits=2}:{:digits=2}[.{:digits}]}", true,
       "2025-10-14 10:00:01.25 x"},
      {"Q(?P<h>\\d{3}):(?P<m>\\d{2})", "Q{h:digits=3}:{m:digits=2}", false, "Q123:45"},
      {"Q(?P<s>\\d{9}/\\d{9})", "Q{s={:digits=9}/{:digits=9}}", false, "Q123456789/123456789x"},
      {"Q(?P<p>\\S+) (?P<n>\\d+)", "Q{p:nonspace} {n:digits}", false, "Q/v1/chat/completions/x/y/z 200"},
  };
  // Valid UTF-8 (what the parser gives a layout), with bytes whose low 7 bits
  // look like digits: 0xb0..0xb9 as the second byte of U+00B0..U+00B9.
  const std::vector<std::string> pieces = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "9", ".", "/", ":",
                                           " ", "-", "x", "y", "Q", "!", "\t", "\v", "\f", "\r", "\xc2\xb0",
                                           "\xc2\xb5", "\xc2\xb9", "\xc3\xbf", "\xc2\x80", "\xc2\xa0"};
  std::mt19937 rng(13);
  for (const Case& c : cases) {
    RE2 re(c.regex);
    ASSERT_TRUE(re.ok()) << c.regex;
    auto fl = FastLayout::Compile(c.layout, re, c.anchored);
    ASSERT_TRUE(fl.ok()) << fl.status().ToString();
    size_t taken_total = 0;
    for (int n = 0; n < 20000; ++n) {
      // Half a line the layout takes with bytes changed and cut, half random bytes.
      const bool shaped = n % 2 == 0;
      std::string line(shaped ? c.seed : (c.anchored ? "" : "Q"));
      size_t len = rng() % 32;
      if (shaped) {
        line.resize(std::min(line.size(), len + 4));
        for (int e = 0, edits = static_cast<int>(rng() % 3); e < edits; ++e) {
          size_t at = rng() % line.size();
          if (static_cast<unsigned char>(line[at]) < 0x80) line.replace(at, 1, pieces[rng() % pieces.size()]);
        }
      } else {
        for (size_t k = 0; k < len; ++k) line += pieces[rng() % pieces.size()];
      }
      bool taken = false;
      ASSERT_EQ(fl->Disagreement(line, re, &taken), "") << c.layout << " on: " << line;
      taken_total += taken;
    }
    EXPECT_GT(taken_total, 1000u) << c.layout;
  }
}

TEST(FastLayout, RejectsLayoutsThatCannotMirrorTheRegex) {
  RE2 re("Decode batch #r: (?P<r>\\d+)");
  auto bad = [&](const char* layout, const char* why) {
    auto fl = FastLayout::Compile(layout, re);
    ASSERT_FALSE(fl.ok()) << layout;
    EXPECT_NE(fl.status().message().find(why), std::string::npos) << fl.status().message();
  };
  bad("batch #r: {r:digits}", "must start with the regex's leading text 'Decode batch #r: '");
  bad("Decode batch #r: {nope:digits}", "group 'nope' is not captured");
  bad("Decode batch #r: {r:digits}{:number} ", "outside the class");
  bad("Decode batch #r: {r:float}", "unknown class 'float'");
  bad("Decode batch #r: {r:A|AB}", "begins");
  bad("Decode batch #r: *{r:digits}", "'*' must be followed by literal text");
  bad("Decode batch #r: [x[y]]", "do not nest");
  bad("Decode batch #r: [x", "without its ']'");
  bad("Decode batch #r: {r:digits", "without its '}'");
  bad("Decode batch #r: {r={:digits}", "without its '}'");
  bad("Decode batch #r: {nope={:digits}}", "group 'nope' is not captured");
  bad("Decode batch #r: {r={:digits}}{:number}", "outside the class");  // the run's end is the span's end
  bad("Decode batch #r: [{r:digits}]7", "outside the class");            // what follows a section counts
  bad("Decode batch #r: [{r:word}]_", "outside the class");
  bad("Decode batch #r: {r:[a-z]}", "[...]+ or [...]*");
  bad("Decode batch #r: {r:[z-a]+}", "backwards");
  bad("Decode batch #r: {r:[^a]+}", "negated");
  bad("Decode batch #r: {r:digits} {r:digits}", "captured twice");
  bad("Decode batch #r: {r={:digits}} [{r:digits}]", "captured twice");
  RE2 alt("a|b");
  EXPECT_FALSE(FastLayout::Compile("a", alt).ok());
  RE2 caseless("(?i)abc");
  EXPECT_FALSE(FastLayout::Compile("abc", caseless).ok());
}

// The loader refuses a layout that disagrees with its regex on a sample.
TEST(FastLayout, LoaderChecksSamplesAgainstTheRegex) {
  auto family = [](const std::string& fast) {
    return R"J({"schema": 1, "family": "demo", "patterns": [{
      "id": "d", "kind": "batch_stats", "literals": ["Decode batch"],
      "regex": "Decode batch\\. #r: (?P<r>\\d+), #t: (?P<t>\\d+)",
      "fast": )J" + fast + R"J(,
      "fields": {"running_reqs": {"group": "r", "type": "int"}},
      "samples": [{"line": "Decode batch. #r: 3, #t: 4", "fields": {"running_reqs": 3}}],
      "near_misses": ["Decode batch. #r: 3"]}]})J";
  };
  auto good = FormatSet::Load({{"demo.json", family(R"("Decode batch. #r: {r:digits}, #t: {t:digits}")")}}, true);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  Event e;
  std::string err;
  ASSERT_TRUE(good->MatchPattern(good->patterns()[0], "Decode batch. #r: 17, #t: 2", &e, &err));
  EXPECT_EQ(e.fields()["running_reqs"], 17);
  // Swapped groups: the fields would be wrong, the loader says where.
  auto swapped = FormatSet::Load({{"demo.json", family(R"("Decode batch. #r: {t:digits}, #t: {r:digits}")")}}, true);
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(swapped.status().message().find("$.patterns[0].fast"), std::string::npos) << swapped.status().message();
  EXPECT_NE(swapped.status().message().find("the regex captures '3'"), std::string::npos) << swapped.status().message();
  // A layout no sample takes would never pay.
  auto unused = FormatSet::Load({{"demo.json", family(R"("Decode batch. #r: {r:digits}, #x: {t:digits}")")}}, true);
  ASSERT_FALSE(unused.ok());
  EXPECT_NE(unused.status().message().find("no sample takes the fast layout"), std::string::npos);
  auto bad_type = FormatSet::Load({{"demo.json", family("7")}}, true);
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.status().message().find("$.patterns[0].fast"), std::string::npos);
}

// ---- differential check over the real format files ----------------------------

// Mutations of a line that keep it close to the layout: the cases where a
// hand parser and a regex part ways.
std::string Mutate(const std::string& line, std::mt19937* rng) {
  static const char* kBits[] = {", ", ": ", "#", "full ", "cuda graph: True, ", "cuda graph: False,", "gen throughput (token/s): 1.5, ",
                                "#queue-req: 9", " reqs,", "Swapped: 0 reqs,", "Waiting: ", "Pending: ", "token usage: 0.5,",
                                "\"", " HTTP/1.1\" ", "GET ", "POST /x", "1", "0.", ".", "x", " ", "%", "True", "Decode batch. ",
                                "Prefill batch. ", "Avg prompt throughput: ", "#new-token: 5", "#running-req: 2, "};
  std::string s = line;
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>((*rng)() % n); };
  int edits = 1 + static_cast<int>(pick(3));
  for (int e = 0; e < edits; ++e) {
    size_t at = pick(s.size() + 1);
    switch (pick(7)) {
      case 0: if (!s.empty() && at < s.size()) s.erase(at, 1 + pick(6)); break;                 // delete
      case 1: s.insert(at, kBits[pick(std::size(kBits))]); break;                               // insert a piece
      case 2: s = s.substr(0, at); break;                                                       // truncate
      case 3: if (at < s.size()) s[at] = "0123456789.,: x#"[pick(16)]; break;                    // replace a char
      case 4: { size_t len = pick(40); s.insert(at, s.substr(pick(s.size() + 1), len)); break; }  // duplicate a piece
      case 5: s.append(", ").append(line); break;                                               // the record twice
      case 6: { std::string d = std::to_string(pick(100000)); if (pick(2)) d.append(".").append(std::to_string(pick(100))); s.insert(at, d); break; }
    }
  }
  return s;
}

TEST(FastLayout, AgreesWithTheRegexOnMutatedLines) {
  auto formats = FormatSet::LoadBuiltin(/*strict=*/true);
  ASSERT_TRUE(formats.ok()) << formats.status().ToString();
  std::vector<std::string> seeds = {
      "Decode batch. #running-req: 64, #token: 40960, token usage: 0.88, cuda graph: True, gen throughput (token/s): 2310.55, #queue-req: 3,",
      "Decode batch. #running-req: 1, #token: 38, token usage: 0.00, gen throughput (token/s): 31.95, #queue-req: 0",
      "Decode batch. #running-req: 5, #token: 380, token usage: 0.02, accept len: 1.73, cuda graph: False, gen throughput (token/s): 99.1, #queue-req: 0, ",
      "Prefill batch. #new-seq: 4, #new-token: 8192, #cached-token: 120, cache hit rate: 1.45%, token usage: 0.31, #running-req: 12, #queue-req: 40",
      "Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ",
      "Engine 000: Avg prompt throughput: 1200.5 tokens/s, Avg generation throughput: 350.2 tokens/s, Running: 12 reqs, Waiting: 3 reqs, GPU KV cache usage: 45.3%, Prefix cache hit rate: 10.0%",
      "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 31.2 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.4%, CPU KV cache usage: 0.0%.",
      "INFO:     10.0.2.141:37662 - \"GET /health HTTP/1.1\" 503 Service Unavailable",
      "INFO:     127.0.0.1:49540 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
  };
  std::mt19937 rng(20261129);
  size_t checked = 0, seed_taken = 0, mutant_taken = 0, mutant_declined = 0, with_layout = 0;
  for (const PatternSpec& p : formats->patterns()) {
    if (p.fast.empty()) continue;
    ++with_layout;
    for (const auto& seed : seeds) {
      for (int n = 0; n < 3000; ++n) {
        std::string line = n == 0 ? seed : Mutate(seed, &rng);
        for (const auto& fl : p.fast) {
          bool taken = false;
          std::string why = fl->Disagreement(line, *p.re, &taken);
          ASSERT_EQ(why, "") << p.family << "." << p.id << " layout on: " << line;
          ++checked;
          if (n == 0) seed_taken += taken;
          else if (taken) ++mutant_taken;
          else ++mutant_declined;
        }
      }
    }
  }
  // Not vacuous: the four high-volume patterns carry layouts, each seed is
  // taken by its own, and mutants go both ways.
  std::printf("checked %zu lines, seeds taken %zu, mutants taken %zu, declined %zu\n", checked, seed_taken,
              mutant_taken, mutant_declined);
  EXPECT_GE(with_layout, 4u);
  EXPECT_GE(seed_taken, seeds.size());
  EXPECT_GT(mutant_taken, checked / 20) << "mutants taken by the fast path";
  EXPECT_GT(mutant_declined, checked / 20) << "mutants left to the regex";
}

TEST(FastLayout, PrefixLayoutsAgreeWithTheRegexOnMutatedLines) {
  auto formats = FormatSet::LoadBuiltin(/*strict=*/true);
  ASSERT_TRUE(formats.ok()) << formats.status().ToString();
  std::vector<std::string> seeds = {
      "[2025-10-14 10:00:01 TP3] Decode batch. #running-req: 1",
      "[2026-05-13 02:14:33 DP1 TP1] Init torch distributed ends.",
      "[2025-06-26 07:25:31 DP0 PP1 TP2 EP2] Load weight begin.",
      "[2026-03-01 10:00:00.123 TP0] Memory pool end.",
      "[2025-12-02 07:04:51 DisaggregationMode.DECODE ATTN_CP1 MOE_DP2 TP1] Load weight end.",
      "[2025-03-08 12:29:33] The server is fired up and ready to roll!",
      "INFO 07-23 20:49:31 worker.py:241] the current vLLM instance",
      "ERROR 09-28 15:47:24 [core.py:718] ValueError: Free memory on device",
      "DEBUG 01-23 12:00:00.125 [v1/core/kv_cache_utils.py:1087] x",
      "\x1b[32mINFO\x1b[0m \x1b[90m01-23 12:00:00\x1b[0m \x1b[90m[core.py:77]\x1b[0m x",
  };
  static const char* kBits[] = {" TP", " DP", " PP", " EP", " ATTN_CP", " MOE_DP", "1", "12", ".", ".5", "] ", "]", "[", " ",
                                "DisaggregationMode.", "x", ":", "-", "\x1b[", "\x1b[1;3m", "m", ".py", ".py:", "a/b", "INFO"};
  std::mt19937 rng(7);
  size_t taken_total = 0, declined = 0, layouts = 0;
  for (const PrefixSpec& p : formats->prefixes()) {
    if (p.fast.empty()) continue;
    ++layouts;
    for (const auto& seed : seeds) {
      for (int n = 0; n < 3000; ++n) {
        std::string line = seed;
        if (n > 0) {
          for (int e = 0, edits = 1 + static_cast<int>(rng() % 3); e < edits; ++e) {
            size_t at = rng() % 60;
            if (at > line.size()) at = line.size();
            switch (rng() % 3) {
              case 0: line.erase(at, 1 + rng() % 4); break;
              case 1: line.insert(at, kBits[rng() % std::size(kBits)]); break;
              case 2: if (at < line.size()) line[at] = "0123456789 .:-[]TPDxm\x1b"[rng() % 22]; break;
            }
          }
        }
        for (const auto& fl : p.fast) {
          bool taken = false;
          ASSERT_EQ(fl->Disagreement(line, *p.re, &taken), "") << p.family << "." << p.id << " on: " << line;
          taken ? ++taken_total : ++declined;
        }
      }
    }
  }
  EXPECT_GE(layouts, 2u);
  EXPECT_GT(taken_total, 1000u);
  EXPECT_GT(declined, 1000u);
}

}  // namespace
}  // namespace tpt
