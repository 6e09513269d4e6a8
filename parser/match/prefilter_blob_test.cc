// The built-in formats' literal database is compiled by the build and
// embedded (prefilter_blob.h): it must be used by LoadBuiltin, find exactly
// what a database compiled at run time finds, and be refused (the database
// then compiled) when it was made from other literals or its bytes are damaged.
#include "parser/match/prefilter_blob.h"

#include <gtest/gtest.h>
#include <hs/hs.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "parser/event_json.h"
#include "parser/format_set.h"
#include "parser/stream_parser.h"

namespace tpt {
namespace {

// Every line of the repository's sample logs, and each literal of `fs` in a
// line as written, upper-cased and lower-cased (caseless literals), plus an
// ANSI colour code (the rescan literal).
std::vector<std::string> Lines(const FormatSet& fs) {
  std::vector<std::string> lines;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TPT_SOURCE_DIR) + "/samples/logs")) {
    if (entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  auto add = [&](const std::string& lit) {
    std::string up = lit, down = lit;
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
    std::transform(down.begin(), down.end(), down.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const std::string& l : {lit, up, down}) lines.push_back("[2025-10-14 10:00:01 TP0] x " + l + " y");
  };
  for (const auto& p : fs.patterns()) std::for_each(p.literals.begin(), p.literals.end(), add);
  for (const auto& b : fs.blocks()) std::for_each(b.literals.begin(), b.literals.end(), add);
  lines.push_back("\x1b[32mcoloured\x1b[0m");
  return lines;
}

using Hit = std::tuple<size_t, unsigned, unsigned long long>;  // line, literal id, end offset

// What the set's literal database reports on each line, in order.
std::vector<Hit> Hits(const FormatSet& fs, const std::vector<std::string>& lines) {
  hs_scratch_t* scratch = nullptr;
  EXPECT_EQ(hs_alloc_scratch(fs.literal_db(), &scratch), HS_SUCCESS);
  struct Ctx {
    std::vector<Hit>* hits;
    size_t line;
  };
  std::vector<Hit> hits;
  for (size_t i = 0; i < lines.size(); ++i) {
    Ctx ctx{&hits, i};
    auto on_match = [](unsigned id, unsigned long long, unsigned long long to, unsigned, void* c) -> int {
      auto* x = static_cast<Ctx*>(c);
      x->hits->emplace_back(x->line, id, to);
      return 0;
    };
    EXPECT_EQ(hs_scan(fs.literal_db(), lines[i].data(), static_cast<unsigned>(lines[i].size()), 0, scratch, on_match,
                      &ctx),
              HS_SUCCESS);
  }
  hs_free_scratch(scratch);
  std::sort(hits.begin(), hits.end());
  return hits;
}

// The events of `text` (one stream), as JSON.
std::vector<std::string> Events(const FormatSet& fs, const std::string& text) {
  ParseOptions options;  // StreamParser keeps a reference
  StreamParser p(fs, options, 0, "t.log");
  std::vector<Event> out;
  Block block;
  block.text = text;
  p.ParseBlock(block, &out);
  p.Finish(&out);
  std::vector<std::string> json;
  for (const Event& e : out) json.push_back(EventToJson(e).dump());
  return json;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(PrefilterBlob, LoadBuiltinUsesTheDatabaseTheBuildCompiled) {
  ASSERT_FALSE(prefilter::EmbeddedBlob().empty()) << "the build made no blob (gen_prefilter_blob failed?)";
  auto embedded = FormatSet::LoadBuiltin();
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  EXPECT_TRUE(embedded->prefilter_from_blob());
  auto compiled = FormatSet::LoadBuiltinChecked();  // no blob given: compiled here
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_FALSE(compiled->prefilter_from_blob());
  // The very bytes the run would have compiled (same literals, Hyperscan, CPU).
  auto again = compiled->SerializePrefilter();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(*again == prefilter::EmbeddedBlob()) << "sizes " << again->size() << " vs "
                                                   << prefilter::EmbeddedBlob().size();
}

TEST(PrefilterBlob, EmbeddedDatabaseFindsWhatACompiledOneFinds) {
  auto embedded = FormatSet::LoadBuiltin();
  auto compiled = FormatSet::LoadBuiltinChecked();
  ASSERT_TRUE(embedded.ok() && compiled.ok());
  ASSERT_TRUE(embedded->prefilter_from_blob());
  ASSERT_EQ(embedded->targets().size(), compiled->targets().size());
  std::vector<std::string> lines = Lines(*compiled);
  std::vector<Hit> want = Hits(*compiled, lines);
  ASSERT_GT(want.size(), lines.size() / 2);  // the probe lines do hold literals
  EXPECT_EQ(Hits(*embedded, lines), want);
  std::vector<std::string> events = Events(*compiled, Join(lines));
  EXPECT_GT(events.size(), 100u);
  EXPECT_EQ(Events(*embedded, Join(lines)), events);
}

// A small family; `literal` and `caseless` vary the literal database only.
std::string Family(const std::string& literal, bool caseless) {
  return R"J({"schema": 1, "family": "demo", "patterns": [{
    "id": "load_end", "kind": "weights_load_end", "literals": [")J" + literal + R"J("],
    "caseless": )J" + (caseless ? "true" : "false") + R"J(,
    "regex": "(?i)Load weight end\\. .*?avail mem=(?P<avail>[\\d.]+) GB",
    "fields": {"avail_bytes": {"group": "avail", "type": "bytes", "unit": "GB_as_GiB"}},
    "samples": [{"line": "Load weight end. type=X, avail mem=2.00 GB", "fields": {"avail_bytes": 2147483648}}],
    "near_misses": ["Load weight end. nothing else"]}]})J";
}

