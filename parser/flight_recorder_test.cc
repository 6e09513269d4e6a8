// flight_recorder_test.cc: PyTorch flight-recorder dumps as events, detected by
// content, read beside the logs as a peer input.
#include "parser/flight_recorder.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "parser/test_files.h"

#include "parser/format_set.h"
#include "parser/parser.h"
#include "parser/pickle_reader.h"

namespace tpt {
namespace {

namespace fs = std::filesystem;

std::string Path(const std::string& rel) { return std::string(TPT_SOURCE_DIR) + "/samples/rules/" + rel; }

std::vector<const Event*> OfKind(const std::vector<Event>& events, const std::string& kind) {
  std::vector<const Event*> out;
  for (const Event& e : events)
    if (e.kind == kind) out.push_back(&e);
  return out;
}

TEST(FlightRecorder, DetectedByContentNotName) {
  EXPECT_TRUE(LooksLikeFlightRecorder(SourceFile(Path("fr_hang_wavefront/pos_hang_2ranks_pickle/nccl_trace_rank_0"))));
  EXPECT_TRUE(LooksLikeFlightRecorder(SourceFile(Path("fr_hang_wavefront/pos_hang_2ranks_json/fr_trace_json_rank_0"))));
  EXPECT_FALSE(LooksLikeFlightRecorder("[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4)\n"));
  EXPECT_FALSE(LooksLikeFlightRecorder("{\"level\": \"info\", \"msg\": \"version 2\"}\n"));
  EXPECT_FALSE(LooksLikeFlightRecorder(std::string("\x80\x02]q\x00.", 6)));  // a pickle, not torch's dump
}

TEST(FlightRecorder, RankFromTheFileName) {
  EXPECT_EQ(RankFromDumpName("/tmp/nccl_trace_rank_12"), 12);
  EXPECT_EQ(RankFromDumpName("dumps/fr_trace_json_rank_3.json"), 3);
  EXPECT_EQ(RankFromDumpName("trace_rank_7.pkl.gz"), 7);
  EXPECT_EQ(RankFromDumpName("nccl_trace"), -1);
}

TEST(FlightRecorder, PickleAndJsonGiveTheSameRecords) {
  std::string e1, e2;
  auto p = FlightRecorderEvents(SourceFile(Path("fr_hang_wavefront/pos_hang_2ranks_pickle/nccl_trace_rank_0")),
                                "nccl_trace_rank_0", 0, &e1);
  auto j = FlightRecorderEvents(SourceFile(Path("fr_hang_wavefront/pos_hang_2ranks_json/fr_trace_json_rank_0")),
                                "fr_trace_json_rank_0", 0, &e2);
  EXPECT_TRUE(e1.empty()) << e1;
  EXPECT_TRUE(e2.empty()) << e2;
  auto pr = OfKind(p, "fr_collective"), jr = OfKind(j, "fr_collective");
  ASSERT_EQ(pr.size(), 4u);
  ASSERT_EQ(jr.size(), pr.size());
  for (size_t i = 0; i < pr.size(); ++i) {
    EXPECT_EQ(pr[i]->rank, 0);
    EXPECT_EQ(pr[i]->Get("seq").number(), static_cast<double>(i + 1));
    for (const char* k : {"seq", "op", "state", "pg", "pg_desc", "input_sizes", "output_sizes"})
      EXPECT_EQ(pr[i]->Get(k).json(), jr[i]->Get(k).json()) << k << " of record " << i;
  }
  EXPECT_EQ(pr[3]->Get("op").string(), "gloo:all_reduce");
  EXPECT_EQ(pr[3]->Get("where").string(), "worker (/tmp/m.py:44)");  // the first frame outside torch
  EXPECT_FALSE(jr[3]->Get("where").present());                      // JSON dumps carry no frames
  // pg_status: JSON writes the numbers as strings, the pickle as ints: both read as numbers.
  auto ps = OfKind(p, "fr_pg_status"), js = OfKind(j, "fr_pg_status");
  ASSERT_EQ(ps.size(), 1u);
  ASSERT_EQ(js.size(), 1u);
  EXPECT_EQ(ps[0]->Get("last_completed").number(), 3);
  EXPECT_EQ(js[0]->Get("last_completed").number(), 3);
  EXPECT_EQ(OfKind(p, "fr_dump")[0]->Get("version").string(), "2.10");
}

TEST(FlightRecorder, ACutDumpGivesItsRecordsBeforeTheCutAndAWarning) {
  std::string error;
  auto events = FlightRecorderEvents(SourceFile(Path("fr_hang_wavefront/pos_cut_rank1/nccl_trace_rank_1")),
                                     "nccl_trace_rank_1", 1, &error);
  EXPECT_NE(error.find("nccl_trace_rank_1: the pickle ends at byte 1650 before its STOP"), std::string::npos) << error;
  auto records = OfKind(events, "fr_collective");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]->Get("seq").number(), 2);
  EXPECT_TRUE(OfKind(events, "fr_dump")[0]->Get("cut").boolean());
  EXPECT_EQ(OfKind(events, "fr_pg_status")[0]->Get("last_enqueued").number(), 3);
}

