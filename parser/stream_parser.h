// stream_parser.h: the events of one input stream, block by block.
//
// A StreamParser runs the Hyperscan literal prefilter over each block of
// complete lines, and only on lines holding a literal (or while a multi-line
// record such as a Python traceback is open) strips wrappers and producer
// prefixes and runs the capturing RE2 patterns. Line numbers are counted only
// between hits. StreamEvents couples it with a BlockReader and hands events
// out one by one, which the k-way merge in parser.cc pulls from.
//
//   tpt::StreamParser p(formats, options, /*source=*/0, "rank0.log");
//   std::vector<tpt::Event> out;
//   p.ParseBlock(block, &out);   // for each block of the stream
//   p.Finish(&out);
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parser/event.h"
#include "parser/format_set.h"
#include "parser/match/line_bits.h"
#include "parser/parser.h"
#include "parser/reader.h"

struct hs_scratch;

namespace tpt {

// Makes `*to` equal to `from` in place: strings keep their buffers, objects
// their nodes (json_reuse.h), and values still to decode (Event::Deferred)
// are copied as such, not the stale objects they will refill. With
// `own_decoders` false, `*to` uses the decoders of `from` without sharing
// their ownership (no count changes: an atomic operation, on a line another
// thread may read), so only while `from`'s FormatSet lives
// (parser/record_writer.h).
void CopyEventReusing(const Event& from, Event* to, bool own_decoders = true);

// The events of a piece of a stream, with their memory kept: slots past size()
// hold earlier events (fields, wrapper, strings) that the next events
// overwrite in place instead of allocating afresh (json_reuse.h).
class EventBatch {
 public:
  // A slot for the next event: a recycled one, its members still the old event's.
  Event& Add();
  void DropLast() { --size_; }
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  Event& operator[](size_t i) { return events_[i]; }
  // The pattern whose fields object slot i holds (-1: none known); fields of
  // one pattern have the same keys, so they are refilled without new nodes.
  int& owner(size_t i) { return owners_[i]; }

 private:
  std::vector<Event> events_;
  std::vector<int> owners_;
  size_t size_ = 0;
};

class StreamParser {
 public:
  StreamParser(const FormatSet& formats, const ParseOptions& options, int source, std::string file);
  ~StreamParser();
  StreamParser(const StreamParser&) = delete;
  StreamParser& operator=(const StreamParser&) = delete;

  void ParseBlock(const Block& block, EventBatch* out);
  // The same in two steps, for callers that parse a block a piece at a time:
  // ScanBlock runs the literal prefilter over the whole block once (one
  // Hyperscan call per block, not per piece); ParsePieceOf then parses
  // block.text[from, to) (whole lines) with the hits that fall there.
  void ScanBlock(const Block& block);
  // Where a piece of the scanned block that starts at `from` ends: after the
  // last '\n' within `want` bytes, else after the first one past them, else
  // at the block's end.
  size_t PieceEnd(const Block& block, size_t from, size_t want) const;
  void ParsePieceOf(const Block& block, size_t from, size_t to, EventBatch* out);
  // End of stream: open multi-line records without their end are emitted cut.
  void Finish(EventBatch* out);
  // The same, appending to a plain vector (tests; no recycling).
  void ParseBlock(const Block& block, std::vector<Event>* out);
  void Finish(std::vector<Event>* out);

  uint64_t lines() const { return line_no_; }
  uint64_t long_lines() const { return long_lines_; }

  // Longest Event::text kept (the rest is cut; see parser/README.md).
  static constexpr size_t kMaxTextBytes = 16 * 1024;
  // Captures are kept for later decoding (Event::Deferred) when they lie this
  // far into an event's text at most: CapText may cut up to 3 bytes earlier.
  static constexpr size_t kDeferLimit = kMaxTextBytes - 4;
  // At most this many continuation lines / bytes are kept per multi-line record.
  static constexpr size_t kMaxExtraLines = 200;
  static constexpr size_t kMaxExtraBytes = 64 * 1024;
  // How much of the previous line `repeat` wrappers can compare with.
  static constexpr size_t kKeptPreviousBytes = 256;

 private:
  struct Hit {
    unsigned long long to;
    unsigned id;
  };
  struct OpenBlock {
    int spec;
    std::string key;
    Event event;       // rank/ts of the start line
    uint64_t start_line;
    size_t lines_seen = 0;
    size_t bytes = 0;
    bool after_frame = false;  // the last line kept was a frame (`File "...", line N`): its code line may follow unindented
  };

