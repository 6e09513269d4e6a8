// rank_resolve.h: run-level rank resolution, after every stream is parsed.
//
// Prefixes often say only part of who printed a line: SGLang `DP1 TP3` sets
// dp_rank/tp_rank, vLLM `(Worker_PP1_TP3 pid=N)` only a process name (the
// ray_actor wrapper strips it). Rules group by Event::rank, so this step
//   1. fills dp/pp/tp/ep ranks from process names (`_DP(\d+)`, `_PP(\d+)`,
//      `_TP(\d+)`, `_EP(\d+)`) where the prefix left them unset, and
//   2. gives a traceback that names no rank (its lines carry no prefix) the
//      rank of the line that announced it: the event on the traceback's
//      first line or the line before it in the same file ("[TP4] Exception
//      in run_tp_server:" then "Traceback ..."), and
//   3. lets events of one line share the rank one of them has (ShareLineRanks),
//      and reads torch's "[Rank N]" (default process group) as the global rank,
//   4. sets a global rank where rank is -1 and tp_rank is known: tp_rank when
//      the run's tp ranks never repeat across (dp, pp) (SGLang DP attention:
//      TP is already global), else (dp * pp_size + pp) * tp_size + tp with
//      sizes from a server_args event, else the largest rank seen + 1,
//   5. gives a line of a process (host and pid, NCCL's `host:pid:tid [dev]`)
//      the rank its own `ncclCommInitRank ... rank N nranks M` line names,
//      from the largest communicator that process joined (the world, not a
//      TP subgroup); a process whose lines name two ranks at that size is
//      left alone. `[dev]` is the CUDA device (local_rank), never the rank.
//   6. gives a line that says only its process (host and pid: a stack dump or
//      a vLLM VLLM_TRACE_FUNCTION file named by pid) the dp/pp/tp ranks the
//      same process's prefixed lines named (`(VllmWorker TP1 pid=4242)`),
//      then step 4's rank; a pid whose lines name two tp ranks is left alone.
// The rule is documented in parser/README.md ("Ranks").
//
//   tpt::ResolveRanks(&run.events);   // ParseRunToMemory does this
//
// A stream that cannot hold the whole run (`tptriage events`) uses the
// resolver directly: Observe() every event as it arrives (step 1 happens
// there), Assign() once enough of the run was seen to know the layout
// (the first window of events), then Observe+Assign each later event.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <set>
#include <utility>
#include <vector>

#include "parser/event.h"

namespace tpt {

class RankResolver {
 public:
  RankResolver() = default;
  RankResolver(const RankResolver&) = delete;  // last_file_ points into its own map
  RankResolver& operator=(const RankResolver&) = delete;
  // Step 1 on `e` (dp/pp/tp/ep from the process name) and learns the layout.
  void Observe(Event* e);
  // Step 2: a global rank for `e` from what was observed so far.
  void Assign(Event* e) const;
  // Step 5's map: (host, pid) -> the rank its largest communicator gave it,
  // for the processes whose lines name one rank at that size.
  std::map<std::pair<std::string, int>, int> ProcessRanks() const;

 private:
  struct Who {
    uint64_t line = 0;
    int rank = -1, local_rank = -1, dp = -1, pp = -1, tp = -1, ep = -1;
  };
  int max_tp_ = -1, max_pp_ = -1;
  // Per file, the last 16 events that said who printed them: a traceback whose
  // lines carry no prefix belongs to the line that announced it. A ring (an
  // event's entry replaces the oldest, nothing moves); the last file's is
  // kept at hand (most events follow one of the same file).
  struct Recent {
    std::array<Who, 16> who;
    uint64_t added = 0;
    void Add(const Who& w) { who[added++ % who.size()] = w; }
    size_t size() const { return added < who.size() ? added : who.size(); }
    const Who& NewestButK(size_t k) const { return who[(added - 1 - k) % who.size()]; }  // k < size()
  };
  std::map<std::string, Recent> recent_;
  const std::string* last_file_ = nullptr;  // a key of recent_
  Recent* last_recent_ = nullptr;
  int tp_size_arg_ = 0, pp_size_arg_ = 0;  // from the first server_args that has them
  std::map<int, std::set<std::pair<int, int>>> tp_groups_;  // tp rank -> (dp, pp) pairs
  // (host, pid) -> the rank its largest communicator gave it (step 5).
  struct CommRank {
    int nranks = 0, rank = -1;
    bool ambiguous = false;
  };
  std::map<std::pair<std::string, int>, CommRank> pid_ranks_;
  // (host, pid) -> the dp/pp/tp ranks its prefixed lines named (step 6).
  struct ProcessParallel {
    int dp = -1, pp = -1, tp = -1;
    bool ambiguous = false;
  };
  std::map<std::pair<std::string, int>, ProcessParallel> pid_parallel_;
};

// Events parsed from one line (a traceback's last line is its `exception` and,
// say, a `cuda_oom`) share what one of them knows about who printed it.
void ShareLineRanks(std::vector<Event>* events);

// `process_ranks` (may be null) gets the resolver's ProcessRanks(): what a
// view that streams the run (`tptriage log`) needs to tag a process's lines
// before its own ncclCommInitRank line, as the analysis does.
void ResolveRanks(std::vector<Event>* events, std::map<std::pair<std::string, int>, int>* process_ranks = nullptr);

}  // namespace tpt
