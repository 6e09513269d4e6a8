// nccl_ras.h: NCCL RAS status (the `ncclras` client's output) read as events.
//
// Since NCCL 2.24 every NCCL process runs a RAS thread; `ncclras` (or `echo
// verbose status | nc localhost 28028`) prints which processes and
// communicator ranks of the job are missing or dead. The layout is NCCL's
// (src/ras/client_support.cc, NCCL 2.30.7; docs/userguide/source/
// troubleshooting/ras.rst): a text report (`NCCL version ... compiled with
// CUDA`, `Job summary`, `Communicators...`, `Errors` with `DEAD` / `INCOMPLETE`
// sections and `#G-C (hash) INCOMPLETE` blocks listing `Rank R -- GPU g managed
// by process P on node H`; NCCL 2.24 printed `The missing rank: R`), its JSON
// form (`ncclras -f json`, NCCL >= 2.28.7: communicators[].missing_ranks[]),
// and monitor mode's lines (`ncclras -m`, NCCL >= 2.29:
// `[time] PEER_DEAD: Process P on node H managing GPU g`). Detected by
// content, never by name.
//
// Events (parser/EVENTS.md): one `ras_status` (the report's header), one
// `ras_process` per process RAS names dead or missing (`state`), one
// `ras_missing_rank` per communicator rank it lists as missing; a rank whose
// process is dead carries `dead: true`.
//
//   if (tpt::LooksLikeNcclRas(head)) events = tpt::NcclRasEvents(text, "ras.txt", 3);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parser/event.h"

namespace tpt {

// True when a file's first bytes are ncclras output (text, JSON or monitor).
bool LooksLikeNcclRas(std::string_view head);

// The largest RAS report read; a larger file is read as a log.
inline constexpr size_t kMaxNcclRasBytes = size_t{16} << 20;

// The report's events; `error` names what could not be read (a JSON report
// that does not parse), else is left empty.
std::vector<Event> NcclRasEvents(std::string_view text, const std::string& path, int source_index, std::string* error);

}  // namespace tpt
