// format_set.cc: FormatSet (format_set.h), the aggregate: loading files
// (each parsed by format_load.cc, checked by format_check.cc), the prefix
// matcher, the decoders and the literal prefilter.
#include "parser/format_set.h"
#include "base/read_file.h"

#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/embedded.h"
#include "parser/format_load.h"
#include "parser/format_set_internal.h"
#include "parser/line_strip.h"
#include "parser/match/prefilter_blob.h"
#include "parser/pattern_match.h"

namespace tpt::generated {
extern const EmbeddedFile kFormatFiles[];  // parser/formats/*.json (tpt_embed, parser/CMakeLists.txt)
extern const size_t kFormatFilesCount;
}  // namespace tpt::generated

namespace tpt {

// A format file is a few KiB; the cap only stops a device or a runaway file.
constexpr size_t kMaxFormatFileBytes = 16u << 20;

const std::vector<FormatSource>& FormatSet::BuiltinSources() {
  static const std::vector<FormatSource> sources = [] {
    std::vector<FormatSource> out;
    for (size_t i = 0; i < generated::kFormatFilesCount; ++i)
      out.push_back({generated::kFormatFiles[i].name, generated::kFormatFiles[i].text});
    return out;
  }();
  return sources;
}

using nlohmann::json;

// ---- FormatSet ---------------------------------------------------------------

void FormatSet::HsDeleter::operator()(hs_database* db) const { hs_free_database(db); }

FormatSet::FormatSet() = default;
FormatSet::FormatSet(FormatSet&&) noexcept = default;
FormatSet& FormatSet::operator=(FormatSet&&) noexcept = default;
FormatSet::~FormatSet() = default;

std::vector<std::string> FormatSet::families() const { return families_; }

// The samples of the compiled-in files are run by formats_test in every build
// (LoadBuiltinChecked), so a start need not repeat them (bench/RESULTS.md).
// Its literal database was compiled by the build (prefilter_blob.h).
StatusOr<FormatSet> FormatSet::LoadBuiltin(bool strict) {
  return Loader::Load(BuiltinSources(), strict, /*check_samples=*/false, /*defer_regexes=*/true,
                      prefilter::EmbeddedBlob());
}

StatusOr<FormatSet> FormatSet::LoadBuiltinChecked(bool strict) { return Load(BuiltinSources(), strict); }

StatusOr<FormatSet> FormatSet::LoadDir(const std::string& dir, bool strict, bool with_builtin) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return NotFoundError("--formats " + dir + ": not a directory; give the folder holding the *.json format files");
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().string());
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) return NotFoundError("--formats " + dir + ": no *.json format files in it");
  // A *.json entry that cannot be read (a directory, a symlink loop, no
  // permission) is left out with a problem, like a file that does not parse.
  std::vector<FormatSource> files;
  std::vector<std::string> unreadable;
  for (const auto& n : names) {
    auto text = ReadSmallFile(n, kMaxFormatFileBytes, "a format file");
    if (!text.ok()) {
      unreadable.push_back(text.status().message());
      continue;
    }
    files.push_back({n, std::move(*text)});
  }
  if (strict && !unreadable.empty()) return InvalidArgumentError(unreadable.front());
  if (files.empty()) {
    return NotFoundError("--formats " + dir + ": no readable *.json format file in it (" + unreadable.front() + ")");
  }
  if (with_builtin) {
    std::set<std::string> mine;
    for (const auto& f : files) mine.insert(std::filesystem::path(f.name).filename().string());
    std::vector<FormatSource> all;
    for (const auto& b : BuiltinSources()) {
      if (!mine.count(std::filesystem::path(b.name).filename().string())) all.push_back(b);
    }
    all.insert(all.end(), files.begin(), files.end());
    files = std::move(all);
  }
  auto set = Load(files, strict);
  if (set.ok()) set->problems_.insert(set->problems_.begin(), unreadable.begin(), unreadable.end());
  return set;
}

StatusOr<FormatSet> FormatSet::Load(const std::vector<FormatSource>& files, bool strict, bool check_samples,
                                     std::string_view prefilter_blob) {
  return Loader::Load(files, strict, check_samples, /*defer_regexes=*/false, prefilter_blob);
}

