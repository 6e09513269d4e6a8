// unpaste.h: undo what pasting does to a log, before the parser reads it.
//
// Logs reach us copied out of terminals, issues and chat: quoted, fenced, with
// line-number gutters, HTML entities, colours pasted as the text `^[[0;36m`,
// tracebacks pretty-printed in rich/typer boxes, long lines hard-wrapped by a
// terminal at a fixed column or by the author between words. UnpasteSource
// sits between the byte source and the BlockReader and gives the parser the
// log as it was printed:
//
//   - a container runtime's json-file records unwrapped to the lines they
//     hold, and a line the runtime cut (json-file at 16 KiB, CRI's `P`
//     records) joined again;
//   - `&lt;` `&gt;` `&amp;` `&quot;` `&#39;` decoded;
//   - literal caret/escaped colour codes (`^[[0;36m`, `\033[0m`, `\x1b[1m`) removed;
//   - code-fence lines (```` ``` ````, `~~~`) and elision lines (`....`, `[...]`) blank;
//   - the backticks of a Markdown code span typed around a pasted line removed;
//   - a log viewer's own line after each record (`2026-09-06 15:46:07  pod-name  `,
//     learned when they are a third of the lines or more) blank;
//   - quote bars (`▎ `, `│ `: chat and forum tools' quote) removed from the
//     start of any line;
//   - a paste quoted or indented as a block (every non-blank line of the
//     first 1 MiB starts with '>' marks, or with the same 4 or more spaces: a
//     Markdown quote or code block) unquoted, then unindented;
//   - a line-number gutter (`  12 | `, `12\t`) stripped once two consecutive
//     lines carry consecutive numbers;
//   - rich/typer boxes turned back into Python frames: the `Traceback` rule
//     line into the header, `│ path.py:LINE in fn │` into `  File "path.py",
//     line LINE, in fn`, the `❱` line into the code line, the rest blank;
//   - hard wraps rejoined: when the file is cut at one terminal width (several
//     lines of exactly that length, none longer) a line of that length takes
//     the next; a traceback frame cut before its function takes the next line;
//     and a line holding a pattern's literal whose regex fails on it (or
//     reads fewer fields) takes the next lines that have no prefix of their
//     own, while the joined text matches better.
//
// Joined lines are followed by as many empty lines as they took, so every
// later line keeps its line number (evidence stays right). Memory: the first
// 1 MiB (to learn a terminal width) and a window of 8 lines.
//
// A line no transform touches (most lines of a clean log) is never copied
// on its way: it stays where it was read, the window holds its place, and it
// is written straight into the reader's buffer. Only a line that is rewritten
// or joined gets a copy of its own.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parser/reader.h"

struct hs_scratch;

