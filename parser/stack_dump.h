// stack_dump.h: a rank's Python stack dump read as one event per thread.
//
// What the Next step of a hang asks for, beside the logs, one file a rank
// (its rank is the number the file name ends with, as for flight-recorder
// dumps), detected by its content:
//   - `py-spy dump --pid PID` (py-spy 0.3/0.4): `Process N: CMD`, `Python vX`,
//     then per thread `Thread ID (active+gil): "MainThread"` and its frames
//     `    fn (file.py:line)`, innermost first (native frames `0x... (lib.so)`);
//   - CPython's faulthandler (`faulthandler.dump_traceback(all_threads=True)`,
//     SIGUSR1 with `faulthandler.register`, `dump_traceback_later`): per thread
//     `Thread 0x... (most recent call first):` (`Current thread 0x...` for the
//     one that dumped) and `  File "file.py", line N in fn`, innermost first;
//   - gdb's `thread apply all bt` (`gdb -p PID -batch -ex 'thread apply all
//     bt'`; gdb/thread.c thr_try_catch_cmd, gdb/stack.c print_frame): per thread
//     `Thread N (Thread 0x... (LWP n) "name"):` and `#k  0x... in fn (args) at
//     file:line` / `from lib.so`; thread 1 is the main thread, and "where" is
//     the innermost frame outside the C library's waits.
// Each thread is a `stack_thread` event (parser/EVENTS.md) at its header line:
// `frames`, `where` (the innermost frame of the program, not of torch or the
// interpreter), `main` (the process's main thread).
//
//   if (tpt::LooksLikeStackDump(head)) events = tpt::StackDumpEvents(text, "stacks_rank_1.txt", 2);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parser/event.h"

namespace tpt {

// True when a file's first lines are a py-spy dump or faulthandler's threads.
bool LooksLikeStackDump(std::string_view head);

// The largest stack dump read; a larger file is read as a log.
inline constexpr size_t kMaxStackDumpBytes = size_t{16} << 20;

// One stack_thread event per thread of the dump.
std::vector<Event> StackDumpEvents(std::string_view text, const std::string& path, int source_index);

}  // namespace tpt