// Memory follows the ranks: a full buffer (TORCH_NCCL_TRACE_BUFFER_SIZE=2000)
// gives the newest kKeepRecords records a process group, frames on the newest kKeepFrames.
TEST(FlightRecorder, OnlyTheNewestRecordsOfEachGroupAreKept) {
  nlohmann::json dump = {{"version", "2.10"}, {"pg_config", nlohmann::json::object()}, {"pg_status", nlohmann::json::object()}};
  nlohmann::json entries = nlohmann::json::array();
  for (int pg = 0; pg < 2; ++pg)
    for (int s = 1; s <= 300; ++s)
      entries.push_back({{"collective_seq_id", s}, {"profiling_name", "nccl:all_reduce"}, {"pg_id", pg},
                         {"process_group", {std::to_string(pg), "g"}}, {"state", "completed"},
                         {"frames", {{{"name", "step"}, {"filename", "/srv/train.py"}, {"line", s}}}}});
  dump["entries"] = entries;
  std::string error;
  auto events = FlightRecorderEvents(dump.dump(), "fr_trace_json_rank_0", 0, &error);
  EXPECT_TRUE(error.empty()) << error;
  auto records = OfKind(events, "fr_collective");
  ASSERT_EQ(records.size(), 2 * kKeepRecords);
  EXPECT_EQ(OfKind(events, "fr_dump")[0]->Get("records_left_out").number(), 2 * (300 - kKeepRecords));
  EXPECT_EQ(records.front()->Get("seq").number(), 300 - kKeepRecords + 1);
  EXPECT_EQ(records.back()->Get("seq").number(), 300);
  size_t with_frames = 0;
  for (const Event* e : records) with_frames += e->Get("where").present();
  EXPECT_EQ(with_frames, 2 * kKeepFrames);
  EXPECT_EQ(records.back()->Get("where").string(), "step (/srv/train.py:300)");
}

// Pickle opcodes (CPython Lib/pickletools.py), for dumps made by hand.
std::string PStr(const std::string& s) {
  std::string out = "X";
  for (int k = 0; k < 4; ++k) out += static_cast<char>((s.size() >> (8 * k)) & 0xff);
  return out + s;
}
std::string PInt(int v) {
  std::string out = "J";
  for (int k = 0; k < 4; ++k) out += static_cast<char>((static_cast<uint32_t>(v) >> (8 * k)) & 0xff);
  return out;
}