namespace tpt {

class FormatSet;

// The line transforms, one line at a time (tests call them directly). Each
// returns true when it changed the line.
bool DecodeHtmlEntities(std::string* line);
bool StripLiteralAnsi(std::string* line);
bool IsFenceOrElision(std::string_view line);
// The backticks of a Markdown code span an author typed around a pasted line,
// removed: "`ValueError: ...`" (the span on one line), "`ValueError: ..."
// (it opens here and closes on a later line), a lone "`" (it closes here).
// A backtick is a span's mark only when the line's backticks do not pair
// up inside it: "`torch_dtype` is deprecated" (a program's own quoting) is
// left alone. CodeSpanMarks says which bytes go: `front` and `back` are 0 or 1.
bool CodeSpanMarks(std::string_view line, size_t* front, size_t* back);
bool IsCodeSpanLine(std::string_view line);
bool StripCodeSpan(std::string* line);
// `indent` leading spaces (or tabs, `ch`) removed from a line that has them
// (a block indent).
void StripIndent(std::string* line, size_t indent, char ch = ' ');
// Quote marks a line starts with, and the first `depth` of them removed: a
// Markdown '>' or a quote bar, each with one space after it. A quote bar is
// what chat and forum tools draw before a quoted line (Slack, Discord, GitHub
// mobile, terminals' copy of a quoted mail): one of the left blocks
// ▏▎▍▌▋▊▉█ or a vertical │ ┃.
size_t QuoteDepth(std::string_view line);
void StripQuote(std::string* line, size_t depth);
// Bytes of the quote bars (each with its space) a line starts with; 0 when it
// starts with none, or is a box or table row (starts and ends with │ or ┃:
// rich's traceback box, a drawn table). No program prints a bar and a space
// to open its own line, so the paste layer removes them from any line, in a
// paste that quotes only part of the log too (its wrapped lines then join).
size_t QuoteBarLength(std::string_view line);
// A log viewer's line of its own after each record (a Kubernetes dashboard's
// export: `2026-09-06 15:46:07  my-pod-7f9c-worker-0  `): the date, time and a
// pod or container name, nothing else. Blanked when the paste has them as
// every other line (UnpasteSource learns it), so the records they split join.
bool IsViewerRecordLine(std::string_view line);
// Records glued onto one line, their newlines lost in the paste (a chat tool,
// a web form, a `tr -d` of CRs gone wrong): two or more process prefixes on
// one line, vLLM's `(APIServer pid=2960)` or Ray's `(RayWorkerWrapper pid=12,
// ip=...)` (each process' records open with one). `*cuts`: where each prefix
// after the line's start begins (the line is cut there into its records).
// No program prints a second prefix inside its own record.
bool GluedRecords(std::string_view line, std::vector<size_t>* cuts);
// `  12 | text`, `12\ttext`, `  12 │ text`: the number, and where the text starts;
// -1 when the line has no gutter.
long GutterNumber(std::string_view line, size_t* text_start);
// A rich/typer traceback box line rewritten as CPython prints the same part.
bool UnboxRichLine(std::string* line);
// A row or border of an ASCII table a program drew (Triton's model and
// backend tables: `+----+----+`, `| name | 1 | READY |`): it opens and closes
// with `|` or `+`. Its rows share one width by construction, so lines of one
// length there are not a terminal's wrap, and a row is a line of its own.
bool IsDrawnTableRow(std::string_view line);
// A Markdown table row an author wrote around an exception line, one cell
// holding it (`| auto | `RuntimeError: boom` (raised in x) |`, the span's
// backticks optional): the row replaced by that cell, so that the exception
// line is read on its own line. Only a cell that opens (after its span's
// backtick) with Python's `Type: message` (a dotted type whose last name ends in
// Error or Exception) counts; the first such cell wins. The cell is kept as
// written, its span and the words after it included (an escaped `\|` is a `|`
// again): a message quoted in a span stays a quotation, which the rules take as
// evidence only in a bug report (rules/prose.cc), as they do a quotation in a
// sentence. Other rows (a drawn table's, nvidia-smi's, a table of flags) stay.
bool UnwrapTableErrorCell(std::string* line);
// A container runtime's json-file record (Docker's `{"log":"...\n","stream":
// "stderr","time":"..."}`, as under /var/lib/docker/containers/ and a
// docker-shim node's /var/log/containers/) replaced by the line it holds.
// `*ends_line` is false for a record the runtime cut from a longer line (no
// trailing newline in "log": Docker splits lines at 16 KiB), whose next
// record goes on with the same line.
bool UnwrapContainerRecord(std::string* line, bool* ends_line);
// A Kubernetes node's CRI log line (`TIME stderr F text`): where its text
// starts, and whether it ends its line (tag F) or the runtime cut it (P: the
// next record goes on with it). The prefix itself is the wrapper `cri`'s.
bool CriRecord(std::string_view line, size_t* text_start, bool* ends_line);

class UnpasteSource : public ByteSource {
 public:
  // `formats` may be null (no literal-guided joins); it must outlive the source.
  UnpasteSource(std::unique_ptr<ByteSource> inner, const FormatSet* formats);
  ~UnpasteSource() override;
  StatusOr<size_t> Read(char* buf, size_t n) override;

 private:
  struct Line {
    std::string text;     // the line's own copy (own), rewritten or joined
    size_t off = 0, len = 0;  // else its bytes in raw_, untouched
    bool own = true;
    bool ascii = false;   // (not own) every byte under 0x80
    bool newline = true;  // ended with '\n' (the last line of a cut log may not)
    // Characters of quote bars removed from its front ('▎ '): a terminal or a
    // paste tool that cut the line at a width counted them.
    uint8_t front = 0;
    // ContinuesWrapped(text), asked once a line (a line is asked again for
    // every earlier line whose window it is in): -1 not yet asked.
    int8_t continues = -1;
  };
  // The lines waiting for their window, first to last. A popped slot keeps its
  // string's memory for a later line: no allocation a line once warm.
  class LineQueue {
   public:
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    Line& operator[](size_t i) { return slots_[(head_ + i) % slots_.size()]; }
    const Line& operator[](size_t i) const { return slots_[(head_ + i) % slots_.size()]; }
    Line& front() { return (*this)[0]; }
    Line& back() { return (*this)[size_ - 1]; }
    void pop_front() {
      head_ = (head_ + 1) % slots_.size();
      --size_;
    }
    // A new last line: its own empty text (its memory kept), newline true, not asked.
    Line& PushBack();

