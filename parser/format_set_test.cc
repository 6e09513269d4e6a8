#include "parser/format_set.h"
#include "parser/format_load.h"
#include "parser/match/prefix_dfa.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace tpt {
namespace {

// A minimal valid family; tests break one thing at a time.
std::string Family(const std::string& pattern_overrides = "", const std::string& extra = "") {
  return R"J({"schema": 1, "family": "demo", )J" + extra + R"J("patterns": [{
    "id": "load_end", "kind": "weights_load_end", "literals": ["Load weight end"],
    "regex": "Load weight end\\. .*?avail mem=(?P<avail>[\\d.]+) GB)J" + pattern_overrides + R"J(",
    "fields": {"avail_bytes": {"group": "avail", "type": "bytes", "unit": "GB_as_GiB"}},
    "samples": [{"line": "Load weight end. type=X, avail mem=2.00 GB", "fields": {"avail_bytes": 2147483648}}],
    "near_misses": ["Load weight end. nothing else"]}]})J";
}

StatusOr<FormatSet> LoadOne(const std::string& text, bool strict = true) {
  return FormatSet::Load({{"demo.json", text}}, strict);
}

TEST(FormatSet, LoadsAValidFamily) {
  auto fs = LoadOne(Family());
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  ASSERT_EQ(fs->patterns().size(), 1u);
  Event e;
  std::string err;
  ASSERT_TRUE(fs->MatchPattern(fs->patterns()[0], "Load weight end. x, avail mem=1.5 GB", &e, &err));
  EXPECT_DOUBLE_EQ(e.fields()["avail_bytes"].get<double>(), 1.5 * (1 << 30));
  EXPECT_EQ(e.kind, "weights_load_end");
  EXPECT_EQ(e.family, "demo");
}

TEST(FormatSet, SampleCheckCanBeSkippedButNotTheStructure) {
  // A sample whose expected value is wrong: caught only when samples run.
  std::string wrong = Family();
  wrong.replace(wrong.find("2147483648"), 10, "1");
  auto checked = FormatSet::Load({{"demo.json", wrong}}, /*strict=*/true, /*check_samples=*/true);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.status().message().find("samples[0].fields"), std::string::npos) << checked.status().message();
  auto unchecked = FormatSet::Load({{"demo.json", wrong}}, /*strict=*/true, /*check_samples=*/false);
  ASSERT_TRUE(unchecked.ok()) << unchecked.status().ToString();
  EXPECT_EQ(unchecked->patterns().size(), 1u);
  // A regex that does not compile, or a pattern without samples, is still refused.
  auto bad_regex = FormatSet::Load({{"demo.json", Family("(")}}, true, /*check_samples=*/false);
  EXPECT_FALSE(bad_regex.ok());
  std::string no_samples = Family();
  size_t at = no_samples.find("\"samples\"");
  no_samples.replace(at, 9, "\"samplez\"");
  auto missing = FormatSet::Load({{"demo.json", no_samples}}, true, /*check_samples=*/false);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("sample"), std::string::npos) << missing.status().message();
}

void ExpectRejected(const std::string& text, const std::string& path_part, const std::string& why_part) {
  auto fs = LoadOne(text);
  ASSERT_FALSE(fs.ok());
  const std::string& m = fs.status().message();
  EXPECT_NE(m.find("demo.json"), std::string::npos) << m;
  EXPECT_NE(m.find(path_part), std::string::npos) << m;
  EXPECT_NE(m.find(why_part), std::string::npos) << m;
}

TEST(FormatSet, RejectsARegexThatDoesNotCompile) {
  ExpectRejected(Family("(("), "$.patterns[0].regex", "missing )");
}

TEST(FormatSet, RejectsAFieldGroupNotCaptured) {
  std::string t = Family();
  t.replace(t.find("\"group\": \"avail\""), 16, "\"group\": \"nope\"");
  ExpectRejected(t, "$.patterns[0].fields.avail_bytes.group", "not captured");
}

