// record_writer.h: `tptriage events`' JSON Lines records (event_json.h)
// written on a second thread while the parser goes on.
//
// The records of a large log cost about as much as its parse; written here,
// the parse and the writing share two cores. Add() copies what the record
// needs into a batch (its slots reused: CopyEventReusing), a full batch goes to the
// writer, which turns each event into its record and hands the file 1 MiB at
// a time: the same bytes in the same order as writing them in place. At most
// kInFlight batches exist; a parser faster than the writer waits for a free
// one. After a failed write nothing more is tried (the caller names the
// failure from ferror, as before).
//
// The events' FormatSet must outlive the writer (the copies use its decoders).
//
//   RecordWriter w(stdout);
//   for (...) w.Add(event);   // a copy: `event` may change right after
//   w.Finish();               // all written, the thread ended
#pragma once

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "parser/event.h"
#include "parser/json_text.h"

namespace tpt {

class RecordWriter {
 public:
  static constexpr size_t kBatch = 256;     // events handed over at once
  static constexpr size_t kInFlight = 16;   // batches at most (filling, queued, being written)

  explicit RecordWriter(std::FILE* out);
  ~RecordWriter();  // Finish()
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  void Add(const Event& e);
  // Writes what is left and ends the thread; the file's own buffer is the
  // caller's to flush. Called again: nothing.
  void Finish();

 private:
  struct Batch {
    std::vector<Event> events;  // slots, reused
    size_t size = 0;
  };
  void Run();
  void Hand(std::unique_ptr<Batch> batch);  // to the writer

  std::FILE* out_;
  std::unique_ptr<Batch> filling_;
  std::mutex mu_;
  std::condition_variable to_writer_, to_parser_;
  std::deque<std::unique_ptr<Batch>> full_, free_;  // guarded by mu_
  size_t made_ = 0;                                  // batches made (parser side)
  bool done_ = false;                                // guarded by mu_
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace tpt
