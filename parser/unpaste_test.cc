// unpaste_test.cc: UnpasteSource and its line transforms (unpaste.h).
#include "parser/unpaste.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>

#include "parser/format_set.h"

namespace tpt {
namespace {

// Everything the source gives, read in small pieces (the window and the
// learning buffer must not depend on the reader's buffer size).
std::string ReadAll(const std::string& in, const FormatSet* formats, size_t piece = 7) {
  UnpasteSource src(std::make_unique<StringSource>(in), formats);
  std::string out;
  char buf[64];
  while (true) {
    auto n = src.Read(buf, std::min(piece, sizeof buf));
    EXPECT_TRUE(n.ok());
    if (!n.ok() || *n == 0) break;
    out.append(buf, *n);
  }
  return out;
}

const FormatSet* Formats() {
  static const FormatSet* f = [] {
    auto s = FormatSet::LoadBuiltin();
    EXPECT_TRUE(s.ok());
    return new FormatSet(std::move(*s));
  }();
  return f;
}

size_t Lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

// Lines a transform must leave alone: it says it changed nothing, and it did not.
void ExpectKept(bool (*transform)(std::string*), std::initializer_list<const char*> lines) {
  for (const char* keep : lines) {
    std::string l = keep;
    EXPECT_FALSE(transform(&l)) << keep;
    EXPECT_EQ(l, keep);
  }
}

// Lines no transform touches are handed on from where they were read (no
// copy), rewritten ones from a copy: side by side, over many reads of the
// inner source (the untouched lines of the window move down in its buffer)
// and whatever the reader's buffer size, the output is the rewritten text.
TEST(Unpaste, UntouchedLinesPassThroughBesideRewrittenOnes) {
  std::string in, want;
  for (int i = 0; i < 6000; ++i) {  // ~340 KB, several of the inner source's 64 KiB reads
    const std::string n = std::to_string(i);
    if (i % 7 == 3) {
      in += "[2025-10-14 10:00:00 TP1] x &lt;" + n + "&gt; y\n";  // entities decoded
      want += "[2025-10-14 10:00:00 TP1] x <" + n + "> y\n";
    } else if (i % 11 == 5) {
      in += "^[[1;36m[2025-10-14 10:00:00 TP2] colour " + n + "^[[0;0m\r\n";  // codes and CR removed
      want += "[2025-10-14 10:00:00 TP2] colour " + n + "\n";
    } else if (i % 13 == 6) {
      in += "```\n";  // a fence comes out blank
      want += "\n";
    } else {
      std::string line = "[2025-10-14 10:00:00 TP0] Decode batch. #running-req: " + n + ", caf\xC3\xA9";
      in += line + (i % 5 == 0 ? "\r\n" : "\n");
      want += line + "\n";
    }
  }
  // Past the first 1 MiB (learned) the window is short and the buffer is
  // moved down while untouched lines wait in it.
  std::string tail_in, tail_want;
  for (int k = 0; k < 4; ++k) {
    tail_in += in;
    tail_want += want;
  }
  tail_in += "last line, cut";
  tail_want += "last line, cut";
  ASSERT_GT(tail_in.size(), size_t{1} << 20);
  for (size_t piece : {size_t{7}, size_t{64}}) EXPECT_EQ(ReadAll(tail_in, Formats(), piece), tail_want) << piece;
  // A reader buffer larger than the source's reads.
  UnpasteSource src(std::make_unique<StringSource>(tail_in), Formats());
  std::string out;
  std::string buf(300000, '\0');
  while (true) {
    auto n = src.Read(buf.data(), buf.size());
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    out.append(buf.data(), *n);
  }
  EXPECT_EQ(out, tail_want);
}

TEST(Unpaste, HtmlEntities) {
  std::string l = "  File &quot;x.py&quot;, line 3, in &lt;module&gt; &amp;&amp; &#39;a&#39; &unknown;";
  EXPECT_TRUE(DecodeHtmlEntities(&l));
  EXPECT_EQ(l, "  File \"x.py\", line 3, in <module> && 'a' &unknown;");
  std::string plain = "no entity & here";
  EXPECT_FALSE(DecodeHtmlEntities(&plain));
}

TEST(Unpaste, LiteralAnsi) {
  std::string l = "^[[1;36m(Worker_TP0 pid=4)^[[0;0m \\033[32mINFO\\033[0m x ^[[ not a code";
  EXPECT_TRUE(StripLiteralAnsi(&l));
  EXPECT_EQ(l, "(Worker_TP0 pid=4) INFO x ^[[ not a code");
}

TEST(Unpaste, FencesAndElisions) {
  EXPECT_TRUE(IsFenceOrElision("```"));
  EXPECT_TRUE(IsFenceOrElision("  ```text"));
  EXPECT_TRUE(IsFenceOrElision("...."));
  EXPECT_TRUE(IsFenceOrElision("[...]"));
  EXPECT_FALSE(IsFenceOrElision("```python print(1)```"));
  EXPECT_FALSE(IsFenceOrElision("Loading..."));
  EXPECT_FALSE(IsFenceOrElision(""));
}

// An author's code span around a pasted line (GitHub issues quote a bare
// exception line so): its marks go, a program's own backticks stay.
TEST(Unpaste, CodeSpans) {
  auto strip = [](std::string l) {
    StripCodeSpan(&l);
    return l;
  };
  EXPECT_EQ(strip("`RuntimeError: boom`"), "RuntimeError: boom");
  EXPECT_EQ(strip("`ValueError: leak detected! available_size=644"), "ValueError: leak detected! available_size=644");
  EXPECT_EQ(strip("`"), "");
  EXPECT_EQ(strip("protected_size=0`"), "protected_size=0");
  // The span opens here and a pair of the author's own marks sits inside it.
  EXPECT_EQ(strip("`RuntimeError: set a smaller `--max-running-requests`. n=2,"),
            "RuntimeError: set a smaller `--max-running-requests`. n=2,");
  // A program's own quoting, and text that is not a span.
  ExpectKept(StripCodeSpan, {"`torch_dtype` is deprecated! Use `dtype` instead!", "`torch_dtype` is deprecated!",
                             "ERROR x `y` z", "` not a span`", "```", "use ``x``", "plain line"});
}

TEST(Unpaste, CodeSpanLinesThroughTheSource) {
  const std::string in =
      "[2025-10-22 20:21:39] Load weight begin. avail mem=94.69 GB\n"
      "`ValueError: token_to_kv_pool_allocator memory leak detected! available_size=644\n"
      "`\n"
      "`torch_dtype` is deprecated! Use `dtype` instead!\n";
  const std::string out =
      "[2025-10-22 20:21:39] Load weight begin. avail mem=94.69 GB\n"
      "ValueError: token_to_kv_pool_allocator memory leak detected! available_size=644\n"
      "\n"
      "`torch_dtype` is deprecated! Use `dtype` instead!\n";
  EXPECT_EQ(ReadAll(in, nullptr), out);
  EXPECT_EQ(ReadAll(in, Formats()), out);
  EXPECT_EQ(ReadAll("> `RuntimeError: boom`\n> next\n", Formats()), "RuntimeError: boom\nnext\n");
}

TEST(Unpaste, Gutter) {
  size_t at = 0;
  EXPECT_EQ(GutterNumber("  12 | text", &at), 12);
  EXPECT_EQ(std::string("  12 | text").substr(at), "text");
  EXPECT_EQ(GutterNumber("7\tx", &at), 7);
  EXPECT_EQ(GutterNumber("12: rank label", &at), -1);  // Slurm's label, not a gutter
  // Stripped only once two consecutive lines carry consecutive numbers.
  EXPECT_EQ(ReadAll("  1 | a\n  2 | b\n  3 | c\n", nullptr), "a\nb\nc\n");
  EXPECT_EQ(ReadAll("  1 | a\nplain\n", nullptr), "  1 | a\nplain\n");
}

TEST(Unpaste, RichBox) {
  std::string in =
      "╭──── Traceback (most recent call last) ────╮\n"
      "│ /srt/model_runner.py:312 in init_memory_pool │\n"
      "│                                              │\n"
      "│   309 │   │   │   )                          │\n"
      "│ ❱ 312 │   │   raise RuntimeError(            │\n"
      "╰──────────────────────────────────────────────╯\n"
      "RuntimeError: Not enough memory.\n";
  std::string out = ReadAll(in, nullptr);
  EXPECT_EQ(out,
            "Traceback (most recent call last):\n"
            "  File \"/srt/model_runner.py\", line 312, in init_memory_pool\n"
            "\n\n"
            "    raise RuntimeError(\n"
            "\n"
            "RuntimeError: Not enough memory.\n");
  EXPECT_EQ(Lines(out), Lines(in));
}

// A terminal UI's log pane (k9s, lazydocker) draws a box around each line,
// padded to the pane's width: the rows are the log's lines (their own leading
// spaces kept), not a rich traceback to blank (fresh set 8, a k9s paste).
TEST(Unpaste, LogPaneRowsInABoxKeepTheirText) {
  const std::string pad(40, ' ');
  std::string in =
      "│ INFO 11-02 08:01:12 [worker.py:267] Memory profiling takes 21.40 seconds" + pad + "│\n"
      "│ 2025-11-02 08:01:13,004 ERROR boom" + pad + "│\n"
      "│   File \"/app/serve.py\", line 4, in main" + pad + "│\n";
  EXPECT_EQ(ReadAll(in, nullptr),
            "INFO 11-02 08:01:12 [worker.py:267] Memory profiling takes 21.40 seconds\n"
            "2025-11-02 08:01:13,004 ERROR boom\n"
            "  File \"/app/serve.py\", line 4, in main\n");
}

// Docker's json-file records (moby jsonfilelog): the line each holds, with
// JSON escapes decoded (a real ESC from \u001b, quotes, tabs); a JSON log of an
// application that merely has a "log" key stays as it is.
TEST(Unpaste, ContainerRecordUnwrapped) {
  bool ends = false;
  std::string l = R"({"log":"[2025-06-10 10:01:11 TP3] \u001b[32mINFO\u001b[0m \"x\"\tdone\n","stream":"stderr","time":"2025-06-10T10:01:11.5Z"})";
  EXPECT_TRUE(UnwrapContainerRecord(&l, &ends));
  EXPECT_TRUE(ends);
  EXPECT_EQ(l, "[2025-06-10 10:01:11 TP3] \x1b[32mINFO\x1b[0m \"x\"\tdone");
  std::string spaced = R"({ "log" : "a\r\n", "stream": "stdout"})";
  EXPECT_TRUE(UnwrapContainerRecord(&spaced, &ends));
  EXPECT_EQ(spaced, "a");
  std::string cut = R"({"log":"first half ","stream":"stdout","time":"t"})";
  EXPECT_TRUE(UnwrapContainerRecord(&cut, &ends));
  EXPECT_FALSE(ends);
  for (std::string other : {std::string(R"({"log":"x"})"), std::string(R"({"level":"info","log":"x","stream":"s"})"),
                            std::string(R"({"log":"unterminated)"), std::string("{\"log\":1,\"stream\":\"s\"}")}) {
    std::string before = other;
    EXPECT_FALSE(UnwrapContainerRecord(&other, &ends)) << before;
    EXPECT_EQ(other, before);
  }
}

// A whole json-file log reads as the lines it holds, each at its own line
// number; a line the runtime cut at 16 KiB into records is joined again and
// the records it took come out empty, so later lines keep their numbers; a cut
// record that is the file's last is not lost.
TEST(Unpaste, ContainerLogReadsAsItsLinesWithTheirNumbers) {
  auto rec = [](const std::string& text) {
    std::string esc;
    for (char c : text) esc += c == '"' ? std::string("\\\"") : c == '\n' ? std::string("\\n") : std::string(1, c);
    return "{\"log\":\"" + esc + "\",\"stream\":\"stderr\",\"time\":\"2025-06-10T10:01:11.000000001Z\"}\n";
  };
  std::string in = rec("line one\n") + rec("a long line, ") + rec("cut twice ") + rec("by the runtime\n") + rec("line five\n") +
                   rec("tail without its end");
  std::string out = ReadAll(in, Formats());
  EXPECT_EQ(out, "line one\na long line, cut twice by the runtime\n\n\nline five\ntail without its end\n");
  EXPECT_EQ(Lines(out), Lines(in));
}

// A Kubernetes node's CRI lines: a line cut into P records joins into the
// first record's line (its prefix kept for the wrapper `cri`), numbers kept.
TEST(Unpaste, CriPartialRecordsJoin) {
  size_t start = 0;
  bool ends = false;
  EXPECT_TRUE(CriRecord("2025-06-10T10:01:11.000000001Z stderr F text", &start, &ends));
  EXPECT_TRUE(ends);
  EXPECT_EQ(start, 40u);
  EXPECT_TRUE(CriRecord("2025-06-10T12:01:11.5+02:00 stdout P cut", &start, &ends));
  EXPECT_FALSE(ends);
  EXPECT_FALSE(CriRecord("2025-06-10T10:01:11.000000001Z [rank0]: boom and more", &start, &ends));
  const std::string p = "2025-06-10T10:01:11.000000001Z stderr ";
  std::string in = p + "F one\n" + p + "P server_args=ServerArgs(model_path='m', \n" + p + "P tp_size=8, \n" + p +
                   "F mem_fraction_static=0.5)\n" + p + "F four\n";
  std::string out = ReadAll(in, Formats());
  EXPECT_EQ(out, p + "F one\n" + p + "P server_args=ServerArgs(model_path='m', tp_size=8, mem_fraction_static=0.5)\n\n\n" + p +
                     "F four\n");
}

TEST(Unpaste, TerminalWidthJoinKeepsLineNumbers) {
  std::string line = "[2025-06-10 10:01:11 TP3] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.";
  std::string in;
  for (int i = 0; i < 4; ++i) {
    std::string l = line;
    l[23] = static_cast<char>('0' + i);  // TP0..TP3
    for (size_t p = 0; p < l.size(); p += 40) in += l.substr(p, 40) + "\n";
  }
  in += "end\n";
  std::string out = ReadAll(in, Formats());
  EXPECT_EQ(Lines(out), Lines(in));
  EXPECT_NE(out.find(line + "\n"), std::string::npos) << out;
}

// A paste indented as a block (a Markdown code block): every non-blank line
// starts with 4 spaces; the frames keep their own 2 and the code its 4 more.
// A log's own indentation (frames at 2, code at 4, lines at column 0) stays.
TEST(Unpaste, BlockIndentIsRemovedAndALogsOwnIndentationKept) {
  const std::string log =
      "(EngineCore_DP0 pid=1454) INFO 05-28 14:45:27 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds.\n"
      "Traceback (most recent call last):\n"
      "  File \"/x/vllm/v1/engine/core.py\", line 10, in run\n"
      "    self.step()\n"
      "\n"
      "RuntimeError: boom\n";
  std::string indented;
  for (size_t p = 0, q; p < log.size(); p = q + 1) {
    q = log.find('\n', p);
    std::string l = log.substr(p, q - p);
    indented += (l.empty() ? "" : "    ") + l + "\n";
  }
  EXPECT_EQ(ReadAll(indented, Formats()), log);
  EXPECT_EQ(ReadAll(log, Formats()), log);
  // Only frames and code (all indented by at least 2, not 4): kept as they are.
  const std::string frames = "  File \"/x/a.py\", line 1, in f\n    g()\n  File \"/x/b.py\", line 2, in g\n    h()\n";
  EXPECT_EQ(ReadAll(frames, Formats()), frames);
  std::string two = "  a\n";
  StripIndent(&two, 4);
  EXPECT_EQ(two, "  a\n");
}

// The same paste indented by two spaces (a list item's code block, a form's
// field) or by a tab (a mail's or an editor's indented block), and hard
// wrapped before it was indented: the indent goes, then the wrap joins.
TEST(Unpaste, TwoSpaceAndTabBlockIndentsAreRemoved) {
  const std::string log =
      "(EngineCore_DP0 pid=1454) INFO 05-28 14:45:27 [shm_broadcast.py:681] No available shared memory broadcast block found in 60 seconds.\n"
      "(EngineCore_DP0 pid=1454) ERROR 05-28 14:45:28 [core.py:700] EngineCore encountered a fatal error while it served the requests.\n"
      "Traceback (most recent call last):\n"
      "  File \"/x/vllm/v1/engine/core.py\", line 10, in run\n"
      "    self.step()\n"
      "\n"
      "RuntimeError: boom\n";
  auto indent = [](const std::string& text, const std::string& by) {
    std::string out;
    for (size_t p = 0, q; p < text.size(); p = q + 1) {
      q = text.find('\n', p);
      std::string l = text.substr(p, q - p);
      out += (l.empty() ? "" : by) + l + "\n";
    }
    return out;
  };
  EXPECT_EQ(ReadAll(indent(log, "  "), Formats()), log);
  EXPECT_EQ(ReadAll(indent(log, "   "), Formats()), log);
  EXPECT_EQ(ReadAll(indent(log, "\t"), Formats()), log);
  // Wrapped at 80 columns, then indented: the same log's lines come back.
  std::string wrapped;
  for (size_t p = 0, q; p < log.size(); p = q + 1) {
    q = log.find('\n', p);
    std::string l = log.substr(p, q - p);
    for (size_t i = 0; i < l.size(); i += 80) wrapped += l.substr(i, 80) + "\n";
    if (l.empty()) wrapped += "\n";
  }
  ASSERT_GT(Lines(wrapped), Lines(log));
  const std::string unwrapped = ReadAll(indent(wrapped, "  "), Formats());
  for (size_t p = 0, q; p < log.size(); p = q + 1) {
    q = log.find('\n', p);
    EXPECT_NE(unwrapped.find(log.substr(p, q - p + 1)), std::string::npos) << log.substr(p, q - p) << "\n" << unwrapped;
  }
  // Frames alone at 2 (an excerpt with no header or exception line) keep it.
  const std::string frames = "  File \"/x/a.py\", line 1, in f\n    g()\n  File \"/x/b.py\", line 2, in g\n    h()\n";
  EXPECT_EQ(ReadAll(frames, Formats()), frames);
  std::string tab = "\t\ta\n";
  StripIndent(&tab, 1, '\t');
  EXPECT_EQ(tab, "\ta\n");
}

// A paste quoted as a block ('> ' before every line, '>' alone on a blank
// one): unquoted before the other transforms (a frame keeps its indentation,
// a line cut before its function is joined).
TEST(Unpaste, BlockQuoteIsRemovedBeforeTheWrapJoin) {
  const std::string in =
      "> Traceback (most recent call last):\n"
      ">   File \"/x/vllm/v1/engine/core.py\", line 305, in\n"
      "> _initialize_kv_caches\n"
      ">\n"
      "> > nested\n";
  std::string out = ReadAll(in, Formats());
  EXPECT_NE(out.find("Traceback (most recent call last):\n  File \"/x/vllm/v1/engine/core.py\", line 305, in _initialize_kv_caches\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("> nested\n"), std::string::npos) << out;  // one level is the paste's, the other the text's
  EXPECT_EQ(Lines(out), Lines(in));
  // A quoted fence is a fence.
  std::string fenced = ReadAll("> ```\n> RuntimeError: boom\n> ```\n", Formats());
  EXPECT_EQ(fenced, "\nRuntimeError: boom\n\n");
  EXPECT_EQ(QuoteDepth("> > x"), 2u);
  EXPECT_EQ(QuoteDepth(">x"), 1u);
  // Megatron prints '> initializing ...' itself; a log with other lines is not a quote.
  const std::string megatron = "> initializing model parallel with size 2\nINFO other line\n";
  EXPECT_EQ(ReadAll(megatron, Formats()), megatron);
}

// A paste quoted with chat/forum quote bars (`▎ ` before each quoted line,
// `▎` alone on a blank one), under a line of the author's own prose: the bars
// go from every line, and the error the author wrapped between words is read
// as vLLM printed it (v1/core/kv_cache_utils.py check_enough_kv_cache_memory).
TEST(Unpaste, QuoteBarsAreRemovedInAPartlyQuotedPaste) {
  const std::string in =
      "On two nodes (TP=2) the server dies at KV-cache init:\n"
      "\xE2\x96\x8E\n"
      "\xE2\x96\x8E ValueError: To serve at least one request with the model's max seq len (131072),\n"
      "\xE2\x96\x8E 16.0 GiB KV cache is needed, which is larger than the available KV cache memory (4.5 GiB).\n"
      "\xE2\x96\x8E Based on the available memory, the estimated maximum model length is 36864.\n";
  std::string out = ReadAll(in, Formats());
  EXPECT_NE(out.find("\n\nValueError: To serve at least one request with the model's max seq len (131072), 16.0 GiB KV cache is "
                     "needed, which is larger than the available KV cache memory (4.5 GiB). Based on the available memory, the "
                     "estimated maximum model length is 36864.\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("\xE2\x96\x8E"), std::string::npos) << out;
  EXPECT_EQ(Lines(out), Lines(in));
  // The same quote pasted again inside a Markdown quote or a code block's indent
  // ('> ▎ ', '    ▎ '): the bars under the block's marks go too.
  for (const char* block : {"> ", "    "}) {
    std::string again;
    for (size_t at = 0; at < in.size();) {
      const size_t nl = in.find('\n', at);
      again += block + in.substr(at, nl + 1 - at);
      at = nl + 1;
    }
    std::string o = ReadAll(again, Formats());
    EXPECT_EQ(o.find("\xE2\x96\x8E"), std::string::npos) << block << "|" << o;
    EXPECT_NE(o.find("\nValueError: To serve at least one request with the model's max seq len (131072), 16.0 GiB"),
              std::string::npos)
        << block << "|" << o;
  }
  // Every bar of the set, nested with a Markdown mark; a vertical bar too.
  EXPECT_EQ(QuoteBarLength("\xE2\x96\x88 x"), 4u);                    // █
  EXPECT_EQ(QuoteBarLength("\xE2\x96\x8F\xE2\x96\x8F x"), 7u);      // ▏▏ (no space between)
  EXPECT_EQ(QuoteBarLength("\xE2\x94\x83 NCCL WARN x"), 4u);           // ┃
  EXPECT_EQ(QuoteBarLength("\xE2\x96\x90 x"), 0u);                    // ▐ (a right half): not a quote bar
  EXPECT_EQ(QuoteDepth("\xE2\x96\x8E > x"), 2u);
  std::string nested = "\xE2\x96\x8E > x";
  StripQuote(&nested, 2);
  EXPECT_EQ(nested, "x");
  // A rich box row (opens and closes with its vertical) is the program's own
  // drawing: kept for the unboxing, which turns it into the frame.
  EXPECT_EQ(QuoteBarLength("\xE2\x94\x82 /x/sglang/srt/managers/scheduler.py:312 in init_memory_pool \xE2\x94\x82"), 0u);
  std::string boxed = ReadAll(
      "\xE2\x95\xAD\xE2\x94\x80 Traceback (most recent call last) \xE2\x94\x80\xE2\x95\xAE\n"
      "\xE2\x94\x82 /x/sglang/srt/managers/scheduler.py:312 in init_memory_pool \xE2\x94\x82\n",
      Formats());
  EXPECT_NE(boxed.find("  File \"/x/sglang/srt/managers/scheduler.py\", line 312, in init_memory_pool\n"), std::string::npos) << boxed;
}

// A one-line error hard-wrapped at 100 columns into three pieces: two lines
// of that width in a short paste are enough to learn it.
TEST(Unpaste, AShortPasteWrappedAtOneWidthIsJoined) {
  const std::string line =
      "ValueError: Free memory on device (0.49/79.32 GiB) on startup is less than desired GPU memory utilization (0.6, "
      "47.59 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";
  std::string in;
  for (size_t p = 0; p < line.size(); p += 100) in += line.substr(p, 100) + "\n";
  ASSERT_EQ(Lines(in), 3u);
  std::string out = ReadAll(in, Formats());
  EXPECT_EQ(out, line + "\n\n\n");
  // Two lines that merely share a length, each followed by a line of its own: kept.
  const std::string two = std::string(70, 'a') + "\nINFO 05-28 14:45:27 [core.py:1] x\n" + std::string(70, 'b') +
                          "\nINFO 05-28 14:45:28 [core.py:1] y\n";
  EXPECT_EQ(ReadAll(two, Formats()), two);
}

// A table a program drew (Triton's model table) has rows of one width by
// construction: they are rows, not a terminal's cuts, and none is joined to
// the next (the table of a short paste read as one line).
TEST(Unpaste, RowsOfADrawnTableAreNotAWrap) {
  const std::string border = "+" + std::string(16, '-') + "+" + std::string(9, '-') + "+" + std::string(70, '-') + "+\n";
  auto row = [](std::string a, std::string b, std::string c) {
    a = " " + a, b = " " + b, c = " " + c;
    a.resize(16, ' '), b.resize(9, ' '), c.resize(70, ' ');
    return "|" + a + "|" + b + "|" + c + "|\n";
  };
  const std::string in = "I0921 14:07:32.611204 1 server.cc:676]\n" + border + row("Model", "Version", "Status") + border +
                         row("preprocessing", "1", "READY") +
                         row("tensorrt_llm", "1", "UNAVAILABLE: Internal: [TensorRT-LLM][ERROR] Assertion failed:") +
                         row("", "", "mpiSize == tp * pp (/app/runtime/worldConfig.cpp:80)") + border;
  EXPECT_EQ(ReadAll(in, Formats()), in);
  EXPECT_TRUE(IsDrawnTableRow(border.substr(0, border.size() - 1)));
  std::string abc = row("a", "b", "c");
  abc.pop_back();
  EXPECT_TRUE(IsDrawnTableRow(abc));
  EXPECT_FALSE(IsDrawnTableRow("| a pipe at the front only"));
  EXPECT_FALSE(IsDrawnTableRow("+ 3 lines changed +"));
}

// One line of an error cut at a width terminals and mailers cut at (80),
// going on in a line with no start of its own: joined even alone in a short
// paste. A line of another length is not taken for a cut.
TEST(Unpaste, AShortPasteWithOneLineCutAtACommonWidthIsJoined) {
  const std::string line =
      "Exception: Capture cuda graph failed: [/x/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.0.2]:1234";
  const std::string in = line.substr(0, 80) + "\n" + line.substr(80) + "\n";
  EXPECT_EQ(ReadAll(in, Formats()), line + "\n\n");
  const std::string odd = line.substr(0, 83) + "\n" + line.substr(83) + "\n";
  EXPECT_EQ(ReadAll(odd, Formats()), odd);
}

// A message its author wrapped between words, quoted with chat bars ('▎ '),
// then cut at 80 columns counting the bars: the cuts go on with no space, the
// author's wraps with one, and the message comes back whole.
TEST(Unpaste, BarQuotedWordWrappedMessageCutAtAWidthIsJoined) {
  const std::string msg[] = {
      "ValueError: To serve at least one request with the model's max seq len (131072),",
      "18.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.75 GiB).",
      "Based on the available memory, the estimated maximum model length is 70976."};
  std::string in = "Our 2-node run died while the KV cache was sized; the launch used the recipe's stock values, nothing else.\n";
  for (const std::string& m : msg) in += "\xE2\x96\x8E " + m + "\n";
  std::string cut;
  for (size_t p = 0, q; p < in.size(); p = q + 1) {
    q = in.find('\n', p);
    std::string l = in.substr(p, q - p);
    // 80 columns: the bar is one column of three bytes.
    size_t cols = 0, start = 0;
    for (size_t i = 0; i < l.size(); ++i) {
      if ((static_cast<unsigned char>(l[i]) & 0xC0) == 0x80) continue;
      if (cols == 80) {
        cut += l.substr(start, i - start) + "\n";
        start = i;
        cols = 0;
      }
      ++cols;
    }
    cut += l.substr(start) + "\n";
  }
  ASSERT_GT(Lines(cut), Lines(in));
  const std::string out = ReadAll(cut, Formats());
  EXPECT_NE(out.find(msg[0] + " " + msg[1] + " " + msg[2]), std::string::npos) << out;
  // The same, quoted again as a Markdown block after it was cut.
  std::string quoted;
  for (size_t p = 0, q; p < cut.size(); p = q + 1) {
    q = cut.find('\n', p);
    quoted += "> " + cut.substr(p, q - p) + "\n";
  }
  const std::string out2 = ReadAll(quoted, Formats());
  EXPECT_NE(out2.find(msg[0] + " " + msg[1] + " " + msg[2]), std::string::npos) << out2;
}

// A whole line, then a line of its own cut at the same width (a Ray worker's
// line whose colour codes lost their ESC on the way): the cut line's first
// piece alone half-matches a pattern, but it goes on in its own pieces, not on
// the line before it.
TEST(Unpaste, ALineCutAtTheWidthIsNotPulledIntoTheLineBefore) {
  const std::string stats =
      "INFO 07-14 09:02:11 metrics.py:341] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1.2 tokens/s, "
      "Running: 2 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.4%, CPU KV cache usage: 0.0%";
  const std::string watchdog =
      " [36m(RayWorkerWrapper pid=7731) [0m [E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=911, OpType=ALLREDUCE, NumelIn=8192, NumelOut=8192, Timeout(ms)=600000) ran for "
      "600412 milliseconds before timing out.";
  std::string cut;
  for (const std::string& l : {stats, stats, watchdog})
    for (size_t i = 0; i < l.size(); i += 100) cut += l.substr(i, 100) + "\n";
  const std::string out = ReadAll(cut, Formats());
  EXPECT_NE(out.find("\n" + watchdog + "\n"), std::string::npos) << out;
}

// A log cut at 136 columns by the terminal it was copied from, then at 100 by
// the window it was pasted through: both widths are learned and each line
// comes back whole (its pieces' numbers kept as empty lines).
TEST(Unpaste, ALogCutAtTwoWidthsIsJoinedAtBoth) {
  std::string log;
  for (int i = 0; i < 6; ++i) {
    log += "(Worker_TP" + std::to_string(i) + " pid=40" + std::to_string(i) +
           ") ERROR 11-02 10:14:0" + std::to_string(i) +
           " [multiproc_executor.py:671] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU " +
           std::to_string(i) + " has a total capacity of 79.19 GiB of which 612.00 MiB is free. Including non-PyTorch "
           "memory, this process has 78.58 GiB memory in use.\n";
  }
  auto cut_at = [](const std::string& text, size_t width) {
    std::string out;
    for (size_t p = 0, q; p < text.size(); p = q + 1) {
      q = text.find('\n', p);
      std::string l = text.substr(p, q - p);
      for (size_t i = 0; i < l.size(); i += width) out += l.substr(i, width) + "\n";
    }
    return out;
  };
  const std::string twice = cut_at(cut_at(log, 136), 100);
  ASSERT_GT(Lines(twice), Lines(cut_at(log, 136)));
  const std::string out = ReadAll(twice, Formats());
  for (size_t p = 0, q; p < log.size(); p = q + 1) {
    q = log.find('\n', p);
    EXPECT_NE(out.find(log.substr(p, q - p + 1)), std::string::npos) << log.substr(p, q - p) << "\n" << out;
  }
}

// An excerpt pasted twice (the same run shown two ways) holds each cut line
// twice: two different lines of the width, four in all, still teach it.
TEST(Unpaste, RepeatedCutLinesTeachTheWidth) {
  const std::string a = "nThread 1 nGpus 4 minBytes 8 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 check: 1";
  const std::string b = "Cuda failure common.cu:1012 'CUDA driver version is insufficient for CUDA runtime version'";
  std::string in;
  for (int i = 0; i < 2; ++i) in += a.substr(0, 80) + "\n" + a.substr(80) + "\n" + b.substr(0, 80) + "\n" + b.substr(80) + "\n";
  for (int i = 0; i < 20; ++i) in += "|   " + std::to_string(i % 4) + "  Tesla V100-SXM2...  Off  | 0000000" + std::to_string(i % 4) + ":06:00.0 Off |\n";
  const std::string out = ReadAll(in, Formats());
  EXPECT_NE(out.find(b + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find(a + "\n"), std::string::npos) << out;
}

// NCCL's `host:pid:tid [dev]` cut inside the host name: the rest of the line
// reads as a start of its own (`1f0e:812:812 [0] NCCL INFO`), but also with the
// cut line's last word before it, so it goes on the cut line.
TEST(Unpaste, NcclLineCutInsideItsHostNameIsJoined) {
  std::string log;
  for (int i = 0; i < 4; ++i)
    log += "(RayWorker pid=812) ip-10-0-0-12-gpu-node-0c41f0e:812:812 [" + std::to_string(i) +
           "] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ^lo,docker\n";
  std::string wrapped;
  for (size_t p = 0, q; p < log.size(); p = q + 1) {
    q = log.find('\n', p);
    std::string l = log.substr(p, q - p);
    for (size_t i = 0; i < l.size(); i += 40) wrapped += l.substr(i, 40) + "\n";
  }
  const std::string out = ReadAll(wrapped, Formats());
  EXPECT_NE(out.find(log.substr(0, log.find('\n') + 1)), std::string::npos) << out;
}

TEST(Unpaste, WordWrapJoinedOnlyWhenAPatternMatchesBetter) {
  std::string in =
      "[2025-06-10 10:01:11 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16,\n"
      "avail mem=45.63 GB, mem usage=32.87 GB.\n"
      "[2025-06-10 10:01:12 TP0] next\n";
  std::string out = ReadAll(in, Formats());
  EXPECT_EQ(out,
            "[2025-06-10 10:01:11 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=45.63 GB, "
            "mem usage=32.87 GB.\n\n[2025-06-10 10:01:12 TP0] next\n");
  // A complete line followed by a line of its own: untouched.
  std::string two =
      "INFO:     Application startup complete. The server is ready for requests now.\n"
      "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use\n";
  EXPECT_EQ(ReadAll(two, Formats()), two);
}

// A log whose few long lines were cut at a width it shows too few times to
// learn: a word cut in two at the error ('an illega' + 'l memory access') is
// joined with no space when that makes the pattern match; other lines stay.
TEST(Unpaste, AWordCutByAnUnlearnedWidthIsJoinedWhereAPatternMatches) {
  std::string in;
  for (int i = 0; i < 24; ++i) in += "(Worker_TP0 pid=126) INFO 04-17 06:11:" + std::to_string(10 + i) + " [gpu_model_runner.py:2301] step\n";
  in +=
      "(Worker_TP0 pid=126) ERROR [multiproc_executor.py:949] torch.AcceleratorError: CUDA error: an illega\n"
      "l memory access was encount\n"
      "(Worker_TP0 pid=126) ERROR [multiproc_executor.py:949] Search for `cudaErrorIllegalAddress'\n";
  const std::string out = ReadAll(in, Formats());
  EXPECT_NE(out.find("CUDA error: an illegal memory access was encount\n"), std::string::npos) << out;
  EXPECT_NE(out.find("] step\n(Worker_TP0"), std::string::npos) << out;
  // Two lines that only happen to spell a literal with no space stay apart when
  // the second starts a line of its own.
  std::string own = in.substr(0, in.find("(Worker_TP0 pid=126) ERROR")) +
                    "(Worker_TP0 pid=126) INFO 04-17 06:12:14 [core.py:1] the engine ran out of m\n"
                    "(Worker_TP0 pid=126) INFO 04-17 06:12:14 [core.py:1] emory checks passed\n";
  EXPECT_EQ(ReadAll(own, Formats()), own);
}

TEST(Unpaste, FrameCutBeforeItsFunction) {
  std::string in =
      "Traceback (most recent call last):\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line 300, in\n"
      "init_memory_pool\n"
      "    raise RuntimeError(\n"
      "RuntimeError: x\n";
  std::string out = ReadAll(in, Formats());
  EXPECT_NE(out.find("line 300, in init_memory_pool\n\n"), std::string::npos) << out;
  // Cut inside the name (a hard wrap at 100 columns): the lower-case tail joins.
  out = ReadAll(
      "Traceback (most recent call last):\n"
      "  File \"/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/tokenizer_manager.py\", line 418, in c\n"
      "reate_handle\n"
      "    self.loop.run_forever()\n"
      "OSError: [Errno 12] Cannot allocate memory\n",
      Formats());
  EXPECT_NE(out.find("line 418, in create_handle\n\n    self.loop"), std::string::npos) << out;
  // An exception named alone after a frame whose source was not shown stays its own line.
  out = ReadAll(
      "Traceback (most recent call last):\n"
      "  File \"/opt/app/serve.py\", line 12, in main\n"
      "KeyboardInterrupt\n",
      Formats());
  EXPECT_NE(out.find("in main\nKeyboardInterrupt\n"), std::string::npos) << out;
}

TEST(Unpaste, CutLastLineStaysUnterminated) {
  EXPECT_EQ(ReadAll("a\nb", nullptr), "a\nb");
  EXPECT_EQ(ReadAll("", nullptr), "");
}

}  // namespace
}  // namespace tpt

namespace tpt {
namespace {
// A cut last line: a value that runs into the end inside an unclosed
// parenthesis is dropped (never evidence); a complete last line stays.
TEST(Unpaste, CutLastLineDropsAPartialValue) {
  EXPECT_EQ(ReadAll("x\n[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=40", nullptr),
            "x\n[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=");
  EXPECT_EQ(ReadAll("x\nWorkNCCL(SeqNum=4021, OpType=ALLRED", nullptr), "x\nWorkNCCL(SeqNum=4021, OpType=");
  // A pasted excerpt cut mid-value keeps a newline after the cut: still partial.
  EXPECT_EQ(ReadAll("x\nWorkNCCL(SeqNum=4021, OpType=ALLR\n", nullptr), "x\nWorkNCCL(SeqNum=4021, OpType=\n");
  EXPECT_EQ(ReadAll("WorkNCCL(SeqNum=4021, OpType=ALLR\nnext line\n", nullptr),
            "WorkNCCL(SeqNum=4021, OpType=ALLR\nnext line\n");  // not the last line: left alone
  EXPECT_EQ(ReadAll("x\nChild process unexpectedly failed with an exit code 9. pid=4121", nullptr),
            "x\nChild process unexpectedly failed with an exit code 9. pid=4121");
  // Quoted or indented as a block, the paste's own last line is '> ' or
  // blank: the line before it is still the last, and still cut.
  const std::string quoted = "> a\n> WorkNCCL(SeqNum=4021, OpType=ALLR\n> ";
  EXPECT_EQ(ReadAll(quoted, Formats()), "a\nWorkNCCL(SeqNum=4021, OpType=\n");
  const std::string indented = "    a\n    WorkNCCL(SeqNum=4021, OpType=ALLR\n    ";
  EXPECT_EQ(ReadAll(indented, Formats()), "a\nWorkNCCL(SeqNum=4021, OpType=\n");
}
}  // namespace
}  // namespace tpt

namespace tpt {
namespace {
// A terminal's wrap is rejoined only up to 16 KiB a line: a 40,000-byte line
// cut at 400 columns comes back as pieces of at most 16 KiB (+ one width), so a
// hostile paste cannot make one joined line of unbounded size. Line numbers stay.
TEST(Unpaste, TerminalJoinStopsAt16KiB) {
  std::string logical = "[2025-06-10 10:01:11 TP0] RuntimeError: ";
  for (int i = 0; logical.size() < 40000; ++i) logical += "word" + std::to_string(100000 + i) + " ";
  logical.resize(40000);
  std::string in;
  for (size_t p = 0; p < logical.size(); p += 400) in += logical.substr(p, 400) + "\n";
  in += "end\n";
  std::string out = ReadAll(in, Formats(), 4096);
  EXPECT_EQ(Lines(out), Lines(in));
  size_t longest = 0;
  for (size_t p = 0, nl; p < out.size(); p = nl + 1) {
    nl = out.find('\n', p);
    if (nl == std::string::npos) nl = out.size();
    longest = std::max(longest, nl - p);
  }
  EXPECT_GE(longest, size_t{16} << 10) << "the wrapped pieces were not rejoined";
  EXPECT_LE(longest, (size_t{16} << 10) + 400) << "a joined line past the 16 KiB cap";
  std::string no_newlines;
  for (char c : out)
    if (c != '\n') no_newlines += c;
  EXPECT_EQ(no_newlines, logical + "end") << "the join must keep every byte, in order";
}
}  // namespace
}  // namespace tpt

namespace tpt {
namespace {
// The source blanks a paste's fence and elision lines (they keep their line
// numbers) and leaves a line that only mentions dots or backticks alone.
// A Kubernetes log viewer's export follows each record with a line of its own
// (the date and time of the viewer's clock, the pod's name): blanked once they
// are a third of the lines, so a traceback they split reads as printed (line
// numbers kept); the same line alone in a log stays.
TEST(Unpaste, LogViewerPodLinesAfterEachRecordAreBlanked) {
  EXPECT_TRUE(IsViewerRecordLine("2026-05-02 09:12:44  infer-7c9d-worker-1  "));
  EXPECT_TRUE(IsViewerRecordLine("2026-05-02T09:12:44.120  gateway_0"));
  EXPECT_FALSE(IsViewerRecordLine("2026-05-02 09:12:44  Loading weights took 3.1 s"));
  EXPECT_FALSE(IsViewerRecordLine("2026-05-02 09:12:44 infer-7c9d-worker-1"));  // one space: a log's own line
  const std::string pod = "2026-05-02 09:12:44  infer-7c9d-worker-1  \n";
  const std::string log =
      "[2026-05-02 01:12:40 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/sgl/python/sglang/srt/managers/scheduler.py\", line 2410, in run_scheduler_process\n"
      "    scheduler = Scheduler(\n"
      "  File \"/sgl/python/sglang/srt/model_executor/model_runner.py\", line 1702, in init_memory_pool\n"
      "    self.req_to_token_pool = ReqToTokenPool(\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  std::string exported, blanked;
  for (size_t p = 0, q; p < log.size(); p = q + 1) {
    q = log.find('\n', p);
    exported += log.substr(p, q - p + 1) + pod;
    blanked += log.substr(p, q - p + 1) + "\n";
  }
  EXPECT_EQ(ReadAll(exported, Formats()), blanked);
  const std::string one = "2026-05-02 09:12:44  infer-7c9d-worker-1\nINFO started\nINFO ready\nINFO serving\n";
  EXPECT_EQ(ReadAll(one, Formats()), one);
}

TEST(Unpaste, GluedRecordsAreFoundByTheirProcessPrefixes) {
  std::vector<size_t> cuts;
  EXPECT_TRUE(GluedRecords("(APIServer pid=29) a(APIServer pid=29) b(EngineCore_DP0 pid=7) c", &cuts));
  EXPECT_EQ(cuts, (std::vector<size_t>{20, 40}));
  EXPECT_TRUE(GluedRecords("x(pid=12) y(RayWorkerWrapper pid=13, ip=10.0.0.2) z", &cuts));
  EXPECT_EQ(cuts, (std::vector<size_t>{1, 11}));
  EXPECT_TRUE(GluedRecords("(prefill_worker pid=3) a(VllmWorker TP0 pid=9) b", &cuts));
  EXPECT_EQ(cuts, (std::vector<size_t>{24}));
  EXPECT_TRUE(GluedRecords("INFO x(VllmWorker rank=0 pid=812) INFO y(VllmWorker rank=1 pid=813) ERROR z", &cuts));
  EXPECT_EQ(cuts, (std::vector<size_t>{6, 40}));
  // One prefix, at the start or after a compose service's bar: a record as printed.
  EXPECT_FALSE(GluedRecords("(APIServer pid=29) INFO 10-02 09:00:01 [api_server.py:1805] vLLM API server", &cuts));
  EXPECT_FALSE(GluedRecords("vllm-1  | (APIServer pid=1) INFO 10-02 09:00:01 started", &cuts));
  // Not a prefix: a pid in a message, a name that is not one, no closing parenthesis.
  EXPECT_FALSE(GluedRecords("Killed process (pid=12) and (pid=13", &cuts));
  EXPECT_FALSE(GluedRecords("worker (rank 0, pid=12) and (rank 1, pid=13)", &cuts));
  EXPECT_FALSE(GluedRecords("(1 pid=2) (3 pid=4)", &cuts));
}

TEST(Unpaste, GluedRecordsAreCutIntoTheirLines) {
  const std::string glued =
      "(APIServer pid=2960) Traceback (most recent call last):(APIServer pid=2960)   File \"/v/vllm/cli/main.py\", "
      "line 73, in main(APIServer pid=2960)     args.dispatch_function(args)(APIServer pid=2960)(APIServer pid=2960) "
      "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error.\nnext line\n";
  const std::string lines =
      "(APIServer pid=2960) Traceback (most recent call last):\n(APIServer pid=2960)   File \"/v/vllm/cli/main.py\", "
      "line 73, in main\n(APIServer pid=2960)     args.dispatch_function(args)\n(APIServer pid=2960)\n(APIServer pid=2960) "
      "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error.\nnext line\n";
  EXPECT_EQ(ReadAll(glued, nullptr), lines);
  EXPECT_EQ(ReadAll(glued, Formats()), lines);
  EXPECT_EQ(ReadAll("> " + glued.substr(0, glued.find('\n')) + "\n> next line\n", nullptr), lines);  // quoted, then cut
  // Past the bytes learned from (1 MiB), a glued line is cut too once the
  // paste has shown one; a log that shows none is read untouched.
  std::string filler;
  for (int i = 0; filler.size() < (1u << 20) + (256u << 10); ++i)
    filler += "(APIServer pid=1) INFO 10-02 09:00:01 [loader.py:12] shard " + std::to_string(i) + " loaded\n";
  std::string got = ReadAll(glued + filler + glued, Formats(), 65536);
  EXPECT_TRUE(got == lines + filler + lines) << got.size() << " bytes, not " << (lines + filler + lines).size();
  got = ReadAll(filler + glued, Formats(), 65536);
  {
    const std::string want = filler + glued;
    size_t d = 0;
    while (d < got.size() && d < want.size() && got[d] == want[d]) ++d;
    EXPECT_TRUE(got == want) << got.size() << " bytes, not " << want.size() << "; from byte " << d << ": "
                             << got.substr(d > 40 ? d - 40 : 0, 160);
  }
}

TEST(Unpaste, FenceAndElisionLinesComeOutBlank) {
  const std::string in = "```text\n[2025-06-10 10:01:11 TP0] Loading...\n....\n[...]\n  ```\n`a` and ```b```\nend\n";
  EXPECT_EQ(ReadAll(in, nullptr), "\n[2025-06-10 10:01:11 TP0] Loading...\n\n\n\n`a` and ```b```\nend\n");
  EXPECT_EQ(ReadAll(in, Formats()), "\n[2025-06-10 10:01:11 TP0] Loading...\n\n\n\n`a` and ```b```\nend\n");
}

// A Markdown table row around an exception line (UnwrapTableErrorCell).
std::string Unwrapped(std::string line) {
  UnwrapTableErrorCell(&line);
  return line;
}

TEST(UnpasteTable, TheCellThatHoldsAnExceptionLineIsTheLine) {
  // A results table in an issue: the second cell quotes the error in a code
  // span and comments after it; the cell stays as written (a quotation).
  EXPECT_EQ(Unwrapped("| trtllm (`prefill=trtllm, decode=trtllm`) | `tvm.error.InternalError: Error in function "
                      "'TllmGenFmhaRunner' at .../fmhaRunner.cuh:37: Unsupported architecture` (raised from "
                      "`_forward_trtllm`) |"),
            "`tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at .../fmhaRunner.cuh:37: Unsupported "
            "architecture` (raised from `_forward_trtllm`)");
  // Without backticks, indented, and an escaped bar inside the message.
  EXPECT_EQ(Unwrapped("  | fp8 KV | RuntimeError: shapes a \\| b differ |"), "RuntimeError: shapes a | b differ");
  // The first cell that holds one wins.
  EXPECT_EQ(Unwrapped("| x | `ValueError: one` | `KeyError: 'two'` |"), "`ValueError: one`");
  EXPECT_EQ(Unwrapped("| torch.OutOfMemoryError: CUDA out of memory. |"), "torch.OutOfMemoryError: CUDA out of memory.");
}

TEST(UnpasteTable, OtherRowsStay) {
  ExpectKept(UnwrapTableErrorCell,
             {"| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |",
              "| backend | result on SM121 |",
              "|---|---|",
              "| `--tp 8` | works |",
              "| `ErrorCode: 3` | a field, not an exception |",
              "| RuntimeErrors seen: 3 | none |",
              "| 0  NVIDIA H100 80GB HBM3   On | 00000000:18:00.0 Off |   0 |",
              "| x | Error: no type before the colon |",
              "RuntimeError: not a row",
              "| ValueError: a row that is not closed"});
}

// Through the paste layer: the row becomes its exception cell, on the row's
// line; the lines around it stay, one for one. A cell without a span is the
// bare exception line; a span is kept (StripCodeSpan does not take it: it is a
// quotation in a table, rules/prose.cc decides), in a '> ' quote too.
TEST(UnpasteTable, TheRowIsReadAsItsException) {
  const std::string in =
      "| backend | result |\n"
      "|---|---|\n"
      "| fa3 | RuntimeError: CUDA error: no kernel image is available for execution on the device |\n"
      "| fa2 | `ValueError: head_size 576 not supported` (at warm-up) |\n"
      "next line\n";
  const std::string out =
      "| backend | result |\n|---|---|\nRuntimeError: CUDA error: no kernel image is available for execution on the "
      "device\n`ValueError: head_size 576 not supported` (at warm-up)\nnext line\n";
  for (const FormatSet* formats : {static_cast<const FormatSet*>(nullptr), Formats()}) {
    EXPECT_EQ(ReadAll(in, formats), out) << (formats ? "with" : "without") << " the formats";
  }
  EXPECT_EQ(ReadAll("> | x | `ValueError: quoted` |\n> next\n", Formats()), "`ValueError: quoted`\nnext\n");
}

// The row cut at 100 columns (two pieces of the width, then the rest): the
// terminal-width join makes it whole, and its exception cell is the line.
TEST(UnpasteTable, ARowCutAtAWidthIsJoinedThenUnwrapped) {
  const std::string row =
      "| default (`prefill=trtllm, decode=trtllm`) | RuntimeError: Error in function 'TllmGenFmhaRunner' at "
      ".../include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture, from "
      "trtllm_batch_decode_with_kv_cache_mla |";
  std::string in;
  for (size_t p = 0; p < row.size(); p += 100) in += row.substr(p, 100) + "\n";
  ASSERT_EQ(Lines(in), 3u);
  EXPECT_EQ(ReadAll(in, Formats()),
            "RuntimeError: Error in function 'TllmGenFmhaRunner' at .../include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: "
            "Unsupported architecture, from trtllm_batch_decode_with_kv_cache_mla\n\n\n");
}
}  // namespace
}  // namespace tpt