// One field from alternative places in a line: `or_groups` are read in order when
// `group` took no part in the match (a path printed before or after the message).
TEST(FormatSet, OrGroupsFillAFieldFromItsAlternativePlaces) {
  std::string t = R"J({"schema": 1, "family": "demo", "patterns": [{
    "id": "full", "kind": "disk_full", "literals": ["no space"],
    "regex": "(?:write (?P<before>/\\S+): )?no space(?:: (?P<after>/\\S+))?",
    "fields": {"path": {"group": "after", "or_groups": ["before"], "type": "string", "optional": true}},
    "samples": [{"line": "write /a/b: no space", "fields": {"path": "/a/b"}},
                {"line": "no space: /c/d", "fields": {"path": "/c/d"}}],
    "near_misses": ["no room"]}]})J";
  auto fs = LoadOne(t);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  Event e;
  std::string err;
  ASSERT_TRUE(fs->MatchPattern(fs->patterns()[0], "write /x/y: no space", &e, &err));
  EXPECT_EQ(e.fields()["path"], "/x/y");
  Event bare;
  ASSERT_TRUE(fs->MatchPattern(fs->patterns()[0], "no space", &bare, &err));
  EXPECT_FALSE(bare.fields().contains("path"));
  std::string bad = t;
  bad.replace(bad.find("[\"before\"]"), 10, "[\"nope\"]");
  ExpectRejected(bad, "$.patterns[0].fields.path.or_groups", "'nope' is not a group the regex captures");
}

TEST(FormatSet, RejectsUnknownTypeAndUnit) {
  std::string t = Family();
  t.replace(t.find("\"type\": \"bytes\""), 15, "\"type\": \"bites\"");
  ExpectRejected(t, "fields.avail_bytes.type", "unknown type");
  std::string u = Family();
  u.replace(u.find("GB_as_GiB"), 9, "furlongs");
  ExpectRejected(u, "fields.avail_bytes.unit", "unknown unit");
}

TEST(FormatSet, RejectsASampleThatYieldsWrongFields) {
  std::string t = Family();
  t.replace(t.find("2147483648"), 10, "2000000000");
  ExpectRejected(t, "$.patterns[0].samples[0].fields", "avail_bytes");
}

TEST(FormatSet, RejectsASampleThatMatchesNothing) {
  std::string t = Family();
  t.replace(t.find("avail mem=2.00 GB\""), 18, "avail mem=lots\"");
  ExpectRejected(t, "$.patterns[0].samples[0].line", "matches nothing");
}

TEST(FormatSet, RejectsASampleWithoutItsLiteral) {
  std::string t = Family();
  t.replace(t.find("[\"Load weight end\"]"), 19, "[\"Weights loaded\"]");
  ExpectRejected(t, "$.patterns[0].samples[0].line", "literals");
}

TEST(FormatSet, RejectsANearMissThatMatches) {
  std::string t = Family();
  t.replace(t.find("Load weight end. nothing else"), 29, "Load weight end. y, avail mem=3 GB");
  ExpectRejected(t, "$.patterns[0].near_misses[0]", "matches");
}

TEST(FormatSet, RejectsBadJsonAndMissingPieces) {
  ExpectRejected("{not json", "demo.json", "not valid JSON");
  ExpectRejected(R"J({"schema": 2, "family": "demo", "patterns": []})J", "$.schema", "must be 1");
  std::string t = Family();
  t.replace(t.find("\"literals\": [\"Load weight end\"],"), 32, "");
  ExpectRejected(t, "$.patterns[0].literals", "required");
}

// A key holding another type than the spec's (a string schema, a string where a flag or a
// count goes) is the file's error with its name, not an exception out of the loader (the
// formats fuzzer found "schema": "wrappers" terminating the process).
TEST(FormatSet, AValueOfTheWrongTypeIsTheFilesErrorNotACrash) {
  ExpectRejected(R"J({"schema": "wrappers", "family": "demo", "patterns": []})J", "demo.json", "wrong type");
  std::string t = Family();
  t.replace(t.find("\"literals\""), 0, "\"consequence\": \"yes\", ");
  ExpectRejected(t, "demo.json", "wrong type");
  // Left out and named when not strict, the good file kept.
  std::string good = Family();
  good.replace(good.find("\"demo\""), 6, "\"demo2\"");
  auto fs = FormatSet::Load({{"typed.json", R"J({"schema": "1", "family": "demo", "patterns": []})J"}, {"good.json", good}},
                            false);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  ASSERT_EQ(fs->problems().size(), 1u);
  EXPECT_NE(fs->problems()[0].find("typed.json"), std::string::npos) << fs->problems()[0];
}

