// box_check_test.cc: box-check plans from a diagnosis and the log's events,
// run on simulated boxes: each verdict follows from what the box shows.
#include "repro/box_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "repro/box_plan.h"
#include "repro/checkability.h"
#include "rules/vocabulary.h"

namespace tpt::repro {
namespace {

using nlohmann::json;

json Analysis(const std::string& cause, json run = json::object(), const std::string& evidence = "") {
  return {{"root_cause", cause},
          {"run", run},
          {"diagnoses", json::array({{{"id", cause}, {"evidence", json::array({{{"text", evidence}}})}}})}};
}

json Event(const std::string& kind, json fields, const std::string& text = "") {
  return {{"kind", kind}, {"fields", fields}, {"text", text}, {"line", 1}};
}

BoxPlan MustPlan(const json& a, const json& events) {
  auto p = BoxPlanFromAnalysis(a, events, "test.log");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : BoxPlan{};
}

BoxReport Check(const BoxPlan& p, const SimulatedBox& box) {
  auto probe = MakeSimulatedProbe(box);
  return RunBoxCheck(p, *probe, {});
}

TEST(NcclSelectInterfaces, FollowsNcclsListSyntaxAndDefaultOrder) {
  const std::vector<std::string> names = {"lo", "docker0", "eth0", "eth1", "ib0"};
  EXPECT_EQ(NcclSelectInterfaces(names, "eth"), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(NcclSelectInterfaces(names, "=eth1"), (std::vector<std::string>{"eth1"}));
  EXPECT_EQ(NcclSelectInterfaces(names, "=eth"), std::vector<std::string>{});
  EXPECT_EQ(NcclSelectInterfaces(names, "^docker,lo,ib"), (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(NcclSelectInterfaces(names, "enp"), std::vector<std::string>{});
  // No NCCL_SOCKET_IFNAME: InfiniBand first, then anything but docker/lo, then docker, then lo.
  EXPECT_EQ(NcclSelectInterfaces(names, ""), (std::vector<std::string>{"ib0"}));
  EXPECT_EQ(NcclSelectInterfaces({"lo", "docker0", "eth0"}, ""), (std::vector<std::string>{"eth0"}));
  EXPECT_EQ(NcclSelectInterfaces({"lo", "docker0"}, ""), (std::vector<std::string>{"docker0"}));
  EXPECT_EQ(NcclSelectInterfaces({"lo"}, ""), (std::vector<std::string>{"lo"}));
}

TEST(ParseCudaVersion, ReadsTheSpellingsLogsUse) {
  EXPECT_EQ(ParseCudaVersion("12.8"), 12080);
  EXPECT_EQ(ParseCudaVersion("cu128"), 12080);
  EXPECT_EQ(ParseCudaVersion("cu121"), 12010);
  EXPECT_EQ(ParseCudaVersion("11060"), 11060);
  EXPECT_EQ(ParseCudaVersion("13.0"), 13000);
  EXPECT_EQ(ParseCudaVersion("abc"), 0);
  EXPECT_EQ(FormatCudaVersion(12040), "12.4");
}

TEST(Checkability, EveryTaxonomyRootCauseHasAnEntryAndAReadmeLine) {
  std::ifstream in(std::string(TPT_SOURCE_DIR) + "/repro/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  for (const RootCause& rc : RootCauses()) {
    EXPECT_NE(CheckabilityOf(rc.id), nullptr) << rc.id << " has no line in repro/checkability.cc";
    EXPECT_NE(readme.find("| `" + rc.id + "` |"), std::string::npos) << rc.id << " has no line in repro/README.md";
  }
  // A root cause the server's start-up steps place is a memory replay.
  for (const RootCause& rc : RootCauses()) {
    if (!rc.repro_step.empty()) EXPECT_EQ(CheckabilityOf(rc.id)->kind, ReproKind::kMemoryReplay) << rc.id;
  }
}

TEST(BoxPlan, EveryBoxCheckCauseGetsStepsAndOthersAreRefused) {
  for (const auto& c : CheckabilityTable()) {
    auto p = BoxPlanFromAnalysis(Analysis(std::string(c.id)), json::array(), "x.log");
    if (c.kind == ReproKind::kBoxCheck) {
      ASSERT_TRUE(p.ok()) << c.id;
      EXPECT_FALSE(p->steps.empty()) << c.id;
    } else {
      EXPECT_FALSE(p.ok()) << c.id;
    }
  }
}

TEST(ShmCheck, SegmentSizeFromNcclsLineReproducedOnASmallShm) {
  json ev = json::array({Event("shm_error", {{"message", "Error while creating shared memory segment /dev/shm/nccl-ab12cd (size 9637888)"}})});
  BoxPlan p = MustPlan(Analysis("shm_too_small", {{"tp", 8}}), ev);
  EXPECT_EQ(p.shm_segment_bytes, 9637888);
  EXPECT_EQ(p.shm_segments, 16);  // 8 local ranks x 2 channels
  SimulatedBox small;
  small.shm_bytes = 64ll << 20;  // docker's default
  BoxReport r = Check(p, small);
  EXPECT_EQ(r.verdict.outcome, "reproduced") << r.verdict.reason;
  EXPECT_NE(r.verdict.reason.find("No space left on device"), std::string::npos);
  EXPECT_EQ(r.verdict.fix_outcome, "passes") << r.verdict.fix_reason;  // --shm-size 1g holds 147 MiB
  SimulatedBox big;
  big.shm_bytes = 8ll << 30;
  r = Check(p, big);
  // The channel count is assumed, so a passing box is not a verdict until it is given.
  EXPECT_EQ(r.verdict.outcome, "inconclusive");
  BoxOverrides o;
  o.shm_needed_bytes = 200ll << 20;
  ApplyBoxOverrides(o, &p);
  EXPECT_TRUE(p.asked.empty());
  EXPECT_EQ(Check(p, big).verdict.outcome, "not reproduced");
  EXPECT_EQ(ExitCodeOf(Check(p, small).verdict), kExitReproduced);
}

TEST(ShmCheck, TheRankFlagMovesTheSegmentsAndTheQuestion) {
  BoxPlan p = MustPlan(Analysis("shm_too_small"), json::array());
  BoxOverrides o;
  o.world = 8;
  ApplyBoxOverrides(o, &p);
  EXPECT_EQ(p.shm_segments, 16);
  ASSERT_EQ(p.asked.size(), 1u);
  EXPECT_EQ(p.asked[0].rfind("--shm-needed 147.1 MiB (assumed", 0), 0u) << p.asked[0];
}

// The channel count from the log's NCCL INFO "via SHM" lines (one segment a
// connection, transport/shm.cc): computed, not assumed, so a box with room for it
// is a verdict.
TEST(ShmCheck, ConnectionsCountedFromTheViaShmLines) {
  json ev = json::array({Event("shm_error", {{"message", "Error while creating shared memory segment /dev/shm/nccl-x (size 9637888)"}})});
  // Ranks 0 and 1 of 4 printed their rings: 4 channels, one peer each (8 connections of 2 ranks).
  for (int ch = 0; ch < 4; ++ch) {
    for (int r = 0; r < 2; ++r) {
      ev.push_back(Event("nccl_transport", {{"channel", ch}, {"src_rank", r}, {"dst_rank", (r + 1) % 4},
                                            {"transport", "SHM/direct/direct"}}));
    }
    // P2P connections and a repeated line do not count.
    ev.push_back(Event("nccl_transport", {{"channel", ch}, {"src_rank", 0}, {"dst_rank", 1}, {"transport", "SHM/direct/direct"}}));
    ev.push_back(Event("nccl_transport", {{"channel", ch}, {"src_rank", 2}, {"dst_rank", 3}, {"transport", "P2P/IPC"}}));
  }
  BoxPlan p = MustPlan(Analysis("shm_too_small", {{"tp", 4}}), ev);
  EXPECT_DOUBLE_EQ(p.shm_segments_per_rank, 4);
  EXPECT_EQ(p.shm_segments, 16);  // 4 local ranks x 4
  EXPECT_FALSE(p.shm_channels_assumed);
  EXPECT_TRUE(p.asked.empty()) << p.asked[0];
  SimulatedBox big;
  big.shm_bytes = 8ll << 30;
  EXPECT_EQ(Check(p, big).verdict.outcome, "not reproduced");  // a verdict now, not inconclusive
  SimulatedBox small;
  small.shm_bytes = 64ll << 20;
  EXPECT_EQ(Check(p, small).verdict.outcome, "reproduced");
  // --tp moves the ranks, and keeps the counted connections a rank.
  BoxOverrides o;
  o.world = 8;
  ApplyBoxOverrides(o, &p);
  EXPECT_EQ(p.shm_segments, 32);
}

// NCCL_MIN_NCHANNELS and the buffer sizes from the log's environment.
TEST(ShmCheck, ChannelsAndBufferSizesFromTheEnvironment) {
  json ev = json::array({Event("env_var", {{"name", "NCCL_MIN_NCHANNELS"}, {"value", "8"}}),
                         Event("env_var", {{"name", "NCCL_BUFFSIZE"}, {"value", "1048576"}})});
  BoxPlan p = MustPlan(Analysis("shm_too_small", {{"tp", 2}}), ev);
  EXPECT_EQ(p.shm_segment_bytes, 4096 + 524288 + 4915200 + 1048576);
  EXPECT_EQ(p.shm_segments, 16);  // 2 ranks x 8 channels
  EXPECT_TRUE(p.asked.empty());
  ev.push_back(Event("env_var", {{"name", "NCCL_MAX_NCHANNELS"}, {"value", "4"}}));
  EXPECT_EQ(MustPlan(Analysis("shm_too_small", {{"tp", 2}}), ev).shm_segments, 8);
}

TEST(ShmCheck, SegmentSizeFromTheExtendLine) {
  json ev = json::array({Event("shm_error", {{"message", "NCCL WARN Error: failed to extend /dev/shm/nccl-oA7T4J to 5967876 bytes"}})});
  EXPECT_EQ(MustPlan(Analysis("shm_too_small", {{"tp", 2}}), ev).shm_segment_bytes, 5967876);
}

TEST(ShmCheck, NcclsDefaultSegmentWhenTheLogPrintsNone) {
  BoxPlan p = MustPlan(Analysis("shm_too_small", {{"tp", 2}}), json::array());
  EXPECT_EQ(p.shm_segment_bytes, 4096 + 524288 + 4915200 + 4194304);
  bool default_source = false;
  for (const auto& f : p.figures) default_source |= f.name == "SHM segment" && f.source.rfind(kFromDefault, 0) == 0;
  EXPECT_TRUE(default_source);
}

TEST(NetworkCheck, AnInterfaceTheBoxLacksIsNcclsNoSocketInterface) {
  json ev = json::array({Event("env_var", {{"name", "NCCL_SOCKET_IFNAME"}, {"value", "ens5"}})});
  BoxPlan p = MustPlan(Analysis("nccl_network_config", {{"tp", 2}}), ev);
  EXPECT_EQ(p.env.at("NCCL_SOCKET_IFNAME"), "ens5");
  BoxReport r = Check(p, SimulatedBox{});
  EXPECT_EQ(r.verdict.outcome, "reproduced") << r.verdict.reason;
  EXPECT_EQ(r.original.failed_step, kCheckInterfaces);
  EXPECT_NE(r.verdict.reason.find("no socket interface found"), std::string::npos);
  // The fix names this box's routable interface, and NCCL's bootstrap passes with it.
  EXPECT_EQ(r.verdict.fix_outcome, "passes") << r.verdict.fix_reason;
  EXPECT_NE(r.verdict.fix_reason.find("selects eth0"), std::string::npos) << r.verdict.fix_reason;
  // The log's interface exists here: not reproduced.
  SimulatedBox has;
  has.interfaces.push_back({"ens5", "10.1.0.3", false, true, false});
  EXPECT_EQ(Check(p, has).verdict.outcome, "not reproduced");
}

TEST(NetworkCheck, ABoxWithOnlyDockerBridgeBootstrapsWhereOthersCannotReach) {
  BoxPlan p = MustPlan(Analysis("nccl_network_config", {{"tp", 2}}), json::array());
  SimulatedBox box;
  box.interfaces = {{"lo", "127.0.0.1", false, true, true}, {"docker0", "172.17.0.1", false, true, false}};
  BoxReport r = Check(p, box);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_NE(r.verdict.reason.find("docker0"), std::string::npos);
  EXPECT_EQ(r.verdict.fix_outcome, "fails");  // no routable interface to name
}

TEST(NetworkCheck, AnHcaTheBoxLacks) {
  json ev = json::array({Event("env_var", {{"name", "NCCL_IB_HCA"}, {"value", "mlx5_4:1"}})});
  BoxPlan p = MustPlan(Analysis("nccl_network_config", {{"tp", 2}}), ev);
  SimulatedBox box;
  box.ib_devices = {"mlx5_0", "mlx5_1"};
  BoxReport r = Check(p, box);
  EXPECT_EQ(r.original.failed_step, kCheckIbHcas);
  box.ib_devices.push_back("mlx5_4");
  EXPECT_EQ(Check(p, box).verdict.outcome, "not reproduced");
}

TEST(DuplicateGpuCheck, NcclsRefusalReproducedFixNeedsAGpuARank) {
  json ev = json::array({Event("duplicate_gpu", {{"bus_id", "1000"}})});
  BoxPlan p = MustPlan(Analysis("duplicate_gpu", {{"tp", 2}}), ev);
  EXPECT_EQ(p.bus_id, "1000");
  BoxReport one = Check(p, SimulatedBox{});
  EXPECT_EQ(one.verdict.outcome, "reproduced");
  EXPECT_NE(one.verdict.reason.find("Duplicate GPU detected"), std::string::npos);
  EXPECT_EQ(one.verdict.fix_outcome, "inconclusive");
  EXPECT_NE(one.verdict.fix_reason.find("needs 2 GPUs"), std::string::npos);
  EXPECT_EQ(ExitCodeOf(one.verdict), kExitFixFails);
  SimulatedBox two;
  two.gpus = 2;
  BoxReport r = Check(p, two);
  EXPECT_EQ(r.verdict.fix_outcome, "passes") << r.verdict.fix_reason;
  EXPECT_EQ(ExitCodeOf(r.verdict), kExitReproduced);
}

TEST(P2pCheck, BrokenCopiesReproducedAndNcclWithoutP2pIsTheFix) {
  BoxPlan p = MustPlan(Analysis("custom_allreduce_failure", {{"tp", 2}}), json::array());
  SimulatedBox broken;
  broken.gpus = 2;
  broken.p2p_broken = true;
  BoxReport r = Check(p, broken);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_EQ(r.original.failed_step, kCheckIpc);
  EXPECT_EQ(r.verdict.fix_outcome, "passes") << r.verdict.fix_reason;
  EXPECT_NE(r.verdict.fix_reason.find("NCCL_P2P_DISABLE=1"), std::string::npos);
  SimulatedBox healthy;
  healthy.gpus = 2;
  EXPECT_EQ(Check(p, healthy).verdict.outcome, "not reproduced");
  // One GPU: no pair to copy between; what it lacks is said.
  BoxReport one = Check(p, SimulatedBox{});
  EXPECT_EQ(one.verdict.outcome, "inconclusive");
  EXPECT_NE(one.verdict.reason.find("needs 2 GPUs"), std::string::npos);
}

TEST(CollectiveCheck, TheLogsCollectiveAtItsSizeHealthyFabricNamesTheWorkload) {
  json ev = json::array(
      {Event("watchdog_timeout", {{"op_type", "_ALLGATHER_BASE"}, {"numel", 4194304}, {"timeout_s", 600}})});
  BoxPlan p = MustPlan(Analysis("nccl_timeout_hang", {{"tp", 2}}), ev);
  EXPECT_EQ(p.collective, "all_gather");
  EXPECT_EQ(p.collective_bytes, 8 << 20);
  SimulatedBox two;
  two.gpus = 2;
  BoxReport r = Check(p, two);
  EXPECT_EQ(r.verdict.outcome, "not reproduced");
  EXPECT_NE(r.verdict.reason.find("workload"), std::string::npos);
  json named = Analysis("nccl_timeout_hang", {{"tp", 2}});
  named["verdict"] = "nccl_timeout_hang (rank 1, 1 of 2 ranks failed): rank 1 stopped at SeqNum 41";
  EXPECT_NE(Check(MustPlan(named, ev), two).verdict.reason.find("rank 1 stopped at SeqNum 41"), std::string::npos);
  two.collective_hangs = true;
  r = Check(p, two);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_NE(r.verdict.reason.find("did not complete"), std::string::npos);
  EXPECT_EQ(Check(p, SimulatedBox{}).verdict.outcome, "inconclusive");  // 1 GPU for 2 ranks
}

TEST(DriverCheck, TheBoxsDriverAgainstTheWheelsCuda) {
  json ev = json::array({Event("framework_version", {{"framework", "torch"}, {"version", "2.7.0+cu128"}}, "torch 2.7.0+cu128")});
  BoxPlan p = MustPlan(Analysis("cuda_driver_mismatch", json::object(),
                                "RuntimeError: The NVIDIA driver on your system is too old (found version 12040)"),
                       ev);
  EXPECT_EQ(p.required_cuda, 12080);
  EXPECT_EQ(p.log_driver_cuda, 12040);
  EXPECT_TRUE(p.asked.empty());
  SimulatedBox old;
  old.driver_cuda = 12040;
  EXPECT_EQ(Check(p, old).verdict.outcome, "reproduced");
  EXPECT_EQ(Check(p, SimulatedBox{}).verdict.outcome, "not reproduced");  // CUDA 13.0 driver
}

TEST(DriverCheck, NvidiaSmisDriverVersionReadAsItsBranchsCuda) {
  BoxPlan p = MustPlan(Analysis("cuda_driver_mismatch", json::object(),
                                "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   |"),
                       json::array());
  EXPECT_EQ(p.log_driver_cuda, 12020);
  EXPECT_FALSE(p.asked.empty());  // what the runtime needs is not in this log
  EXPECT_EQ(Check(p, SimulatedBox{}).verdict.outcome, "inconclusive");
}

TEST(ArchCheck, ComputeCapabilityAgainstTheArchitecturesBuiltFor) {
  json ev = json::array({Event("unsupported_arch", {{"cc_major", 12}, {"cc_minor", 0}, {"supported", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"}})});
  BoxPlan p = MustPlan(Analysis("unsupported_gpu_arch"), ev);
  EXPECT_EQ(p.log_gpu_sm, 120);
  EXPECT_EQ(p.built_archs, (std::vector<int>{50, 60, 70, 75, 80, 86, 90}));
  SimulatedBox blackwell;
  blackwell.sm = 120;
  BoxReport r = Check(p, blackwell);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_NE(r.original.steps[0].note.find("not covered"), std::string::npos);
  EXPECT_EQ(Check(p, SimulatedBox{}).verdict.outcome, "not reproduced");  // sm_90 is built
  SimulatedBox ada;
  ada.sm = 89;  // sm_86's cubin runs on 8.9
  EXPECT_EQ(Check(p, ada).verdict.outcome, "not reproduced");
}

TEST(ArchCheck, TheLogsGpuFromTheCatalogue) {
  BoxPlan p = MustPlan(Analysis("unsupported_gpu_arch", {{"gpu", "Tesla T4"}}), json::array());
  EXPECT_EQ(p.log_gpu_sm, 75);
  bool catalogue = false;
  for (const auto& f : p.figures) catalogue |= f.source.rfind(kFromCatalog, 0) == 0;
  EXPECT_TRUE(catalogue);
}

TEST(HardwareCheck, NvmlCountersOfTheGpuTheLogNames) {
  json ev = json::array({Event("xid", {{"xid", "79"}, {"bus_id", "0000:18:00"}})});
  BoxPlan p = MustPlan(Analysis("hardware_fault"), ev);
  SimulatedBox ecc;
  ecc.ecc_uncorrected = 3;
  BoxReport r = Check(p, ecc);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_NE(r.verdict.reason.find("uncorrected ECC 3"), std::string::npos);
  SimulatedBox narrow;
  narrow.pcie_width = 8;
  EXPECT_NE(Check(p, narrow).verdict.reason.find("PCIe x8 of x16"), std::string::npos);
  EXPECT_EQ(Check(p, SimulatedBox{}).verdict.outcome, "not reproduced");
  json other = json::array({Event("xid", {{"xid", "79"}, {"bus_id", "0000:dc:00.0"}})});
  BoxReport elsewhere = Check(MustPlan(Analysis("hardware_fault"), other), ecc);
  EXPECT_EQ(elsewhere.verdict.outcome, "inconclusive");
  EXPECT_NE(elsewhere.verdict.reason.find("not on this box"), std::string::npos);
}

TEST(FabricCheck, EveryGpusRegistrationThenNcclWithoutNvls) {
  BoxPlan p = MustPlan(Analysis("nvls_fabric_manager", {{"tp", 2}}), json::array());
  EXPECT_EQ(p.steps, (std::vector<std::string>{kCheckFabric, kCheckCollective}));
  EXPECT_EQ(p.fix_env.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_TRUE(p.asked.empty());
  SimulatedBox unregistered;
  unregistered.gpus = 2;
  unregistered.fabric_state = kFabricNotStarted;
  BoxReport r = Check(p, unregistered);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_NE(r.verdict.reason.find("fabric not started"), std::string::npos) << r.verdict.reason;
  EXPECT_NE(r.verdict.reason.find("2 GPUs ("), std::string::npos) << r.verdict.reason;
  // As logged the collective went through NVLS: not run; the fix runs it without.
  ASSERT_EQ(r.original.steps.size(), 2u);
  EXPECT_TRUE(r.original.steps[1].ok);
  EXPECT_NE(r.original.steps[1].note.find("never turns on"), std::string::npos);
  EXPECT_EQ(r.verdict.fix_outcome, "passes") << r.verdict.fix_reason;
  EXPECT_NE(r.verdict.fix_reason.find("completed"), std::string::npos) << r.verdict.fix_reason;
  SimulatedBox failed = unregistered;
  failed.fabric_state = kFabricCompleted;
  failed.fabric_status = 999;
  EXPECT_NE(Check(p, failed).verdict.reason.find("registration failed"), std::string::npos);
  SimulatedBox registered = unregistered;
  registered.fabric_state = kFabricCompleted;
  BoxReport ok = Check(p, registered);
  EXPECT_EQ(ok.verdict.outcome, "not reproduced");
  EXPECT_NE(ok.original.steps[0].note.find("reset the GPUs or reboot"), std::string::npos);
  // A box with no NVLink fabric, or a driver that does not report it, cannot say.
  SimulatedBox pcie = unregistered;
  pcie.fabric_state = kFabricNotSupported;
  BoxReport here = Check(p, pcie);
  EXPECT_EQ(here.verdict.outcome, "inconclusive");
  EXPECT_NE(here.verdict.reason.find("no NVLink fabric"), std::string::npos);
  SimulatedBox old_driver = unregistered;
  old_driver.fabric_state = -1;
  EXPECT_NE(Check(p, old_driver).verdict.reason.find("R550"), std::string::npos);
}

TEST(DiskCheck, TheFilesystemOfTheLogsPathOnThisBox) {
  json ev = json::array({Event("disk_full", {{"errno", 28}, {"message", "No space left on device"},
                                             {"path", "/root/.cache/huggingface/hub/tmpx"}})});
  BoxPlan p = MustPlan(Analysis("disk_full"), ev);
  EXPECT_EQ(p.steps, std::vector<std::string>{kCheckDisk});
  EXPECT_EQ(p.disk_path, "/root/.cache/huggingface/hub/tmpx");
  EXPECT_TRUE(p.asked.empty());
  SimulatedBox full;
  full.disk_free_bytes = 12ll << 20;
  BoxReport r = Check(p, full);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_NE(r.verdict.reason.find("no room"), std::string::npos) << r.verdict.reason;
  EXPECT_EQ(r.verdict.fix_outcome, "not checked");  // freeing space or moving caches is the user's to do
  SimulatedBox no_inodes;
  no_inodes.disk_free_inodes = 0;
  EXPECT_NE(Check(p, no_inodes).verdict.reason.find("no inodes left"), std::string::npos);
  EXPECT_EQ(Check(p, SimulatedBox{}).verdict.outcome, "not reproduced");
  SimulatedBox elsewhere;
  elsewhere.disk_path_missing = true;
  BoxReport away = Check(p, elsewhere);
  EXPECT_EQ(away.verdict.outcome, "inconclusive");
  EXPECT_NE(away.verdict.reason.find("not on this box"), std::string::npos);
  // A quota: statvfs shows the filesystem's room, not the user's.
  json quota = json::array({Event("disk_full", {{"errno", 122}, {"message", "Disk quota exceeded"}, {"path", "/home/u/.cache/vllm/x"}})});
  BoxReport q = Check(MustPlan(Analysis("disk_full"), quota), SimulatedBox{});
  EXPECT_EQ(q.verdict.outcome, "inconclusive");
  EXPECT_NE(q.verdict.reason.find("quota -s"), std::string::npos) << q.verdict.reason;
  // No path in the log: ~/.cache, asked for.
  BoxPlan none = MustPlan(Analysis("disk_full"), json::array());
  EXPECT_NE(none.disk_path.find("/.cache"), std::string::npos);
  ASSERT_FALSE(none.asked.empty());
  EXPECT_EQ(Check(none, SimulatedBox{}).verdict.outcome, "inconclusive");
  BoxOverrides o;
  o.disk_path = "/data/hf";
  ApplyBoxOverrides(o, &none);
  EXPECT_EQ(none.disk_path, "/data/hf");
  EXPECT_TRUE(none.asked.empty());
}

TEST(PortCheck, ThePortTakenHereAndAFreeOne) {
  json ev = json::array({Event("address_in_use", {{"port", 30000}})});
  BoxPlan p = MustPlan(Analysis("port_in_use"), ev);
  EXPECT_EQ(p.port, 30000);
  SimulatedBox taken;
  taken.port_taken = true;
  BoxReport r = Check(p, taken);
  EXPECT_EQ(r.verdict.outcome, "reproduced");
  EXPECT_EQ(r.verdict.fix_outcome, "passes");
  EXPECT_EQ(Check(p, SimulatedBox{}).verdict.outcome, "not reproduced");
}

TEST(SimulatedBoxFromJson, ReadsKeysAndRefusesWrongTypes) {
  SimulatedBox b;
  ASSERT_TRUE(SimulatedBoxFromJson(R"({"shm_bytes": 1024, "gpus": 4, "interfaces": [{"name": "ib0", "address": "10.0.0.1"}]})", &b).ok());
  EXPECT_EQ(b.shm_bytes, 1024);
  EXPECT_EQ(b.gpus, 4);
  ASSERT_EQ(b.interfaces.size(), 1u);
  EXPECT_FALSE(SimulatedBoxFromJson(R"({"gpus": "four"})", &b).ok());
  EXPECT_FALSE(SimulatedBoxFromJson("[1]", &b).ok());
}

// The host probe's own operations (no GPU needed): what NCCL and a server
// would meet on this machine.
TEST(HostProbe, ShmSegmentsCreatedAndRemovedAndTooLargeRefused) {
  auto probe = MakeHostProbe();
  auto before = probe->ShmFreeBytes();
  if (!before.ok() || *before < (64ll << 20)) GTEST_SKIP() << "/dev/shm missing or under 64 MiB free";
  EXPECT_TRUE(probe->CreateShmSegments(4, 4 << 20).ok());
  Status s = probe->CreateShmSegments(1, *before + (1ll << 30));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("posix_fallocate"), std::string::npos) << s.ToString();
  auto after = probe->ShmFreeBytes();
  ASSERT_TRUE(after.ok());
  EXPECT_GE(*after + (8 << 20), *before);  // every segment unlinked
}

TEST(HostProbe, BindSeesAPortHeldOnThisHost) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  auto probe = MakeHostProbe();
  Status held = probe->BindPort(port);
  EXPECT_FALSE(held.ok());
  EXPECT_NE(held.message().find("EADDRINUSE"), std::string::npos) << held.ToString();
  close(fd);
  EXPECT_TRUE(probe->BindPort(port).ok());
}

TEST(HostProbe, InterfacesIncludeLoopback) {
  bool lo = false;
  for (const auto& i : MakeHostProbe()->Interfaces()) lo |= i.loopback;
  EXPECT_TRUE(lo);
}

}  // namespace
}  // namespace tpt::repro
