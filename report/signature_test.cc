// signature_test.cc: masking and the stability of failure signatures.
#include "report/signature.h"

#include <gtest/gtest.h>

#include "report/test_fixtures.h"

namespace tpt::report {
namespace {

TEST(MessageTemplate, MasksVariablePartsKeepsWords) {
  EXPECT_EQ(MessageTemplate("[2025-06-01 10:11:12 TP3] CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3"),
            "[<ts> TP<n>] CUDA out of memory. Tried to allocate <n> GiB. GPU <n>");
  EXPECT_EQ(MessageTemplate("INFO 06-01 10:11:12 worker.py:42] ok"), "INFO <ts> worker.py:<n>] ok");
  EXPECT_EQ(MessageTemplate("request 123e4567-e89b-12d3-a456-426614174000 failed"), "request <uuid> failed");
  EXPECT_EQ(MessageTemplate("connect to 10.1.2.3:29500 refused"), "connect to <ip> refused");
  EXPECT_EQ(MessageTemplate("File \"/usr/lib/python3/site.py\", line 9"), "File \"<path>\", line <n>");
  EXPECT_EQ(MessageTemplate("ptr 0x7f3a9c000000 and 7f3a9c00deadbeef"), "ptr <hex> and <hex>");
  EXPECT_EQ(MessageTemplate("  many   spaces\tand\ttabs  "), "many spaces and tabs");
}

TEST(MessageTemplate, KeepsTransportNamesThatLookLikePaths) {
  // "P2P/IPC" is an NCCL transport, not a path: a slash inside a word stays
  // (its digit is masked like every number).
  EXPECT_EQ(MessageTemplate("Channel 00 : 0[0] -> 1[1] via P2P/IPC"),
            "Channel <n> : <n>[<n>] -> <n>[<n>] via P<n>P/IPC");
  EXPECT_EQ(MessageTemplate("open /dev/shm/nccl-x failed"), "open <path> failed");
}

TEST(MessageTemplate, BoundsHugeAndInvalidInput) {
  std::string huge(1 << 20, 'a');
  EXPECT_LE(MessageTemplate(huge).size(), 203u);
  std::string bad = "bad \xff\xfe bytes";
  EXPECT_EQ(MessageTemplate(bad), "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

TEST(MajorMinor, DropsPatchAndPrefix) {
  EXPECT_EQ(MajorMinor("0.4.6.post1"), "0.4");
  EXPECT_EQ(MajorMinor("v0.6.3"), "0.6");
  EXPECT_EQ(MajorMinor("2.10"), "2.10");
  EXPECT_EQ(MajorMinor("nightly"), "nightly");
  EXPECT_EQ(MajorMinor(""), "");
}

TEST(Fnv1a64, KnownVectors) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(Fnv1a64Hex(""), "cbf29ce484222325");
  EXPECT_EQ(Fnv1a64Hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(Fnv1a64Hex("foobar"), "85944171f73967e8");
}

TEST(ComputeSignature, RepeatsWithOtherNumbersRanksPathsAndTimesMatch) {
  using testing::KvNoRoom;
  Signature a = ComputeSignature(KvNoRoom({.seed = 1, .log_dir = "/home/ci/a"}));
  Signature b = ComputeSignature(KvNoRoom({.seed = 6, .log_dir = "/mnt/other/b"}));
  Signature c = ComputeSignature(KvNoRoom({.seed = 3, .version = "0.4.1"}));  // same major.minor
  ASSERT_EQ(a.id.size(), 12u);
  EXPECT_EQ(a.id, b.id) << a.canonical << "\n" << b.canonical;
  EXPECT_EQ(a.id, c.id);
  EXPECT_EQ(a.phase, "kv_pool");
  EXPECT_EQ(a.error_class, "not_enough_memory");
  EXPECT_EQ(a.canonical.find("/home"), std::string::npos);
}

TEST(ComputeSignature, DifferentCauseOrVersionDiffers) {
  using testing::KvNoRoom;
  std::string base = ComputeSignature(KvNoRoom({.seed = 1})).id;
  EXPECT_NE(ComputeSignature(KvNoRoom({.seed = 1, .version = "0.5.0"})).id, base);
  EXPECT_NE(ComputeSignature(testing::NcclTimeout(1)).id, base);
  // Two vLLM patch releases of one minor version are the same failure.
  EXPECT_EQ(ComputeSignature(testing::NcclTimeout(1)).id, ComputeSignature(testing::NcclTimeout(2)).id);
}

TEST(ComputeSignature, HealthyRunHasNone) {
  EXPECT_TRUE(ComputeSignature(testing::Healthy()).id.empty());
}

TEST(ComputeSignature, WithoutDiagnosisUsesFirstFailingRanksLine) {
  Signature s = ComputeSignature(testing::Unexplained(3));
  EXPECT_EQ(s.error_class, "exception");
  EXPECT_EQ(s.message, "FlashAttentionError: kernel <hex> failed") << s.message;
  EXPECT_EQ(s.id, ComputeSignature(testing::Unexplained(9)).id);
}

TEST(ComputeSignature, FallsBackToPrimaryEvidenceWithoutRankStates) {
  Analysis a = testing::KvNoRoom({.seed = 2});
  a.ranks.clear();
  Signature s = ComputeSignature(a);
  EXPECT_FALSE(s.id.empty());
  EXPECT_NE(s.message.find("Not enough memory"), std::string::npos) << s.message;
}

TEST(ComputeSignature, PinnedIdDoesNotDriftAcrossBuilds) {
  // The id is a contract across machines and days: pin one.
  Analysis a;
  a.root_cause = "cuda_graph_capture_oom";
  a.run.framework = "sglang";
  a.run.version = "0.4.6";
  RankState r;
  r.rank = 5;
  r.last_phase = "graphs";
  r.first_error = "cuda_oom";
  r.first_error_evidence.text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.";
  a.ranks.push_back(r);
  Signature s = ComputeSignature(a);
  EXPECT_EQ(s.canonical,
            "v1|sglang 0.4|graphs|cuda_graph_capture_oom|cuda_oom|torch.OutOfMemoryError: CUDA out of memory. "
            "Tried to allocate <n> MiB.");
  // The literal id, worked out by hand from FNV-1a 64 of the canonical string
  // (offset 14695981039346656037, prime 1099511628211): ids stored by users'
  // CI must not change when the hash code does.
  EXPECT_EQ(s.id, "124b495324b9");
  // FNV-1a 64's published test vectors, so the hash itself is pinned too.
  EXPECT_EQ(Fnv1a64Hex(""), "cbf29ce484222325");
  EXPECT_EQ(Fnv1a64Hex("a"), "af63dc4c8601ec8c");
}

}  // namespace
}  // namespace tpt::report