TEST(FormatSet, ABadFileIsLeftOutAndNamedWhenNotStrict) {
  std::string bad = Family("((");
  std::string good = Family();
  good.replace(good.find("\"demo\""), 6, "\"demo2\"");
  auto fs = FormatSet::Load({{"bad.json", bad}, {"good.json", good}}, false);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  ASSERT_EQ(fs->problems().size(), 1u);
  EXPECT_NE(fs->problems()[0].find("bad.json: $.patterns[0].regex"), std::string::npos);
  EXPECT_EQ(fs->families(), std::vector<std::string>{"demo2"});
}

TEST(FormatSet, PrefixesStripAndFillTheProducer) {
  std::string extra = R"J("prefixes": [{"id": "p", "regex": "\\[(?P<date>\\d{4}-\\d\\d-\\d\\d) (?P<time>\\d\\d:\\d\\d:\\d\\d)(?: TP(?P<tp_rank>\\d+))?\\] ",
      "samples": [{"line": "[2025-10-14 10:00:01 TP3] Load weight end.", "fields": {"tp_rank": 3, "ts": 1760436001}}]}], )J";
  auto fs = LoadOne(Family("", extra));
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  LineMeta meta;
  std::string line = "[2025-10-14 10:00:01 TP3] Load weight end. x";
  auto st = fs->StripLine(line, &meta);
  EXPECT_EQ(line.substr(st.begin, st.end - st.begin), "Load weight end. x");
  EXPECT_EQ(meta.tp_rank, 3);
  ASSERT_TRUE(meta.ts);
  EXPECT_DOUBLE_EQ(meta.ts->value, 1760436001);
}

// Which wrappers and prefixes match at a place is answered by our automaton
// (prefix_dfa.h) for the built-in files, checked against RE2 on their samples.
TEST(FormatSet, BuiltinPrefixesAreAnsweredByTheAutomaton) {
  auto fast = FormatSet::LoadBuiltin();
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_TRUE(fast->prefixes_by_automaton());
  auto checked = FormatSet::LoadBuiltinChecked();
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_TRUE(checked->prefixes_by_automaton());
  for (const auto& p : checked->problems()) ADD_FAILURE() << p;
}

// A member the automaton cannot read (here `\b`) leaves the question to
// RE2::Set: lines strip as they would with the automaton.
TEST(FormatSet, APrefixTheAutomatonCannotReadIsAskedOfRe2) {
  auto family = [](const std::string& boundary) {
    return Family("", R"J("prefixes": [{"id": "p", "regex": "\\[(?P<date>\\d{4}-\\d\\d-\\d\\d) (?P<time>\\d\\d:\\d\\d:\\d\\d)(?: TP(?P<tp_rank>\\d+))?\\])J" +
                               boundary + R"J( ", "samples": [{"line": "[2025-10-14 10:00:01 TP3] Load weight end.", "fields": {"tp_rank": 3}}]}], )J");
  };
  auto plain = LoadOne(family(""));
  auto bounded = LoadOne(family("\\\\B"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  EXPECT_TRUE(plain->prefixes_by_automaton());
  EXPECT_FALSE(bounded->prefixes_by_automaton());
  for (const std::string line : {"[2025-10-14 10:00:01 TP3] Load weight end. x", "[2025-10-14 10:00:01] x", "[2025-10-14 TP3] x"}) {
    LineMeta a, b;
    auto sa = plain->StripLine(line, &a);
    auto sb = bounded->StripLine(line, &b);
    EXPECT_EQ(sa.begin, sb.begin) << line;
    EXPECT_EQ(a.tp_rank, b.tp_rank) << line;
    EXPECT_EQ(a.wrapper.dump(), b.wrapper.dump()) << line;
  }
  LineMeta meta;
  std::string line = "[2025-10-14 10:00:01 TP3] Load weight end. x";
  auto st = bounded->StripLine(line, &meta);
  EXPECT_EQ(line.substr(st.begin), "Load weight end. x");
  EXPECT_EQ(meta.tp_rank, 3);
}

}  // namespace

