#include "parser/values.h"

#include <gtest/gtest.h>

namespace tpt {
namespace {

TEST(ConvertField, BytesUnits) {
  EXPECT_DOUBLE_EQ(ConvertField("21.70", "bytes", "GB_as_GiB", false)->get<double>(), 21.70 * (1ULL << 30));
  EXPECT_DOUBLE_EQ(ConvertField("2", "bytes", "GB", false)->get<double>(), 2e9);
  EXPECT_DOUBLE_EQ(ConvertField("1.5", "bytes", "MiB", false)->get<double>(), 1.5 * (1 << 20));
  EXPECT_FALSE(ConvertField("abc", "bytes", "GiB", false).ok());
  EXPECT_FALSE(ConvertField("1", "bytes", "parsecs", false).ok());
}

TEST(ConvertField, OtherTypes) {
  EXPECT_EQ(ConvertField("42", "int", "", false)->get<int64_t>(), 42);
  EXPECT_EQ(ConvertField("1,024", "int", "", false)->get<int64_t>(), 1024);
  EXPECT_DOUBLE_EQ(ConvertField("85.5%", "fraction", "", false)->get<double>(), 0.855);
  EXPECT_DOUBLE_EQ(ConvertField("90", "fraction", "", true)->get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(ConvertField("0.9", "fraction", "", false)->get<double>(), 0.9);
  EXPECT_EQ(ConvertField("True", "bool", "", false)->get<bool>(), true);
  EXPECT_DOUBLE_EQ(ConvertField("1500", "seconds", "ms", false)->get<double>(), 1.5);
  EXPECT_EQ(ConvertField("[1, 2, 4, 8]", "list", "", false)->dump(), "[1,2,4,8]");
  EXPECT_FALSE(ConvertField("x", "int", "", false).ok());
  EXPECT_FALSE(ConvertField("1", "color", "", false).ok());
}

TEST(ParseTimestamp, Formats) {
  auto t = ParseTimestamp("2025-10-14T10:00:01.5Z");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->value, 1760436001.5);
  EXPECT_FALSE(t->time_of_day);
  EXPECT_DOUBLE_EQ(ParseTimestamp("2025-10-14 10:00:01,250")->value, 1760436001.25);
  EXPECT_DOUBLE_EQ(ParseTimestamp("2025-10-14T12:00:01+02:00")->value, 1760436001);
  auto tod = ParseTimestamp("10:00:01.5");
  ASSERT_TRUE(tod);
  EXPECT_TRUE(tod->time_of_day);
  EXPECT_DOUBLE_EQ(tod->value, 36001.5);
  EXPECT_TRUE(ParseTimestamp("Nov 29 08:31:24")->time_of_day);
  EXPECT_FALSE(ParseTimestamp("yesterday"));
  EXPECT_FALSE(ParseTimestamp("2025-13-40 10:00:00"));
}

TEST(ParsePythonKv, ServerArgsRepr) {
  auto j = ParsePythonKv(
      "ServerArgs(model_path='Qwen/QwQ-32B', tp_size=4, mem_fraction_static=0.88, cuda_graph_bs=[1, 2, 4], "
      "disable_custom_all_reduce=False, kv_cache_dtype='auto', json_model_override_args='{}', chunked_prefill_size=None, "
      "lora_paths=None, dtype=torch.bfloat16)");
  EXPECT_EQ(j["model_path"], "Qwen/QwQ-32B");
  EXPECT_EQ(j["tp_size"], 4);
  EXPECT_DOUBLE_EQ(j["mem_fraction_static"].get<double>(), 0.88);
  EXPECT_EQ(j["cuda_graph_bs"].dump(), "[1,2,4]");
  EXPECT_EQ(j["disable_custom_all_reduce"], false);
  EXPECT_TRUE(j["chunked_prefill_size"].is_null());
  EXPECT_EQ(j["json_model_override_args"], "{}");
  EXPECT_EQ(j["dtype"], "torch.bfloat16");
  nlohmann::json fields = nlohmann::json::object();
  CopyKnownServerArgs(j, &fields);
  EXPECT_EQ(fields["model"], "Qwen/QwQ-32B");
  EXPECT_EQ(fields["tp_size"], 4);
  EXPECT_FALSE(fields.contains("chunked_prefill_size"));  // None is not a value
}

TEST(ParsePythonKv, VllmDictAndAbbreviated) {
  auto j = ParsePythonKv("{'model': 'meta-llama/Llama-3-8B', 'tensor_parallel_size': 2, 'enforce_eager': True}");
  EXPECT_EQ(j["model"], "meta-llama/Llama-3-8B");
  nlohmann::json fields = nlohmann::json::object();
  CopyKnownServerArgs(j, &fields);
  EXPECT_EQ(fields["tp_size"], 2);
  EXPECT_EQ(fields["enforce_eager"], true);
  // Pasted abbreviated and cut mid-value: the complete pairs survive.
  auto cut = ParsePythonKv("ServerArgs(tp_size=2, ..., dp_size=1, model_path='abc");
  EXPECT_EQ(cut["tp_size"], 2);
  EXPECT_EQ(cut["dp_size"], 1);
  EXPECT_FALSE(cut.contains("model_path"));
}

// Regression: vllm.json captures the dict after its "{", so the repr starts
// with a quoted key; it parsed to {} and gpu_memory_utilization was lost.
TEST(ParsePythonKv, DictWithoutOpeningBrace) {
  auto j = ParsePythonKv("'model': '/m', 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.95}");
  EXPECT_EQ(j["model"], "/m");
  EXPECT_EQ(j["tensor_parallel_size"], 2);
  EXPECT_DOUBLE_EQ(j["gpu_memory_utilization"].get<double>(), 0.95);
  // A quoted string that is no key stays a non-pair.
  EXPECT_TRUE(ParsePythonKv("'just text'").empty());
}

TEST(Text, StripAnsiAndUtf8) {
  std::string s = "\x1b[1;31mERROR\x1b[0m CUDA out of memory";
  EXPECT_TRUE(StripAnsi(&s));
  EXPECT_EQ(s, "ERROR CUDA out of memory");
  EXPECT_EQ(SanitizeUtf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(SanitizeUtf8("µs 【x】"), "µs 【x】");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xc3")));   // cut sequence
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xed\xa0\x80")));  // surrogate
}

}  // namespace
}  // namespace tpt

namespace tpt {
namespace {

// Fuzzer find: a list element that consumes nothing ("[)") looped forever.
TEST(ParsePythonKv, MalformedListsTerminate) {
  EXPECT_TRUE(ParsePythonKv("a=[)").is_object());
  EXPECT_TRUE(ParsePythonKv("a=[1 2], b=3").is_object());
  EXPECT_TRUE(ParsePythonKv("{a: )").is_object());
  EXPECT_EQ(ParsePythonKv("a=[1, [2, 3]], b=4")["b"], 4);
}

}  // namespace
}  // namespace tpt

#include <charconv>
#include <cstring>
#include <random>

namespace tpt {
namespace {

TEST(ParseTimestamp, CachedTextsGiveTheirOwnValues) {
  // The last text parsed is remembered: a change of any byte, of the date
  // in particular, must still be parsed afresh.
  auto a = ParseTimestamp("2025-10-14 23:59:59");
  auto b = ParseTimestamp("2025-10-14 23:59:59");
  auto c = ParseTimestamp("2025-10-15 00:00:00");
  ASSERT_TRUE(a && b && c);
  EXPECT_DOUBLE_EQ(a->value, 1760486399);
  EXPECT_EQ(a->value, b->value);
  EXPECT_DOUBLE_EQ(c->value - a->value, 1);
  // An invalid text, then one of the same length that is valid, and back.
  EXPECT_FALSE(ParseTimestamp("2025-13-40 10:00:00"));
  EXPECT_DOUBLE_EQ(ParseTimestamp("2025-10-14 10:00:00")->value, 1760436000);
  EXPECT_FALSE(ParseTimestamp("2025-13-40 10:00:00"));
  // A time of day after an absolute time with the same clock.
  auto tod = ParseTimestamp("10:00:00");
  ASSERT_TRUE(tod);
  EXPECT_TRUE(tod->time_of_day);
  EXPECT_DOUBLE_EQ(tod->value, 36000);
  EXPECT_FALSE(ParseTimestamp("2025-10-14 10:00:00")->time_of_day);
  // Two producers' stamps alternating, then a third.
  for (int i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(ParseTimestamp("2025-10-14 10:00:00")->value, 1760436000);
    EXPECT_DOUBLE_EQ(ParseTimestamp("10:00:01")->value, 36001);
  }
  EXPECT_DOUBLE_EQ(ParseTimestamp("2025-10-14 10:00:02")->value, 1760436002);
  EXPECT_DOUBLE_EQ(ParseTimestamp("10:00:01")->value, 36001);
  EXPECT_DOUBLE_EQ(ParseTimestamp("2025-10-14 10:00:00")->value, 1760436000);
}

TEST(Text, Utf8CheckFindsABadByteAnywhere) {
  // The check reads 8 bytes at a time: a bad byte at every place of a line
  // of every length up to 80 must be seen.
  for (size_t n = 1; n <= 80; ++n) {
    std::string line(n, 'a');
    EXPECT_TRUE(IsValidUtf8(line));
    for (size_t i = 0; i < n; ++i) {
      line[i] = '\xff';
      EXPECT_FALSE(IsValidUtf8(line)) << n << " " << i;
      if (i + 1 < n) {
        line[i] = '\xc3';  // a valid two-byte sequence: e-acute
        line[i + 1] = '\xa9';
        EXPECT_TRUE(IsValidUtf8(line)) << n << " " << i;
        line[i + 1] = 'a';
      }
      line[i] = 'a';
    }
  }
}

TEST(ParseDate, CachedDatesGiveTheirOwnValues) {
  EXPECT_DOUBLE_EQ(*ParseDate("2025-10-14"), 1760400000);
  EXPECT_DOUBLE_EQ(*ParseDate("2025-10-15"), 1760486400);
  EXPECT_DOUBLE_EQ(*ParseDate("2025-10-15 10:00:00"), 1760486400);  // the first 10 bytes
  EXPECT_FALSE(ParseDate("2025-13-15"));
  EXPECT_DOUBLE_EQ(*ParseDate("2025-10-15"), 1760486400);
  EXPECT_FALSE(ParseDate("2025-10"));
  EXPECT_DOUBLE_EQ(*ParseDate("2024/02/29"), 1709164800);
}

TEST(ParsePlainNumbers, SameValueAsFromChars) {
  std::mt19937_64 rng(7);
  auto check_decimal = [](const std::string& s) {
    double want = 0, got = -1;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), want);
    ASSERT_TRUE(ec == std::errc() && p == s.data() + s.size()) << s;
    ASSERT_TRUE(ParsePlainDecimal(s, &got)) << s;
    EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << s << ": " << want << " vs " << got;
  };
  for (int i = 0; i < 200000; ++i) {
    int digits = 1 + static_cast<int>(rng() % 15);
    std::string s;
    for (int k = 0; k < digits; ++k) s.push_back(static_cast<char>('0' + rng() % 10));
    if (digits > 1 && rng() % 4 != 0) s.insert(1 + rng() % (digits - 1), ".");
    check_decimal(s);
  }
  for (const char* s : {"0", "0.0", "00.10", "1670.84", "0.64", "999999999999999", "0.00000000000001",
                        "900719925474.993", "123456789012.345"}) {
    check_decimal(s);
  }
  for (int i = 0; i < 100000; ++i) {
    std::string s = std::to_string(rng() % 1000000000000000000ULL);
    int64_t want = 0, got = -1;
    std::from_chars(s.data(), s.data() + s.size(), want);
    ASSERT_TRUE(ParsePlainInt(s, &got)) << s;
    EXPECT_EQ(got, want) << s;
  }
  int64_t n = 0;
  double d = 0;
  EXPECT_TRUE(ParsePlainInt("007", &n));
  EXPECT_EQ(n, 7);
  // Not the plain shape: left to from_chars / ConvertField, nothing written.
  for (const char* s : {"", "-1", "+1", "1,024", "1e5", " 1", "1 ", "0x10", "1234567890123456789"}) {
    n = -5;
    EXPECT_FALSE(ParsePlainInt(s, &n)) << s;
    EXPECT_EQ(n, -5);
  }
  for (const char* s : {"", ".5", "1.", "1.2.3", "-0.5", "1e5", "nan", "1234567890123456", "0.000000000000001",
                        "1.5%"}) {
    d = -5;
    EXPECT_FALSE(ParsePlainDecimal(s, &d)) << s;
    EXPECT_EQ(d, -5);
  }
}

// IsPlainLine flags '\r', ESC and any byte >= 0x80 wherever it sits: in each
// 16-byte step, in the overlapping last bytes, in short lines.
TEST(Values, PlainLineIsFlaggedAtEveryPosition) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string line(n, 'a');
    EXPECT_TRUE(IsPlainLine(line)) << n;
    for (size_t at = 0; at < n; ++at) {
      for (char c : {'\r', '\x1b', '\x80', '\xc3', '\xff'}) {
        std::string bad = line;
        bad[at] = c;
        EXPECT_FALSE(IsPlainLine(bad)) << n << " " << at << " " << int(static_cast<unsigned char>(c));
      }
      for (char c : {'\n', '\t', '\x7f', '\x1a', '\x0e', '\0'}) {
        std::string ok = line;
        ok[at] = c;
        EXPECT_TRUE(IsPlainLine(ok)) << n << " " << at << " " << int(static_cast<unsigned char>(c));
      }
    }
  }
}