  static int OnHit(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void* ctx);
  // `ids`: the literal hits of the line (target ids), sorted and replaced
  // (rescans) in place.
  void ProcessLine(std::string_view line, const FormatSet::PreviousLine& previous, uint64_t offset, bool truncated,
                   std::vector<unsigned>* ids, EventBatch* out);
  // `plain`: IsPlainLine(seg) is known to hold (nothing to strip or repair).
  void ProcessSegment(std::string_view seg, const FormatSet::PreviousLine& previous, uint64_t offset, bool rescan,
                      std::vector<unsigned>* hit_ids, EventBatch* out, bool plain = false);
  // The line before text[pos] (the previous block's last line at pos 0).
  std::string_view PreviousLine(std::string_view text, size_t pos) const;
  void KeepLastLine(std::string_view text);
  void HandleBlocks(const LineMeta& meta, std::string_view msg, std::string_view text, uint64_t offset,
                    bool has_start, EventBatch* out);
  void Emit(Event&& e, EventBatch* out);
  void EmitCut(OpenBlock&& ob, EventBatch* out);
  void EmitWhole(OpenBlock&& ob, EventBatch* out);
  int OpenRecordFor(const std::string& key) const;
  bool runaway_ = false;  // a record was just cut past max_lines: its further frames open none
  std::vector<unsigned> Scan(std::string_view text);
  // Hits of text in hits_ (ordered by end offset).
  void ScanHits(std::string_view text);
  // Parses block.text[from, to) with hits[0, n) (offsets from block.text) and
  // bits_ built for block.text.
  void ParseScanned(const Block& block, size_t from, size_t to, const Hit* hits, size_t n, EventBatch* out);

  const FormatSet& formats_;
  const ParseOptions options_;  // a copy: callers may pass a temporary
  int source_;
  std::string file_;
  hs_scratch* scratch_ = nullptr;
  std::vector<bool> pattern_wanted_;
  bool blocks_wanted_ = true;
  std::vector<Hit> hits_;
  LineBits bits_;  // of the block ParseScanned parses (ParseBlock, ScanBlock build it)
  size_t bits_line_ = std::string_view::npos;  // where the line ProcessLine is given starts in bits_
  std::vector<Hit> block_hits_;  // ScanBlock's
  size_t block_hit_next_ = 0;    // first of them not parsed yet
  std::vector<OpenBlock> open_;
  uint64_t line_no_ = 0;  // lines completed so far
  uint64_t long_lines_ = 0;
  std::string scratch_text_;
  std::string last_line_;  // start of the previous block's last line (repeat wrappers)
  LineMeta meta_;          // the current line's producer; its wrapper object is refilled in place
  EventBatch vector_batch_;  // for the std::vector overloads
  // Spare fields objects by pattern: a slot about to take pattern P's event
  // trades its object (another pattern's) for one of P's.
  std::vector<std::vector<nlohmann::json>> field_pool_;
};

// One input stream as a pull source of events.
// One input's events, in its own order: what the merge in parser.cc reads.
// StreamEvents parses a text log; a flight-recorder dump has its own reader
// (parser/flight_recorder.h).
class EventStream {
 public:
  virtual ~EventStream() = default;
  // The next event in place, or null at the end: valid until the next call.
  virtual const Event* NextRef() = 0;
  virtual const std::string& error() const = 0;  // "" when read fine
  virtual uint64_t bytes() const = 0;
  virtual uint64_t lines() const = 0;
  virtual uint64_t long_lines() const = 0;
  // A dated time (not a time of day) of the stream known before it is read,
  // or none: a dump read whole knows its records' times, so the merge
  // (ParseRun) places a log's time-of-day lines on their day from the start.
  virtual std::optional<double> DatedTimeHint() const { return std::nullopt; }
};

// Events read whole by a reader of its own (a dump is small and bounded).
class VectorEvents : public EventStream {
 public:
  VectorEvents(std::vector<Event> events, std::string error, uint64_t bytes)
      : events_(std::move(events)), error_(std::move(error)), bytes_(bytes) {}
  const Event* NextRef() override { return next_ < events_.size() ? &events_[next_++] : nullptr; }
  const std::string& error() const override { return error_; }
  uint64_t bytes() const override { return bytes_; }
  uint64_t lines() const override { return events_.size(); }
  uint64_t long_lines() const override { return 0; }
  std::optional<double> DatedTimeHint() const override {
    for (const Event& e : events_)
      if (e.ts && !e.ts_is_time_of_day) return e.ts;
    return std::nullopt;
  }

 private:
  std::vector<Event> events_;
  size_t next_ = 0;
  std::string error_;
  uint64_t bytes_;
};

class StreamEvents : public EventStream {
 public:
  StreamEvents(std::unique_ptr<ByteSource> source, const FormatSet& formats, const ParseOptions& options,
               size_t buffer_bytes, int index, std::string file);
  // False at end of stream (or after a read error, see error()).
  bool Next(Event* e);
  // The next event in place, or null at the end: valid until the next call
  // (no copy or swap; the merge in parser.cc reads events this way).
  const Event* NextRef() override;
  const std::string& error() const override { return error_; }
  uint64_t bytes() const override { return reader_.bytes(); }
  uint64_t lines() const override { return parser_.lines(); }
  uint64_t long_lines() const override { return parser_.long_lines(); }

 private:
  // Parses the next piece of block_ (whole lines, about kPieceBytes) into pending_.
  void ParsePiece();
  // Parses until an event is pending; false at the end.
  bool Fill();
  static constexpr size_t kPieceBytes = 512;

  std::unique_ptr<ByteSource> source_;
  BlockReader reader_;
  StreamParser parser_;
  Block block_;           // the reader's current block ...
  size_t block_done_ = 0; // ... parsed up to here
  EventBatch pending_;  // Next() swaps events out, so their memory comes back here
  int out_owner_ = -1;  // EventBatch::owner of the event last swapped out to the caller
  size_t next_ = 0;
  bool done_ = false;
  std::string error_;
};

}  // namespace tpt