StatusOr<FormatSet> LoadWith(const std::string& family, std::string_view blob) {
  return FormatSet::Load({{"demo.json", family}}, /*strict=*/true, /*check_samples=*/true, blob);
}

// Refused blobs leave a compiled database that still finds the event.
void ExpectRefused(const std::string& family, std::string_view blob, const std::string& what) {
  auto fs = LoadWith(family, blob);
  ASSERT_TRUE(fs.ok()) << what << ": " << fs.status().ToString();
  EXPECT_FALSE(fs->prefilter_from_blob()) << what;
  ASSERT_NE(fs->literal_db(), nullptr) << what;
  auto events = Events(*fs, "Load weight end. t=X, avail mem=1.5 GB\n");
  ASSERT_EQ(events.size(), 1u) << what;
  EXPECT_NE(events[0].find("weights_load_end"), std::string::npos) << what;
}

TEST(PrefilterBlob, ABlobMadeFromOtherLiteralsIsRefused) {
  const std::string family = Family("Load weight end", false);
  auto made = LoadWith(family, {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto blob = made->SerializePrefilter();
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  auto reused = LoadWith(family, *blob);  // control: the same literals take it
  ASSERT_TRUE(reused.ok());
  EXPECT_TRUE(reused->prefilter_from_blob());
  EXPECT_EQ(Events(*reused, "Load weight end. t=X, avail mem=1.5 GB\n").size(), 1u);

  ExpectRefused(Family("Load weight", false), *blob, "another literal");
  ExpectRefused(Family("Load weight end", true), *blob, "the literal caseless");
  // The built-in blob is for other literals altogether.
  ExpectRefused(family, prefilter::EmbeddedBlob(), "the built-in blob");
}

TEST(PrefilterBlob, DamagedBlobsAreRefused) {
  const std::string family = Family("Load weight end", false);
  auto made = LoadWith(family, {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto blob = made->SerializePrefilter();
  ASSERT_TRUE(blob.ok()) << blob.status().ToString();
  const std::string& good = *blob;
  size_t fp_at = good.find("Load weight end");  // inside the fingerprint
  ASSERT_NE(fp_at, std::string::npos);
  size_t db_at = fp_at + 100;  // past it: the serialized database
  ASSERT_LT(db_at + 64, good.size());

  auto flipped = [&](size_t at) {
    std::string b = good;
    b[at] = static_cast<char>(b[at] ^ 0x5a);
    return b;
  };
  ExpectRefused(family, flipped(0), "wrong magic");
  ExpectRefused(family, flipped(9), "the checksum");
  ExpectRefused(family, flipped(17), "fingerprint length");
  ExpectRefused(family, flipped(fp_at), "a fingerprint byte");
  ExpectRefused(family, flipped(db_at), "a header byte of the database");
  ExpectRefused(family, flipped(good.size() / 2 + 40), "a byte in the database");
  ExpectRefused(family, flipped(good.size() - 1), "the last byte");
  ExpectRefused(family, good.substr(0, good.size() - 7), "truncated");
  ExpectRefused(family, good.substr(0, 11), "cut in the header");
  ExpectRefused(family, "not a blob at all", "garbage");
}

TEST(PrefilterBlob, FingerprintCoversHyperscanAndEachLiteral) {
  std::string fp = prefilter::Fingerprint({"ab", "c"}, {0, HS_FLAG_CASELESS});
  EXPECT_NE(fp.find(hs_version()), std::string::npos);
  EXPECT_NE(fp, prefilter::Fingerprint({"ab", "c"}, {0, 0}));
  EXPECT_NE(fp, prefilter::Fingerprint({"a", "bc"}, {0, HS_FLAG_CASELESS}));
  EXPECT_NE(fp, prefilter::Fingerprint({"c", "ab"}, {HS_FLAG_CASELESS, 0}));  // ids follow the order
  EXPECT_EQ(fp, prefilter::Fingerprint({"ab", "c"}, {0, HS_FLAG_CASELESS}));
}

}  // namespace
}  // namespace tpt