// IsValidUtf8's short-text shortcut (8 to 16 bytes, two loads) still sees a
// bad byte at any position.
TEST(Values, ShortTextsWithABadByteAnywhereAreNotValidUtf8) {
  for (size_t n = 1; n <= 24; ++n) {
    std::string text(n, '7');
    EXPECT_TRUE(IsValidUtf8(text)) << n;
    for (size_t at = 0; at < n; ++at) {
      for (char c : {'\x80', '\xbf', '\xc3', '\xff'}) {
        std::string bad = text;
        bad[at] = c;
        EXPECT_FALSE(IsValidUtf8(bad)) << n << " " << at;
      }
      if (at + 2 <= n) {
        std::string ok = text;
        ok.replace(at, 2, "\xc3\xa9");  // é
        EXPECT_TRUE(IsValidUtf8(ok)) << n << " " << at;
      }
    }
  }
}

}  // namespace
}  // namespace tpt

namespace tpt {
namespace {

// The two-part form answers as the joined text does, whatever the last
// stamps kept on this thread (it reads them, and fills them on a miss).
TEST(ParseTimestamp, DateAndTimeGiveWhatTheJoinedTextGives) {
  const std::vector<std::pair<std::string, std::string>> parts = {
      {"2025-10-14", "10:00:01"},     {"2025-10-14", "10:00:01.5"}, {"2025-10-14", "10:00:02"},
      {"2025/10/14", "10:00:01"},     {"2025-10-1", "10:00:01"},    {"2025-10-14", "1:00:01"},
      {"2025-10-14", "10:00:01,250"}, {"garbage", "10:00:01"},      {"2025-10-14", std::string(70, '1')},
  };
  for (int round = 0; round < 3; ++round) {
    for (const auto& [date, time] : parts) {
      std::string text = date;
      text.append(1, ' ').append(time);
      std::optional<Timestamp> joined = ParseTimestamp(text);
      std::optional<Timestamp> split = ParseTimestamp(date, time);
      ASSERT_EQ(joined.has_value(), split.has_value()) << date << " | " << time;
      if (joined) {
        EXPECT_DOUBLE_EQ(joined->value, split->value) << date << " | " << time;
        EXPECT_EQ(joined->time_of_day, split->time_of_day);
      }
      // And the other order: the split form first, on a fresh pair of stamps.
      split = ParseTimestamp(date, time);
      EXPECT_EQ(split.has_value(), joined.has_value());
    }
  }
  // A kept "2025-10-14 10:00:01" must not answer for a date and time that
  // join to other text of the same length.
  ASSERT_TRUE(ParseTimestamp("2025-10-14 10:00:01"));
  auto other = ParseTimestamp("2025-10-14 1", "0:00:01");  // "2025-10-14 1 0:00:01"
  auto other_joined = ParseTimestamp("2025-10-14 1 0:00:01");
  EXPECT_EQ(other.has_value(), other_joined.has_value());
}

}  // namespace
}  // namespace tpt