   private:
    std::vector<Line> slots_;
    size_t head_ = 0, size_ = 0;
  };
  Status Pull();                 // more raw bytes -> lines_ (normalised)
  void Learn();                  // terminal width from the first lines
  void FlushRecordHead();
  // Lines holding glued records (GluedRecords) cut into one line a record:
  // the queue's lines once learned, `text` (a line Pull made) from then on.
  void CutGluedInQueue();
  void PushCutGlued(std::string* text, bool newline, uint8_t front);        // record_head_ as a line of its own (+ empties for its pieces)
  // The window's first line (joined) -> buf[*filled, cap), what does not fit -> out_.
  void EmitFront(char* buf, size_t cap, size_t* filled);
  // A line's text: its own copy, or its bytes in raw_ (valid until the next Pull).
  std::string_view Text(const Line& l) const {
    return l.own ? std::string_view(l.text) : std::string_view(raw_.get() + l.off, l.len);
  }
  std::string& Own(Line& l) const;  // the line's text as its own copy, to rewrite
  bool IndentIsAdded(size_t indent) const;
  void LearnSecondWidth(size_t needed);
  bool HasOwnStart(std::string_view line) const;
  bool StartsOwnLine(std::string_view cut, std::string_view next) const;
  bool ContinuesWrapped(std::string_view line) const;
  bool ContinuesWrapped(Line& line) const;  // the same, remembered in the line
  // Best (fields + 1) of the patterns in `hit` (filled with those whose literal
  // is in `line` when empty) that match `line`; 0 none matches; -1 no literal.
  bool LiteralHits(std::string_view line, std::vector<int>* hit);  // patterns whose literal is in `line`
  int PatternScore(std::string_view line, std::vector<int>* hit);
  std::vector<int> Scores(std::string_view line, const std::vector<int>& patterns);  // (fields + 1) per pattern, 0 no match

  std::unique_ptr<ByteSource> inner_;
  const FormatSet* formats_;
  hs_scratch* scratch_ = nullptr;
  // Bytes read: the untouched lines in the window, then those not yet cut
  // into lines from raw_cut_ on. Moved down only when the bytes no line needs
  // outweigh the rest (Pull), so a line's place stays valid in between.
  std::unique_ptr<char[]> raw_;
  size_t raw_size_ = 0, raw_cap_ = 0, raw_cut_ = 0;
  bool inner_done_ = false;
  LineQueue lines_;         // normalised, waiting for their window
  Line first_;              // the line EmitFront hands on (its memory kept)
  std::string line_;        // a line Pull rewrites (its memory kept)
  std::string record_head_;  // a container record's line so far, cut by the runtime
  size_t record_pieces_ = 0;  // records in record_head_
  std::string out_;         // the part of a line that did not fit the caller's buffer
  size_t out_pos_ = 0;
  bool learned_ = false;
  size_t width_ = 0;        // terminal width the file is cut at (0: none)
  size_t width2_ = 0;       // a wider width it was cut at before (0: none)
  size_t indent_ = 0;       // spaces (or tabs) every line of the paste is indented by (0: none)
  char indent_char_ = ' ';  // ' ' or '\t'
  size_t quote_ = 0;        // quote marks every line of the paste starts with (0: none)
  bool gutter_ = false;     // a line-number gutter was seen
  bool viewer_lines_ = false;  // a log viewer's date + pod line follows each record (blanked)
  bool glued_ = false;      // records glued onto one line were seen (each line is cut into its records)
  std::vector<size_t> cuts_;  // GluedRecords' cuts of the line at hand (its memory kept)
  long last_gutter_ = -2;
  size_t line_bytes_limit_ = 1 << 20;
  size_t held_ = 0;
  Status error_ = OkStatus();  // the inner source's error, returned once its lines are out
};

}  // namespace tpt