// Reaches the automaton a FormatSet holds, to plant a wrong one.
class FormatSetPeer {
 public:
  static void SetAutomaton(FormatSet* fs, std::shared_ptr<const PrefixDfa> dfa) {
    fs->prefix_matcher_.SetAutomatonForTest(std::move(dfa));
  }
  static Status Check(FormatSet* fs, const std::vector<nlohmann::json>& docs) {
    return FormatSet::Loader{*fs}.CheckPrefixAutomaton(docs);
  }
};

namespace {

// A checked load compares the automaton with RE2::Set on every sample: an
// automaton that answers wrong is dropped, named in problems(), and lines
// strip as RE2 says.
TEST(FormatSet, AnAutomatonThatDisagreesWithRe2IsDropped) {
  std::string text = Family("", R"J("prefixes": [{"id": "p", "regex": "\\[(?P<date>\\d{4}-\\d\\d-\\d\\d) (?P<time>\\d\\d:\\d\\d:\\d\\d)(?: TP(?P<tp_rank>\\d+))?\\] ",
      "samples": [{"line": "[2025-10-14 10:00:01 TP3] Load weight end.", "fields": {"tp_rank": 3}}]}], )J");
  auto fs = LoadOne(text);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  ASSERT_TRUE(fs->prefixes_by_automaton());
  std::vector<nlohmann::json> docs = {nlohmann::json::parse(text)};
  ASSERT_TRUE(FormatSetPeer::Check(&*fs, docs).ok());
  EXPECT_TRUE(fs->prefixes_by_automaton());  // the right one agrees
  auto wrong = PrefixDfa::Build({"x"});
  ASSERT_TRUE(wrong.ok());
  FormatSetPeer::SetAutomaton(&*fs, *wrong);
  std::string line = "[2025-10-14 10:00:01 TP3] Load weight end. x";
  LineMeta before;
  EXPECT_EQ(fs->StripLine(line, &before).begin, 0u);  // the planted automaton strips nothing
  ASSERT_TRUE(FormatSetPeer::Check(&*fs, docs).ok());
  EXPECT_FALSE(fs->prefixes_by_automaton());
  ASSERT_EQ(fs->problems().size(), 1u);
  EXPECT_NE(fs->problems()[0].find("disagree"), std::string::npos) << fs->problems()[0];
  EXPECT_NE(fs->problems()[0].find("[2025-10-14 10:00:01 TP3] Load weight end."), std::string::npos);
  LineMeta after;
  auto st = fs->StripLine(line, &after);
  EXPECT_EQ(line.substr(st.begin), "Load weight end. x");
  EXPECT_EQ(after.tp_rank, 3);
}

TEST(FormatSet, KvGroupFillsArgsAndKnownFields) {
  std::string t = R"J({"schema": 1, "family": "demo", "patterns": [{
    "id": "args", "kind": "server_args", "literals": ["server_args=ServerArgs("],
    "regex": "server_args=ServerArgs\\((?P<kv>.*)\\)?$", "kv_group": "kv", "set": {"framework": "sglang"},
    "samples": [{"line": "server_args=ServerArgs(model_path='m', tp_size=2, mem_fraction_static=0.8)",
                 "fields": {"tp_size": 2, "model": "m", "framework": "sglang", "args": {"mem_fraction_static": 0.8}}}],
    "near_misses": ["server_args=ServerArgs"]}]})J";
  auto fs = LoadOne(t);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
}

TEST(FormatSet, RepeatWrapperSampleNeedsThePreviousLine) {
  auto family = [](const std::string& previous) {
    return R"J({"schema": 1, "family": "w", "wrappers": [{"id": "host", "regex": "^(?P<host>[a-z]+-\\d+): ", "repeat": true,
      "samples": [{"line": "node-1: x", )J" + previous + R"J("fields": {"host": "node-1"}}]}]})J";
  };
  auto files = [&](const std::string& previous) {
    std::vector<FormatSource> f = {{"w.json", family(previous)}};
    for (const auto& s : FormatSet::BuiltinSources()) {
      if (s.name.find("python.json") != std::string::npos) f.push_back(s);
    }
    return f;
  };
  EXPECT_TRUE(FormatSet::Load(files(R"("previous": "node-1: y", )"), true).ok());
  auto missing = FormatSet::Load(files(""), true);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("$.wrappers[0].samples[0].previous"), std::string::npos)
      << missing.status().message();
  auto other = FormatSet::Load(files(R"("previous": "node-2: y", )"), true);
  EXPECT_FALSE(other.ok());
}