// Only the records kept are converted to JSON: an old record whose frames
// expand, through memo references, past the reader's budget of values (2^24
// strings from 50 bytes) is skipped as the others are, where converting the
// whole dump refuses it.
TEST(FlightRecorder, OldRecordsOfAPickleAreNotConverted) {
  std::string bomb = PStr("x") + "q" + std::string(1, '\0') + "0";  // memo 0: "x"
  for (int k = 1; k <= 24; ++k)  // memo k: [memo k-1, memo k-1]
    bomb += std::string("](h") + static_cast<char>(k - 1) + "h" + static_cast<char>(k - 1) + "eq" + static_cast<char>(k) + "0";
  auto record = [](int seq, const std::string& frames) {
    return "}(" + PStr("collective_seq_id") + PInt(seq) + PStr("profiling_name") + PStr("nccl:all_reduce") +
           PStr("process_group") + PStr("0") + PStr("default_pg") + "\x86" + PStr("state") + PStr("completed") +
           PStr("frames") + frames + "u";
  };
  std::string p = std::string("\x80\x02") + bomb + "}(" + PStr("version") + PStr("2.10") + PStr("pg_status") + "}" +
                  PStr("pg_config") + "}" + PStr("entries") + "](" + record(1, "h" + std::string(1, '\x18'));
  const std::string frame = "](}(" + PStr("name") + PStr("step") + PStr("filename") + PStr("/srv/train.py") +
                            PStr("line") + PInt(7) + "ue";
  for (int seq = 2; seq <= 1 + static_cast<int>(kKeepRecords); ++seq) p += record(seq, frame);
  p += "eu.";
  // (ReadPickle(p) refuses it: "expands to more than 8388608 values"; not
  // asserted here, as that takes seconds.)
  std::string error;
  auto events = FlightRecorderEvents(p, "nccl_trace_rank_0", 0, &error);
  EXPECT_TRUE(error.empty()) << error;
  auto records = OfKind(events, "fr_collective");
  ASSERT_EQ(records.size(), kKeepRecords);
  EXPECT_EQ(records.front()->Get("seq").number(), 2) << "record 1 left out";
  EXPECT_EQ(records.back()->Get("where").string(), "step (/srv/train.py:7)");
  EXPECT_EQ(OfKind(events, "fr_dump")[0]->Get("records_left_out").number(), 1);
}

// A dump of `records` records per process group (2 groups of collectives, one
// of p2p sends), each record with its frames, as torch writes it (JSON).
std::string DumpOf(int records) {
  nlohmann::json entries = nlohmann::json::array();
  nlohmann::json frames = nlohmann::json::array();
  for (int f = 0; f < 9; ++f) frames.push_back({{"name", "fn" + std::to_string(f)}, {"filename", "/srv/train.py"}, {"line", f}});
  for (int s = 1; s <= records; ++s)
    for (int pg = 0; pg < 3; ++pg)
      entries.push_back({{"collective_seq_id", pg == 2 ? 0 : s}, {"p2p_seq_id", pg == 2 ? s : 0},
                         {"is_p2p", pg == 2}, {"profiling_name", pg == 2 ? "nccl:send 0->1" : "nccl:all_reduce"},
                         {"pg_id", pg % 2}, {"process_group", {std::to_string(pg % 2), "g"}}, {"state", "completed"},
                         {"input_sizes", {{4096, 1024}}}, {"frames", frames}});
  nlohmann::json dump = {{"version", "2.10"}, {"pg_config", nlohmann::json::object()},
                         {"pg_status", nlohmann::json::object()}, {"entries", entries}};
  return dump.dump();
}

// What a rank's dump leaves in memory is a summary that does not grow with
// its records: 40 or 4,000 records a group give the same events, as large.
TEST(FlightRecorder, PerRankSummaryDoesNotGrowWithRecords) {
  auto measure = [](int records, size_t* bytes) {
    std::string error;
    auto events = FlightRecorderEvents(DumpOf(records), "fr_trace_json_rank_0", 0, &error);
    EXPECT_TRUE(error.empty()) << error;
    *bytes = 0;
    for (const Event& e : events) *bytes += e.text.size() + e.fields().dump().size();
    return events.size();
  };
  size_t small_bytes = 0, large_bytes = 0;
  const size_t small = measure(40, &small_bytes), large = measure(4000, &large_bytes);
  EXPECT_EQ(large, small);
  EXPECT_LE(large, 1 + 3 * kKeepRecords);  // fr_dump + the newest records of each group
  EXPECT_LE(large_bytes, small_bytes + small_bytes / 10) << small_bytes << " bytes for 40 records a group";
}