namespace {

// A format file is read with nlohmann's value() and get(), which throw type_error when a key
// holds another type than the spec's ("schema": "x", a string where a number goes): that is the
// file's error, named with the file, never a crash (formats fuzzer, 2026-12-06).
template <typename F>
Status WrongTypesAreTheFiles(const std::string& file, F&& read) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(file + ": a value of the wrong type (" + e.what() +
                                "); see tptriage help format-files");
  }
}

}  // namespace

StatusOr<FormatSet> FormatSet::Loader::Load(const std::vector<FormatSource>& files, bool strict, bool check_samples,
                                            bool defer_regexes, std::string_view prefilter_blob) {
  // Pass 1: compile each file. Pass 2: check samples against the whole set
  // (a pattern's sample may carry another family's prefix). A file failing
  // either is dropped and the set rebuilt without it.
  std::vector<bool> good(files.size(), true);
  std::vector<std::string> problems;
  for (size_t attempt = 0; attempt <= files.size(); ++attempt) {
    FormatSet set;
    Loader load{set};
    set.defer_pattern_regexes_ = defer_regexes;
    std::vector<json> docs(files.size());
    std::vector<std::array<size_t, 4>> starts(files.size());
    bool dropped = false;
    for (size_t i = 0; i < files.size(); ++i) {
      if (!good[i]) continue;
      starts[i] = {set.patterns_.size(), set.blocks_.size(), set.wrappers_.size() + set.suffixes_.size(),
                   set.prefixes_.size()};
      Status s = WrongTypesAreTheFiles(files[i].name, [&] { return load.AddFile(files[i], &docs[i]); });
      if (!s.ok()) {
        problems.push_back(s.message());
        good[i] = false;
        dropped = true;
      }
    }
    if (dropped) continue;  // rebuild without the bad files
    // Samples are stripped as the engine strips lines: with the prefix sets.
    TPT_RETURN_IF_ERROR(load.BuildPrefixSets());
    load.BuildDecoders();
    if (check_samples) {
      TPT_RETURN_IF_ERROR(WrongTypesAreTheFiles("the format files' samples", [&] { return load.CheckPrefixAutomaton(docs); }));
    }
    for (size_t i = 0; i < files.size() && !dropped && check_samples; ++i) {
      if (!good[i]) continue;
      Status s = WrongTypesAreTheFiles(files[i].name, [&] {
        return load.CheckSamples(files[i], docs[i], starts[i][0], starts[i][1], starts[i][2], starts[i][3]);
      });
      if (!s.ok()) {
        problems.push_back(s.message());
        good[i] = false;
        dropped = true;  // its prefixes may have helped other samples: rebuild
      }
    }
    if (dropped) continue;
    if (strict && !problems.empty()) return InvalidArgumentError(problems.front());
    if (set.patterns_.empty() && set.blocks_.empty()) {
      return InvalidArgumentError(problems.empty() ? "no format files were given"
                                                   : "no usable format file; first problem: " + problems.front());
    }
    TPT_RETURN_IF_ERROR(load.BuildPrefilter(prefilter_blob));
    problems.insert(problems.end(), set.problems_.begin(), set.problems_.end());
    set.problems_ = std::move(problems);
    return set;
  }
  return InvalidArgumentError(problems.empty() ? "format files failed their checks" : problems.front());
}

Status FormatSet::Loader::CheckPrefixAutomaton(const std::vector<json>& docs) {
  if (!set_.prefix_matcher_.by_automaton()) return OkStatus();
  std::vector<std::string> lines;
  for (const json& doc : docs) {
    for (const char* section : {"patterns", "wrappers", "prefixes"}) {
      if (!doc.is_object() || !doc.contains(section)) continue;
      for (const json& item : doc[section]) {
        for (const json& sample : item.value("samples", json::array())) lines.push_back(sample.value("line", ""));
        for (const json& nm : item.value("near_misses", json::array())) {
          lines.push_back(nm.is_string() ? nm.get<std::string>() : nm.value("line", ""));
        }
      }
    }
  }
  std::string line;
  TPT_RETURN_IF_ERROR(set_.prefix_matcher_.CheckAgainstSet(lines, &line));
  if (!line.empty()) {
    set_.problems_.push_back("the prefix automaton and RE2 disagree on which wrappers and prefixes match in '" + line +
                        "': RE2::Set answers instead (a bug of parser/match/prefix_dfa)");
  }
  return OkStatus();
}

