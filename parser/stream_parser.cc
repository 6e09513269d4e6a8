// stream_parser.cc: see stream_parser.h.
#include "parser/stream_parser.h"

#include "parser/stack_dump.h"

#include "parser/json_reuse.h"

#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstring>

namespace tpt {
namespace {

// `s` is valid UTF-8 already (ProcessSegment repairs it before matching).
// Assigned into `out`, whose buffer a recycled Event keeps.
void CapText(std::string_view s, std::string* out) {
  if (s.size() <= StreamParser::kMaxTextBytes) {
    // resize + memcpy: a recycled string mostly has the room, and `s` never
    // lies in it; assign() would check for overlap and call _M_replace.
    out->resize(s.size());
    if (!s.empty()) std::memcpy(out->data(), s.data(), s.size());
    return;
  }
  size_t cut = StreamParser::kMaxTextBytes;
  // Do not cut inside a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  out->assign(s.substr(0, cut));
}

}  // namespace

namespace {

// The members SwapEvents and CopyEventReusing know of, by size: catches (most)
// members added to event.h and not to them.
constexpr bool kEventMembersKnown = sizeof(Event) == 7 * sizeof(std::string) + 2 * sizeof(nlohmann::json) +
                                    sizeof(std::vector<std::string>) + sizeof(std::optional<double>) + 64 +
                                    2 * sizeof(Event::Deferred);

// Member by member: cheaper than std::swap's three moves of a whole Event
// (bench/RESULTS.md). The size check catches (most) members added to event.h
// and not here; stream_parser_test checks every member a dump shows.
void SwapEvents(Event& a, Event& b) {
  static_assert(kEventMembersKnown, "Event gained or lost a member: swap it in SwapEvents too");
  using std::swap;
  a.kind.swap(b.kind);
  a.family.swap(b.family);
  a.pattern_id.swap(b.pattern_id);
  swap(a.consequence, b.consequence);
  swap(a.source, b.source);
  a.file.swap(b.file);
  swap(a.line, b.line);
  swap(a.offset, b.offset);
  swap(a.rank, b.rank);
  swap(a.local_rank, b.local_rank);
  a.host.swap(b.host);
  swap(a.pid, b.pid);
  swap(a.dp_rank, b.dp_rank);
  swap(a.pp_rank, b.pp_rank);
  swap(a.tp_rank, b.tp_rank);
  swap(a.ep_rank, b.ep_rank);
  a.process.swap(b.process);
  swap(a.ts, b.ts);
  swap(a.ts_is_time_of_day, b.ts_is_time_of_day);
  a.fields_.swap(b.fields_);
  a.wrapper_.swap(b.wrapper_);
  for (auto [x, y] : {std::pair{&a.deferred_fields_, &b.deferred_fields_}, {&a.deferred_prefix_, &b.deferred_prefix_}}) {
    swap(x->pending, y->pending);
    x->decoder.swap(y->decoder);
    x->spans.swap(y->spans);
  }
  a.text.swap(b.text);
  a.extra_lines.swap(b.extra_lines);
}

}  // namespace

void CopyEventReusing(const Event& from, Event* to, bool own_decoders) {
  static_assert(kEventMembersKnown, "Event gained or lost a member: copy it in CopyEventReusing too");
  if (&from == to) return;
  to->kind = from.kind;
  to->family = from.family;
  to->pattern_id = from.pattern_id;
  to->consequence = from.consequence;
  to->source = from.source;
  to->file = from.file;
  to->line = from.line;
  to->offset = from.offset;
  to->rank = from.rank;
  to->local_rank = from.local_rank;
  to->host = from.host;
  to->pid = from.pid;
  to->dp_rank = from.dp_rank;
  to->pp_rank = from.pp_rank;
  to->tp_rank = from.tp_rank;
  to->ep_rank = from.ep_rank;
  to->process = from.process;
  to->ts = from.ts;
  to->ts_is_time_of_day = from.ts_is_time_of_day;
  to->text = from.text;
  to->extra_lines = from.extra_lines;
  auto copy = [own_decoders](const Event::Deferred& f, Event::Deferred* t) {
    t->pending = f.pending;
    if (!f.pending) return;
    if (t->decoder.get() != f.decoder.get()) {
      if (own_decoders) {
        t->decoder = f.decoder;
      } else {
        t->decoder = std::shared_ptr<const DeferredDecoder>(std::shared_ptr<const DeferredDecoder>(), f.decoder.get());
      }
    }
    t->spans = f.spans;
  };
  copy(from.deferred_fields_, &to->deferred_fields_);
  copy(from.deferred_prefix_, &to->deferred_prefix_);
  if (!from.deferred_fields_.pending) AssignReusing(&to->fields_, from.fields_);
  AssignReusing(&to->wrapper_, from.wrapper_);  // a pending prefix refills its key
}

Event& EventBatch::Add() {
  if (size_ == events_.size()) {
    events_.emplace_back();
    owners_.push_back(-1);
  }
  return events_[size_++];
}

StreamParser::StreamParser(const FormatSet& formats, const ParseOptions& options, int source, std::string file)
    : formats_(formats), options_(options), source_(source), file_(std::move(file)) {
  if (formats_.literal_db()) hs_alloc_scratch(const_cast<hs_database_t*>(formats_.literal_db()), &scratch_);
  meta_.defer_limit = kDeferLimit;
  pattern_wanted_.assign(formats_.patterns().size(), true);
  field_pool_.resize(formats_.patterns().size());
  if (!options_.kinds.empty()) {
    auto wanted = [&](const std::string& kind) {
      return std::find(options_.kinds.begin(), options_.kinds.end(), kind) != options_.kinds.end();
    };
    for (size_t i = 0; i < pattern_wanted_.size(); ++i) pattern_wanted_[i] = wanted(formats_.patterns()[i].kind);
    blocks_wanted_ = false;
    for (const auto& b : formats_.blocks()) blocks_wanted_ |= wanted(b.kind);
  }
}

StreamParser::~StreamParser() {
  if (scratch_) hs_free_scratch(scratch_);
}

int StreamParser::OnHit(unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
  static_cast<StreamParser*>(ctx)->hits_.push_back({to, id});
  return 0;
}

std::vector<unsigned> StreamParser::Scan(std::string_view text) {
  ScanHits(text);
  std::vector<unsigned> ids;
  for (const Hit& h : hits_) ids.push_back(h.id);
  hits_.clear();
  return ids;
}

void StreamParser::ParseBlock(const Block& block, std::vector<Event>* out) {
  vector_batch_.Clear();
  ParseBlock(block, &vector_batch_);
  for (size_t i = 0; i < vector_batch_.size(); ++i) out->push_back(std::move(vector_batch_[i]));
}

void StreamParser::Finish(std::vector<Event>* out) {
  vector_batch_.Clear();
  Finish(&vector_batch_);
  for (size_t i = 0; i < vector_batch_.size(); ++i) out->push_back(std::move(vector_batch_[i]));
}

void StreamParser::ScanHits(std::string_view text) {
  hits_.clear();
  if (!scratch_ || text.empty()) return;
  // Blocks are at most the read buffer; hs_scan takes an unsigned length.
  size_t done = 0;
  while (done < text.size()) {
    size_t n = std::min<size_t>(text.size() - done, 1u << 30);
    if (done > 0) {  // keep whole lines per scan call
      const char* nl = static_cast<const char*>(memrchr(text.data() + done, '\n', n));
      if (nl && done + n < text.size()) n = static_cast<size_t>(nl - (text.data() + done)) + 1;
    }
    size_t before = hits_.size();
    hs_scan(formats_.literal_db(), text.data() + done, static_cast<unsigned>(n), 0, scratch_, &StreamParser::OnHit,
            this);
    for (size_t k = before; k < hits_.size(); ++k) hits_[k].to += done;
    done += n;
  }
  if (!std::is_sorted(hits_.begin(), hits_.end(), [](const Hit& a, const Hit& b) { return a.to < b.to; })) {
    std::stable_sort(hits_.begin(), hits_.end(), [](const Hit& a, const Hit& b) { return a.to < b.to; });
  }
}

void StreamParser::ParseBlock(const Block& block, EventBatch* out) {
  std::string_view text = block.text;
  if (block.truncated) {
    // A line longer than the read buffer, already cut to max_line_bytes.
    std::vector<unsigned> ids = Scan(text);
    ProcessLine(text, std::string_view(last_line_), block.offset, true, &ids, out);
    ++line_no_;
    KeepLastLine(text);
    return;
  }
  ScanHits(text);
  bits_.Build(text);
  std::vector<Hit> hits;
  hits.swap(hits_);
  ParseScanned(block, 0, text.size(), hits.data(), hits.size(), out);
  hits.clear();
  hits_.swap(hits);
}

void StreamParser::ScanBlock(const Block& block) {
  block_hits_.clear();
  block_hit_next_ = 0;
  if (block.truncated) return;
  ScanHits(block.text);
  bits_.Build(block.text);
  block_hits_.swap(hits_);
}

size_t StreamParser::PieceEnd(const Block& block, size_t from, size_t want) const {
  const size_t size = block.text.size();
  if (block.truncated || size - from <= want) return size;
  size_t nl = bits_.PrevNewline(from, from + want);
  if (nl == std::string_view::npos) nl = bits_.NextNewline(from + want);
  return nl < size ? nl + 1 : size;
}

void StreamParser::ParsePieceOf(const Block& block, size_t from, size_t to, EventBatch* out) {
  if (block.truncated) {
    ParseBlock(block, out);
    return;
  }
  // Literals hold no '\n': a hit ending by `to` lies in this piece.
  size_t first = block_hit_next_, last = first;
  while (last < block_hits_.size() && block_hits_[last].to <= to) ++last;
  block_hit_next_ = last;
  ParseScanned(block, from, to, block_hits_.data() + first, last - first, out);
}

void StreamParser::ParseScanned(const Block& block, size_t from, size_t to, const Hit* hits, size_t n_hits,
                                EventBatch* out) {
  std::string_view text = block.text.substr(0, to);
  size_t pos = from, hi = 0;
  thread_local std::vector<unsigned> ids;
  while (pos < text.size()) {
    size_t end = std::min(bits_.NextNewline(pos), text.size());
    if (open_.empty()) {
      if (hi == n_hits) {
        line_no_ += bits_.CountNewlines(pos, text.size());
        if (text.back() != '\n') ++line_no_;
        break;
      }
      // Most lines of a dense log hold a hit; else go to the line of the next
      // one (the search back stops at text[end] at the latest).
      size_t hit_byte = static_cast<size_t>(hits[hi].to) - 1;
      if (hit_byte > end) {
        size_t start = bits_.PrevNewline(end, hit_byte) + 1;
        line_no_ += bits_.CountNewlines(pos, start);
        pos = start;
        end = std::min(bits_.NextNewline(pos), text.size());
      }
    }
    ids.clear();
    while (hi < n_hits && hits[hi].to - 1 < end) ids.push_back(hits[hi++].id);
    // Found only when a `repeat` wrapper asks for it.
    struct Place {
      const StreamParser* parser;
      std::string_view text;
      size_t pos;
    } place{this, text, pos};
    auto find = [](const void* p) {
      const Place* at = static_cast<const Place*>(p);
      return at->parser->PreviousLine(at->text, at->pos);
    };
    bits_line_ = pos;
    ProcessLine(text.substr(pos, end - pos), FormatSet::PreviousLine(find, &place), block.offset + pos, false, &ids,
                out);
    bits_line_ = std::string_view::npos;
    ++line_no_;
    pos = end + 1;
  }
  if (to == block.text.size()) KeepLastLine(text);
}

std::string_view StreamParser::PreviousLine(std::string_view text, size_t pos) const {
  if (pos == 0) return last_line_;
  size_t end = pos - 1;  // the '\n' that ends it
  const char* nl = end > 0 ? static_cast<const char*>(memrchr(text.data(), '\n', end)) : nullptr;
  size_t start = nl ? static_cast<size_t>(nl - text.data()) + 1 : 0;
  return text.substr(start, std::min<size_t>(end - start, kKeptPreviousBytes));
}

void StreamParser::KeepLastLine(std::string_view text) {
  if (text.empty()) return;
  size_t end = text.back() == '\n' ? text.size() - 1 : text.size();
  const char* nl = end > 0 ? static_cast<const char*>(memrchr(text.data(), '\n', end)) : nullptr;
  size_t start = nl ? static_cast<size_t>(nl - text.data()) + 1 : 0;
  last_line_.assign(text.substr(start, std::min<size_t>(end - start, kKeptPreviousBytes)));
}

void StreamParser::ProcessLine(std::string_view line, const FormatSet::PreviousLine& previous, uint64_t offset, bool truncated,
                               std::vector<unsigned>* ids, EventBatch* out) {
  bool rescan = false;
  if (truncated || line.size() > options_.max_line_bytes) {
    ++long_lines_;
    if (line.size() > options_.max_line_bytes) {
      // Cut here (the buffer held all of it): forget literals past the cut,
      // exactly as if the reader had cut it.
      line = line.substr(0, options_.max_line_bytes);
      rescan = !ids->empty();
    }
  }
  if (ids->empty() && open_.empty()) return;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF
  for (unsigned id : *ids) rescan |= formats_.targets()[id].type == LiteralTarget::kRescan;
  // Most lines have no '\r', ESC or non-ASCII byte: the block's LineBits say
  // so when the line comes from ParseScanned (`line` starts where it did
  // there), one pass over it otherwise.
  const bool plain = bits_line_ != std::string_view::npos ? bits_.Plain(bits_line_, bits_line_ + line.size())
                                                          : IsPlainLine(line);
  if (!plain && line.find('\r') != std::string_view::npos) {
    // A progress bar overwritten in place: every \r segment may be a log line.
    size_t start = 0;
    while (start <= line.size()) {
      size_t cr = line.find('\r', start);
      if (cr == std::string_view::npos) cr = line.size();
      std::string_view seg = line.substr(start, cr - start);
      if (!seg.empty()) {
        std::vector<unsigned> seg_ids;  // found by the rescan
        ProcessSegment(seg, previous, offset + start, true, &seg_ids, out);
      }
      start = cr + 1;
    }
    return;
  }
  ProcessSegment(line, previous, offset, rescan, ids, out, plain);
}

void StreamParser::ProcessSegment(std::string_view seg, const FormatSet::PreviousLine& previous, uint64_t offset, bool rescan,
                                  std::vector<unsigned>* hit_ids, EventBatch* out, bool plain) {
  std::vector<unsigned>& ids = *hit_ids;
  if (!plain && std::memchr(seg.data(), '\x1b', seg.size()) != nullptr) {
    scratch_text_.assign(seg);
    StripAnsi(&scratch_text_);
    seg = scratch_text_;
    rescan = true;
  }
  if (rescan) ids = Scan(seg);
  if (ids.empty() && open_.empty()) return;
  bool repaired = false;
  if (!plain && !IsValidUtf8(seg)) {
    repaired = true;
    // RE2 works on UTF-8: '.' does not cross an invalid byte. Match the
    // repaired text (U+FFFD for each bad byte) instead.
    if (seg.data() == scratch_text_.data()) {
      scratch_text_ = SanitizeUtf8(scratch_text_);
    } else {
      scratch_text_ = SanitizeUtf8(seg);
    }
    seg = scratch_text_;
  }

  LineMeta& meta = meta_;
  meta.Reset();
  // Whether a suffix's literal is in seg: the hits say (a repaired line's
  // U+FFFD bytes were not scanned: try them all).
  bool suffix_literals = repaired, has_start = false;
  for (unsigned id : ids) {
    LiteralTarget::Type type = formats_.targets()[id].type;
    suffix_literals |= type == LiteralTarget::kSuffix;
    has_start |= type == LiteralTarget::kBlockStart;
  }
  FormatSet::Stripped st = formats_.StripLine(seg, &meta, previous, suffix_literals);
  std::string_view msg = seg.substr(st.begin, st.end - st.begin);
  std::string_view text = seg.substr(st.wrapped_end);

  if (blocks_wanted_ && (has_start || !open_.empty())) HandleBlocks(meta, msg, text, offset, has_start, out);

  if (ids.size() > 1) std::sort(ids.begin(), ids.end());
  int last_pattern = -1;
  size_t first_new = out->size();
  for (unsigned id : ids) {
    const LiteralTarget& t = formats_.targets()[id];
    if (t.type != LiteralTarget::kPattern || t.index == last_pattern) continue;
    last_pattern = t.index;
    if (!pattern_wanted_[t.index]) continue;
    // A recycled slot: every member is set below (MatchPattern sets kind,
    // family, pattern_id, consequence and fields; ApplyTo the producer).
    Event& e = out->Add();
    int& owner = out->owner(out->size() - 1);
    if (owner != t.index) {
      if (owner >= 0) field_pool_[owner].push_back(std::move(e.fields_));
      auto& pool = field_pool_[t.index];
      if (!pool.empty()) {
        e.fields_ = std::move(pool.back());
        pool.pop_back();
      }
      owner = t.index;
    }
    std::string err;
    // Fields are decoded when read (Event::Deferred): places in e.text.
    if (!formats_.MatchPattern(formats_.patterns()[t.index], msg, &e, &err, text.data(), kDeferLimit)) {
      out->DropLast();
      continue;
    }
    e.source = source_;
    if (!SameText(e.file, file_)) e.file = file_;
    e.line = line_no_ + 1;
    e.offset = offset;
    CapText(text, &e.text);
    e.extra_lines.clear();
  }
  // The line's producer metadata: copied into each event's (kept) wrapper
  // object in place, swapped into the last (most lines give one event); meta_
  // keeps that event's old wrapper, likely of the same prefix, to refill.
  for (size_t i = first_new; i < out->size(); ++i) {
    if (i + 1 < out->size()) {
      meta.ApplyTo(&(*out)[i]);
    } else {
      meta.SwapInto(&(*out)[i]);
    }
  }
}

void StreamParser::HandleBlocks(const LineMeta& meta, std::string_view msg, std::string_view text, uint64_t offset,
                                bool has_start, EventBatch* out) {
  if (runaway_ && !msg.empty() && msg[0] != ' ' && msg[0] != '\t' && msg.substr(0, 6) != "File \"") runaway_ = false;
  std::string key = meta.Key();
  if (has_start) {
    for (size_t b = 0; b < formats_.blocks().size(); ++b) {
      const BlockSpec& spec = formats_.blocks()[b];
      if (!RE2::PartialMatch(re2::StringPiece(msg.data(), msg.size()), *spec.start)) continue;
      if (spec.headerless && (OpenRecordFor(key) >= 0 || runaway_)) continue;  // a frame of the open (or runaway) record
      // A new record of the same producer replaces an unfinished one, which is cut.
      for (size_t i = 0; i < open_.size();) {
        if (open_[i].key == key) {
          if (!formats_.blocks()[open_[i].spec].headerless) EmitCut(std::move(open_[i]), out);
          open_.erase(open_.begin() + i);
        } else {
          ++i;
        }
      }
      if (open_.size() >= 64) open_.erase(open_.begin());
      OpenBlock ob;
      ob.spec = static_cast<int>(b);
      ob.key = key;
      meta.ApplyTo(&ob.event);
      ob.start_line = line_no_ + 1;
      ob.after_frame = spec.headerless;
      if (spec.headerless) {
        // The start line is the record's first frame: kept with the others
        // (the end line's text replaces the start's).
        ob.event.extra_lines.push_back(SanitizeUtf8(msg));
        ob.bytes += msg.size();
      }
      ob.event.line = ob.start_line;
      ob.event.offset = offset;
      CapText(text, &ob.event.text);
      ob.event.Decoded();  // the prefix's places are in this text, which the end line's replaces
      open_.push_back(std::move(ob));
      return;
    }
  }
  if (open_.empty()) return;
  int idx = OpenRecordFor(key);
  if (idx < 0) return;
  OpenBlock& ob = open_[idx];
  const BlockSpec& spec = formats_.blocks()[ob.spec];
  ++ob.lines_seen;
  bool cont = RE2::PartialMatch(re2::StringPiece(msg.data(), msg.size()), *spec.continuation);
  bool code_line = false;
  if (!cont && ob.after_frame) {
    // A frame's source line whose indentation a paste collapsed: not the
    // exception line, so still the record's.
    nlohmann::json unused;
    cont = code_line = !formats_.MatchBlockEnd(spec, msg, &unused);
  }
  if (cont) {
    if (ob.event.extra_lines.size() < kMaxExtraLines && ob.bytes + msg.size() <= kMaxExtraBytes) {
      ob.event.extra_lines.push_back(SanitizeUtf8(msg));
      ob.bytes += msg.size();
    }
    ob.after_frame = !code_line && msg.find("File \"") != std::string_view::npos;
  } else {
    nlohmann::json fields;
    if (formats_.MatchBlockEnd(spec, msg, &fields)) {
      Event e = std::move(ob.event);
      open_.erase(open_.begin() + idx);
      e.kind = spec.kind;
      e.family = spec.family;
      e.pattern_id = spec.id;
      e.fields() = std::move(fields);
      e.fields()["traceback_line"] = ob.start_line;
      e.source = source_;
      e.file = file_;
      e.line = line_no_ + 1;
      e.offset = offset;
      CapText(text, &e.text);
      Emit(std::move(e), out);
      return;
    }
    if (!spec.end && !key.empty() && ob.key == key) {
      // A block without an end: its producer moved on, so the record is whole.
      EmitCut(std::move(ob), out);
      open_.erase(open_.begin() + idx);
      return;
    }
    if (!key.empty() && ob.key == key) {
      // The same (prefixed) producer moved on before the exception line: cut.
      // Frames that opened a record without a header and lead to no exception
      // were quoted (torch.fx's 'Original traceback:', a stack logged as a
      // warning), not a traceback: dropped. Only the log's end cuts them.
      if (!spec.headerless) EmitCut(std::move(ob), out);
      open_.erase(open_.begin() + idx);
      return;
    }
    // Another producer's line interleaved with the record: skipped.
  }
  if (ob.lines_seen > formats_.blocks()[ob.spec].max_lines) {
    // Longer than any real traceback (a runaway dump): still an exception, cut here;
    // its further frames open no headerless record.
    if (!formats_.blocks()[ob.spec].headerless) EmitCut(std::move(ob), out);
    runaway_ = true;
    open_.erase(open_.begin() + idx);
  }
}

// The record a line of producer `key` continues: same producer, or (a line
// naming no producer) the most recently opened one; -1 when none.
int StreamParser::OpenRecordFor(const std::string& key) const {
  for (int i = static_cast<int>(open_.size()) - 1; i >= 0; --i) {
    if (open_[i].key == key) return i;
  }
  return key.empty() ? static_cast<int>(open_.size()) - 1 : -1;
}

void StreamParser::Emit(Event&& e, EventBatch* out) {
  out->Add() = std::move(e);
  out->owner(out->size() - 1) = -1;
}

// A traceback cut before its exception line (the log ended, or its producer
// moved on): still an exception, `type` empty and `cut` true, so rules see the
// frames (parser/EVENTS.md).
void StreamParser::EmitCut(OpenBlock&& ob, EventBatch* out) {
  const BlockSpec& spec = formats_.blocks()[ob.spec];
  if (!spec.end) {
    EmitWhole(std::move(ob), out);
    return;
  }
  Event e = std::move(ob.event);
  e.kind = spec.kind;
  e.family = spec.family;
  e.pattern_id = spec.id;
  nlohmann::json& fields = e.fields();
  fields = nlohmann::json::object();
  fields["type"] = "";
  fields["cut"] = true;
  fields["traceback_line"] = ob.start_line;
  for (auto it = spec.set.begin(); it != spec.set.end(); ++it) fields[it.key()] = it.value();
  e.source = source_;
  e.file = file_;
  Emit(std::move(e), out);
}

// A block without an end, closed where its producer moved on or the log
// ended: one event of its kind with its `set` fields, or, for a stack dump a
// server logged (kind stack_thread: SGLang's watchdog runs py-spy and logs its
// output), one stack_thread per thread of the dump (parser/stack_dump.h), each
// with the producer of the line that opened it.
void StreamParser::EmitWhole(OpenBlock&& ob, EventBatch* out) {
  const BlockSpec& spec = formats_.blocks()[ob.spec];
  Event e = std::move(ob.event);
  e.family = spec.family;
  e.pattern_id = spec.id;
  e.source = source_;
  e.file = file_;
  nlohmann::json set = spec.set;
  set["block_line"] = ob.start_line;
  if (spec.kind != "stack_thread") {
    e.kind = spec.kind;
    e.fields() = std::move(set);
    Emit(std::move(e), out);
    return;
  }
  std::string dump;
  for (const std::string& l : e.extra_lines) dump += l + "\n";
  for (Event& thread : StackDumpEvents(dump, file_, source_)) {
    Event t = e;  // the opening line's producer (its prefix: rank, TP rank, time, host)
    t.kind = thread.kind;
    t.line = ob.start_line + thread.line;
    t.offset = e.offset;
    t.text = std::move(thread.text);
    t.extra_lines = std::move(thread.extra_lines);
    t.fields() = std::move(thread.fields());
    for (auto it = set.begin(); it != set.end(); ++it) t.fields()[it.key()] = it.value();
    Emit(std::move(t), out);
  }
}

void StreamParser::Finish(EventBatch* out) {
  for (OpenBlock& ob : open_) EmitCut(std::move(ob), out);
  open_.clear();
}

// ---- StreamEvents --------------------------------------------------------------

StreamEvents::StreamEvents(std::unique_ptr<ByteSource> source, const FormatSet& formats, const ParseOptions& options,
                           size_t buffer_bytes, int index, std::string file)
    : source_(std::move(source)),
      reader_(source_.get(), buffer_bytes, options.max_line_bytes),
      parser_(formats, options, index, file) {
  reader_.set_observer(options.progress, std::move(file));
}

// A read block (1 MiB by default) holds thousands of events on a dense log;
// parsing it a few lines at a time keeps few events alive at once, so their
// recycled slots, and the nodes the wrapper filler keeps aside (16) for the
// prefix objects that decoding fills, are reused. Larger pieces save ~1% and
// cost much more once every event is decoded (a piece then holds more events
// than there are spare nodes): bench/RESULTS.md.
void StreamEvents::ParsePiece() {
  if (block_done_ == 0) parser_.ScanBlock(block_);
  size_t from = block_done_;
  block_done_ = parser_.PieceEnd(block_, from, kPieceBytes);
  parser_.ParsePieceOf(block_, from, block_done_, &pending_);
}

bool StreamEvents::Fill() {
  while (next_ >= pending_.size()) {
    if (done_) return false;
    pending_.Clear();
    next_ = 0;
    if (block_done_ < block_.text.size()) {
      ParsePiece();
      continue;
    }
    Block block;
    auto more = reader_.Next(&block);
    if (!more.ok()) {
      error_ = more.status().message();
      done_ = true;
      parser_.Finish(&pending_);
      continue;
    }
    if (!*more) {
      done_ = true;
      parser_.Finish(&pending_);
      continue;
    }
    block_ = block;
    block_done_ = 0;
    ParsePiece();
  }
  return true;
}

const Event* StreamEvents::NextRef() {
  if (!Fill()) return nullptr;
  return &pending_[next_++];
}

bool StreamEvents::Next(Event* e) {
  if (!Fill()) return false;
  // Swapped, not moved: the caller's last event goes back into the batch, and
  // the next event parsed into that slot reuses its memory.
  SwapEvents(*e, pending_[next_]);
  std::swap(out_owner_, pending_.owner(next_));
  ++next_;
  return true;
}

}  // namespace tpt
