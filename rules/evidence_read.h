// evidence_read.h: which of an evidence line's values a diagnosis read.
//
// A long argument dump (SGLang `server_args=ServerArgs(...)`, vLLM's engine
// config) is shown in text, markdown and HTML as its start plus the pairs the
// diagnosis used (report/evidence.h); this finds those pairs' keys, from the
// rule itself, for every rule alike: the run-config names its expressions
// read (`config.mem_fraction_static`, `tp` -> tp_size), the anchor fields
// they read, its model inputs and its figures, matched against the line's
// parsed fields (the `args` keys as printed, aliases resolved through the
// parser's own table: tensor_parallel_size is tp_size).
//
//   NoteFieldsRead(rule, events, &diagnosis);  // fills Evidence::read
#pragma once

#include <set>
#include <string>
#include <vector>

#include "parser/event.h"
#include "rules/analysis.h"
#include "rules/rule.h"

namespace tpt {

// Evidence text kept whole up to this (the parser keeps 16 KiB of a line:
// parser/stream_parser.h kMaxTextBytes); a longer text (an event built by
// hand) is cut on a character boundary with "...".
inline constexpr size_t kMaxEvidenceBytes = 16 * 1024;
std::string EvidenceText(const std::string& text);

// An event as a quoted evidence line: its file, line, rank and text (EvidenceText).
Evidence ToEvidence(const Event& e);

// Names the rule reads: config keys, anchor fields, model inputs, figures.
std::set<std::string> NamesRead(const Rule& rule, const nlohmann::json& figures);

// The keys of `e`'s printed arguments (`args`, as written on the line) or,
// without them, of its fields, that are among `names`.
std::vector<std::string> FieldsRead(const Event& e, const std::set<std::string>& names);

// Fills `read` of each evidence line of `d` longer than `min_bytes` (shorter
// lines are shown whole and need none).
void NoteFieldsRead(const Rule& rule, const std::vector<Event>& events, Diagnosis* d, size_t min_bytes = 600);

}  // namespace tpt