Status FormatSet::Loader::BuildPrefixSets() {
  // Wrappers first, then producer prefixes: index i < set_.wrappers_.size() is set_.wrappers_[i].
  std::vector<PrefixMatcher::Member> members;
  for (const auto* list : {&set_.wrappers_, &set_.prefixes_}) {
    for (const auto& p : *list) members.push_back({p.family + "." + p.id, p.re->pattern()});
  }
  auto matcher = PrefixMatcher::Build(members);
  if (!matcher.ok()) return matcher.status();
  set_.prefix_matcher_ = *std::move(matcher);
  return OkStatus();
}

void FormatSet::Loader::BuildDecoders() {
  for (PatternSpec& p : set_.patterns_) p.decoder = NewFieldDecoder(p);
  for (auto* list : {&set_.wrappers_, &set_.suffixes_, &set_.prefixes_}) {
    for (PrefixSpec& p : *list) p.decoder = NewPrefixDecoder(p);
  }
}

std::vector<const FastLayout*> FormatSet::FastLayouts() const {
  std::vector<const FastLayout*> out;
  for (const auto& p : patterns_) {
    for (const auto& f : p.fast) out.push_back(f.get());
  }
  for (const auto* list : {&wrappers_, &prefixes_, &suffixes_}) {
    for (const auto& p : *list) {
      for (const auto& f : p.fast) out.push_back(f.get());
    }
  }
  return out;
}


namespace {

// The prefilter's literals in id order, their Hyperscan flags and what each id
// stands for; the last one finds ANSI colour codes, which can split a literal
// (such lines are rescanned cleaned).
void PrefilterLiterals(const std::vector<PatternSpec>& patterns, const std::vector<BlockSpec>& blocks,
                       const std::vector<PrefixSpec>& suffixes, std::vector<std::string>* lits, std::vector<unsigned>* flags,
                       std::vector<LiteralTarget>* targets) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    for (const auto& l : patterns[i].literals) {
      lits->push_back(l);
      flags->push_back(patterns[i].caseless ? HS_FLAG_CASELESS : 0);
      targets->push_back({LiteralTarget::kPattern, static_cast<int>(i)});
    }
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (const auto& l : blocks[i].literals) {
      lits->push_back(l);
      flags->push_back(0);
      targets->push_back({LiteralTarget::kBlockStart, static_cast<int>(i)});
    }
  }
  for (size_t i = 0; i < suffixes.size(); ++i) {
    for (const auto& l : suffixes[i].literals) {
      lits->push_back(l);
      flags->push_back(0);
      targets->push_back({LiteralTarget::kSuffix, static_cast<int>(i)});
    }
  }
  lits->push_back("\x1b[");
  flags->push_back(0);
  targets->push_back({LiteralTarget::kRescan, 0});
}

}  // namespace

Status FormatSet::Loader::BuildPrefilter(std::string_view blob) {
  std::vector<std::string> lits;
  std::vector<unsigned> flags;
  set_.targets_.clear();
  PrefilterLiterals(set_.patterns_, set_.blocks_, set_.suffixes_, &lits, &flags, &set_.targets_);
  set_.prefilter_from_blob_ = false;
  if (!blob.empty()) {
    if (hs_database* db = prefilter::Deserialize(blob, prefilter::Fingerprint(lits, flags))) {
      set_.db_.reset(db);
      set_.prefilter_from_blob_ = true;
      return OkStatus();
    }
  }
  auto db = prefilter::Compile(lits, flags);
  if (!db.ok()) return db.status();
  set_.db_.reset(*db);
  return OkStatus();
}

StatusOr<std::string> FormatSet::SerializePrefilter() const {
  std::vector<std::string> lits;
  std::vector<unsigned> flags;
  std::vector<LiteralTarget> targets;
  PrefilterLiterals(patterns_, blocks_, suffixes_, &lits, &flags, &targets);
  return prefilter::Serialize(db_.get(), prefilter::Fingerprint(lits, flags));
}

}  // namespace tpt
