// record_writer.cc: see record_writer.h.
#include "parser/record_writer.h"

#include "parser/event_json.h"
#include "parser/stream_parser.h"

namespace tpt {

RecordWriter::RecordWriter(std::FILE* out) : out_(out), thread_([this] { Run(); }) {}

RecordWriter::~RecordWriter() { Finish(); }

void RecordWriter::Add(const Event& e) {
  if (!filling_) {
    std::unique_lock<std::mutex> lock(mu_);
    if (free_.empty() && made_ < kInFlight) {
      ++made_;
      lock.unlock();
      filling_ = std::make_unique<Batch>();
      filling_->events.reserve(kBatch);
    } else {
      to_parser_.wait(lock, [&] { return !free_.empty(); });
      filling_ = std::move(free_.front());
      free_.pop_front();
    }
    filling_->size = 0;
  }
  Batch& b = *filling_;
  if (b.size == b.events.size()) b.events.emplace_back();
  CopyEventReusing(e, &b.events[b.size++], /*own_decoders=*/false);
  if (b.size == kBatch) Hand(std::move(filling_));
}

void RecordWriter::Hand(std::unique_ptr<Batch> batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    full_.push_back(std::move(batch));
  }
  to_writer_.notify_one();
}

void RecordWriter::Finish() {
  if (finished_) return;
  finished_ = true;
  if (filling_ && filling_->size > 0) Hand(std::move(filling_));
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  to_writer_.notify_one();
  thread_.join();
}

void RecordWriter::Run() {
  JsonOut lines;  // records not yet written (its room reused)
  auto write = [&] {
    if (!std::ferror(out_)) std::fwrite(lines.data(), 1, lines.size(), out_);
    lines.clear();
  };
  for (;;) {
    std::unique_ptr<Batch> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      to_writer_.wait(lock, [&] { return !full_.empty() || done_; });
      if (full_.empty()) break;  // done, and all written
      batch = std::move(full_.front());
      full_.pop_front();
    }
    for (size_t i = 0; i < batch->size; ++i) {
      AppendEventJsonLine(batch->events[i], &lines);
      if (lines.size() >= (1 << 20)) write();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(std::move(batch));
    }
    to_parser_.notify_one();
  }
  if (!lines.empty()) write();
}

}  // namespace tpt