// StripLine keeps state per thread (the automaton's states, recycled
// objects). Lines sharing their first bytes but stripped differently, in any
// order on one thread, must give what each gives on a fresh thread.
std::string StripResult(const FormatSet& fs, const std::string& line, const std::string& previous) {
  LineMeta meta;
  auto st = fs.StripLine(line, &meta, previous);
  nlohmann::json j = {{"begin", st.begin},      {"end", st.end},        {"wrapped_end", st.wrapped_end},
                      {"rank", meta.rank},      {"local", meta.local_rank}, {"pid", meta.pid},
                      {"dp", meta.dp_rank},     {"pp", meta.pp_rank},   {"tp", meta.tp_rank},
                      {"ep", meta.ep_rank},     {"host", meta.host},    {"process", meta.process},
                      {"wrapper", meta.wrapper}};
  if (meta.ts) j["ts"] = meta.ts->value;
  return j.dump();
}

TEST(FormatSet, StrippingALineDoesNotDependOnTheLinesBefore) {
  auto fs = FormatSet::LoadBuiltin();
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  const std::vector<std::string> lines = {
      "[2025-10-14 10:00:04 TP0] Decode batch. #running-req: 24, #token: 58192",
      "[2025-10-14 10:00:04] [2025-10-14 10:00:04 TP1] Decode batch. #running-req: 2",  // collector stamp first
      "[2025-10-14 10:00:04,123] torch.distributed.elastic.agent: [default] Worker failed",
      "[2025-10-14 10:00:04 TP0] [rank0]: Traceback (most recent call last):",
      "[2025-10-14 10:00:05 DP1 TP3] Prefill batch. #new-seq: 1",
      "[2025-10-14 10:00:04 TP0 something else",  // no prefix at all
      "INFO 10-14 10:00:03 [loggers.py:116] Engine 000: Avg prompt throughput: 1.0 tokens/s",
      "INFO:     10.0.95.218:47608 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
      "INFO 10-14 10:00:03 [loggers.py:116] (VllmWorker rank=1 pid=3) hello",
      "[rank0]: [2025-10-14 10:00:04 TP0] Decode batch.",
      // Alike for 8 bytes after the prefix, a wrapper only in the second.
      "[2025-10-14 10:00:04 TP0] [default0] not a wrapper",
      "[2025-10-14 10:00:04 TP0] [default0]: a torchrun wrapper after the prefix",
      "[rank1]: [rank0]: nested",
      "node-1: [2025-10-14 10:00:04 TP0] Decode batch.",
      "node-1: node-1: twice",
      "2025-10-14T10:00:04.123456789Z [2025-10-14 10:00:04 TP2] Decode batch.",
      "2025-10-14T10:00:04.123456789Z INFO 10-14 10:00:03 [loggers.py:116] x",
  };
  // What each line gives with no predictions made yet (a fresh thread), after
  // each possible previous line (the `repeat` wrapper reads it).
  std::vector<std::vector<std::string>> fresh(lines.size(), std::vector<std::string>(lines.size()));
  std::thread t([&] {
    for (size_t i = 0; i < lines.size(); ++i) {
      for (size_t p = 0; p < lines.size(); ++p) {
        std::thread one([&] { fresh[i][p] = StripResult(*fs, lines[i], lines[p]); });
        one.join();
      }
    }
  });
  t.join();
  EXPECT_NE(fresh[1][0], fresh[0][0]);
  // Every ordered pair, then every line again, on this thread: the first of
  // the pair leaves its predictions for the second. Three rounds: the proofs
  // start after a member was asked about 256 times.
  for (int round = 0; round < 3; ++round) {
    for (size_t a = 0; a < lines.size(); ++a) {
      for (size_t b = 0; b < lines.size(); ++b) {
        EXPECT_EQ(StripResult(*fs, lines[a], lines[b]), fresh[a][b]) << lines[a];
        EXPECT_EQ(StripResult(*fs, lines[b], lines[a]), fresh[b][a]) << lines[b] << " after " << lines[a];
        EXPECT_EQ(StripResult(*fs, lines[b], lines[b]), fresh[b][b]) << lines[b] << " twice";
      }
    }
  }
}

}  // namespace
}  // namespace tpt