// A p2p record names its op and its peer (the group rank in torch's
// profiling_name, "nccl:send 0->1") and counts the sends to that peer up to it
// over the whole dump, records not kept included.
TEST(FlightRecorder, P2pRecordsNameTheirPeerAndCount) {
  std::string error;
  auto events = FlightRecorderEvents(DumpOf(40), "fr_trace_json_rank_0", 0, &error);
  const Event* newest = nullptr;
  for (const Event* e : OfKind(events, "fr_collective"))
    if (e->Get("is_p2p").boolean()) newest = e;
  ASSERT_NE(newest, nullptr);
  EXPECT_EQ(newest->Get("p2p_op").string(), "send");
  EXPECT_EQ(newest->Get("peer").number(), 1);
  EXPECT_EQ(newest->Get("p2p_nth").number(), 40);
  EXPECT_EQ(newest->Get("p2p_seq").number(), 40);
  EXPECT_FALSE(OfKind(events, "fr_dump")[0]->Get("wrapped").boolean());
}

// The run's store keeps every rank's summary whole, even where its byte
// budget thins the logs: each rank keeps its newest records (at 1,024 ranks
// the thinned store once left rank 17 at collective 1758 of 1999).
TEST(FlightRecorder, ParseRunKeepsEveryRanksNewestRecords) {
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  fs::path dir = fs::temp_directory_path() / ("tpt_fr_many_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int ranks = 300, records = 40;
  const std::string dump = DumpOf(records);
  for (int r = 0; r < ranks; ++r) std::ofstream(dir / ("fr_trace_json_rank_" + std::to_string(r))) << dump;
  ParseOptions options;
  options.keep_bytes = 256 << 10;  // far below 300 ranks' summaries
  auto run = ParseRunToMemory({dir.string()}, *formats, options);
  fs::remove_all(dir);
  ASSERT_TRUE(run.ok()) << run.status().message();
  std::map<int, int> kept, newest;
  for (const Event& e : run->events)
    if (e.kind == "fr_collective" && !e.Get("is_p2p").boolean()) {
      ++kept[e.rank];
      newest[e.rank] = std::max(newest[e.rank], static_cast<int>(e.Get("seq").number()));
    }
  ASSERT_EQ(kept.size(), static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(kept[r], static_cast<int>(2 * std::min<size_t>(records, kKeepRecords))) << "rank " << r;
    EXPECT_EQ(newest[r], records) << "rank " << r;
  }
}

// The dumps of a folder are read with the logs: extensionless binary pickles
// included, each rank's records under its rank.
TEST(FlightRecorder, ParseRunReadsDumpsInAFolderBesideLogs) {
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  fs::path dir = fs::temp_directory_path() / ("tpt_fr_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(Path("fr_hang_wavefront/pos_hang_2ranks_pickle/nccl_trace_rank_0"), dir / "nccl_trace_rank_0");
  fs::copy_file(Path("fr_hang_wavefront/pos_hang_2ranks_pickle/nccl_trace_rank_1"), dir / "nccl_trace_rank_1");
  std::ofstream(dir / "train.log") << "[rank0]:[E1205 15:57:51.000000000 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
                                      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, "
                                      "NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n";
  // A dump that would construct an object is refused by name, and the run goes on.
  std::ofstream(dir / "nccl_trace_rank_9", std::ios::binary)
      << std::string("\x80\x02}(X\x09\x00\x00\x00pg_configcos\nsystem\n.", 30);
  auto run = ParseRunToMemory({dir.string()}, *formats, ParseOptions());
  ASSERT_TRUE(run.ok()) << run.status().message();
  std::map<int, int> records;
  for (const Event& e : run->events)
    if (e.kind == "fr_collective") ++records[e.rank];
  EXPECT_EQ(records[0], 4);
  EXPECT_EQ(records[1], 3);
  EXPECT_EQ(OfKind(run->events, "watchdog_timeout").size(), 1u);
  bool refused = false;
  for (const InputReport& r : run->inputs)
    if (r.path.find("nccl_trace_rank_9") != std::string::npos)
      refused = r.error.find("opcode GLOBAL") != std::string::npos;
  EXPECT_TRUE(refused);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tpt
