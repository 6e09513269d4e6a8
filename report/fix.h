// fix.h: the fix every renderer leads with, written once. DescribeFix picks
// the line to copy (FixOf), the value in use, the floor and what the value
// gives: the KV pool, its tokens and how many requests of the configured
// context length it holds, computed by the memory model (memory/) from
// the run's own figures. Text, markdown and HTML print FixSentence (each with
// its escaper); JSON carries FixJson as the run's "fix" object.
//
//   FixView v = DescribeFix(analysis, *PrimaryDiagnosis(analysis));
//   out << "Fix: " << FixSentence(v, Plain, Plain);
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "rules/analysis.h"

namespace tpt::report {

// What a value of the fixed flag gives; a figure the run does not let us
// compute is NaN (null in JSON, left out of the sentence).
struct FixEffect {
  double kv_pool_bytes = kUnknownBytes;   // per rank
  double kv_tokens = kUnknownBytes;       // tokens the pool holds
  double context_length = kUnknownBytes;  // the configured (or fixed) context length
  double requests = kUnknownBytes;        // whole requests of context_length the pool holds
  bool Known() const { return KnownBytes(kv_pool_bytes) || KnownBytes(kv_tokens); }
};

struct FixView {
  enum Kind { kLine, kAdvice, kRefuted, kNone } kind = kNone;
  std::string line;   // what to copy ("--mem-fraction-static 0.77", "export X=1"); kAdvice: what to change
  std::string flag, value;
  std::string now;    // the value in use, "" unknown
  std::string why;
  FixEffect effect;   // of `value`
  std::string floor;  // the smallest value that starts ("" unknown); == value when the fix is the floor
  std::string floor_why;
  FixEffect floor_effect;
  std::string label = "Fix";  // "Fix", "Next step" or "Action" (memory/remedy.h RemedyLabel)
};

FixView DescribeFix(const Analysis& a, const Diagnosis& d);


// "KV pool 2.10 GiB a rank, 25,600 tokens = 3 requests of 8,192 tokens"; ""
// when nothing is known.
std::string FixEffectText(const FixEffect& e);

// The fix as one sentence: `code` renders what to copy and values, `prose`
// the explanations (each format passes its escaper).
using Render = std::function<std::string(const std::string&)>;
std::string FixSentence(const FixView& v, const Render& code, const Render& prose);

// {"kind","line","flag","value","now","why","effect":{...},"floor":{"value","why","effect"}}.
nlohmann::json FixJson(const FixView& v);

// The SGLang pool at fraction `f` on a rank with these figures, by
// memory/memory_model.h SglangKvPool; false when the inputs are missing or invalid.
struct SglangAt {
  double reserved_bytes = 0, rest_bytes = 0;
};
bool SglangPoolAt(const Analysis& a, double free_at_init_bytes, double avail_after_weights_bytes, double f,
                  SglangAt* out);

}  // namespace tpt::report
