// event.h: the typed event the parser produces and everything downstream reads.
//
// One Event per log line (or multi-line block, e.g. a Python traceback) that a
// pattern in parser/formats/*.json recognised. Kinds are listed with their
// fields in parser/EVENTS.md; memory fields are in BYTES (the pattern's unit
// converts "GB"/"GiB"/"MiB"), times in seconds, fractions as 0..1 doubles.
//
//   class Printer : public tpt::EventSink {
//     bool OnEvent(const tpt::Event& e) override { Print(e.kind, e.rank); return true; }
//   };
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpt {

class DeferredDecoder;
class JsonOut;  // parser/json_text.h

// One field as read from an Event: absent, or a value. A view: valid while
// the Event it came from lives and is not changed. Reading a value of another
// type gives the fallback (never throws).
class FieldValue {
 public:
  FieldValue() = default;
  explicit FieldValue(const nlohmann::json* v) : v_(v) {}

  bool present() const { return v_ != nullptr; }
  bool is_number() const { return v_ && v_->is_number(); }
  bool is_string() const { return v_ && v_->is_string(); }
  bool is_bool() const { return v_ && v_->is_boolean(); }
  bool is_object() const { return v_ && v_->is_object(); }
  double number(double otherwise = 0) const { return is_number() ? v_->get<double>() : otherwise; }
  std::string string(std::string otherwise = "") const { return is_string() ? v_->get<std::string>() : otherwise; }
  bool boolean(bool otherwise = false) const { return is_bool() ? v_->get<bool>() : otherwise; }
  // The value as JSON (null when absent): objects, arrays, or to convert.
  const nlohmann::json& json() const { return v_ ? *v_ : Null(); }

 private:
  static const nlohmann::json& Null() {
    static const nlohmann::json null;
    return null;
  }
  const nlohmann::json* v_ = nullptr;
};

struct Event {
  std::string kind;        // e.g. "cuda_oom", "kv_pool_alloc" (parser/EVENTS.md)
  std::string family;      // format family that matched: "sglang", "vllm", "nccl", ...
  std::string pattern_id;  // id of the pattern inside its format file
  bool consequence = false;  // launcher noise caused by another error (sigquit, ChildFailedError, EngineDeadError)

  // Where it came from.
  int source = 0;          // index of the input stream (file) in the run
  std::string file;        // path as given by the user ("-" for stdin)
  uint64_t line = 0;       // 1-based line number in the (decompressed) stream
  uint64_t offset = 0;     // byte offset of the line start in the (decompressed) stream

  // Who printed it. -1 / empty when the log does not say.
  int rank = -1;           // global rank (tp rank for single-node servers)
  int local_rank = -1;     // local rank / device index when that is all a prefix says
  std::string host;
  int pid = -1;
  int dp_rank = -1, pp_rank = -1, tp_rank = -1, ep_rank = -1;
  std::string process;     // process role from a prefix: "EngineCore_DP0", "APIServer", "Worker_TP1", "draft", ...
  std::optional<double> ts;  // seconds since the Unix epoch (UTC assumed); seconds since midnight when only a time of day is printed (ts_is_time_of_day)
  bool ts_is_time_of_day = false;

  std::string text;        // the line after wrapper prefixes were stripped (capped, see parser/README)
  std::vector<std::string> extra_lines;  // continuation lines that belong to it (traceback body)

  // ---- Reading fields: everything outside the parser reads through these ----
  // A named field (bytes, seconds, counts, strings, the "args" object, ...):
  //   if (auto v = e.Get("avail_bytes"); v.is_number()) Use(v.number());
  FieldValue Get(std::string_view name) const;
  // Metadata of stripped wrapper prefixes by key: "docker_ts", "srun", the
  // producer prefix's groups under "prefix", ...
  FieldValue Wrapper(std::string_view key) const;
  // False when the event cannot have field `name` (its pattern never sets
  // it), without decoding; true when Get(name) may find it.
  bool MayHaveField(std::string_view name) const;
  // Every field (or wrapper key) as one JSON object: a copy, for output and
  // for the few readers that walk all fields (server_args, memory_profile).
  nlohmann::json FieldsJson() const { return Decoded().fields_; }
  nlohmann::json WrapperJson() const { return Decoded().wrapper_; }
  // Calls f(std::string_view name, FieldValue value) for each field (or
  // wrapper key) in name order, copying nothing.
  template <class F> void ForEachField(F&& f) const { ForEach(Decoded().fields_, f); }
  template <class F> void ForEachWrapper(F&& f) const { ForEach(Decoded().wrapper_, f); }
  // Writing, for tests and fuzzers that build events by hand.
  void Set(std::string_view name, nlohmann::json value) { Decoded().fields_[std::string(name)] = std::move(value); }
  void SetFields(nlohmann::json object) { Decoded().fields_ = std::move(object); }

  // The parser's own access to the stored values (parser/ only: the
  // representation may change; readers downstream use Get and Wrapper).
  const nlohmann::json& fields() const { return Decoded().fields_; }
  nlohmann::json& fields() { return Decoded().fields_; }
  const nlohmann::json& wrapper() const { return Decoded().wrapper_; }
  nlohmann::json& wrapper() { return Decoded().wrapper_; }

  // ---- Decoded on first read ----
  // The stream parser types what it needs to find, order and attribute an
  // event (kind, rank, time, place) and keeps the captures of the pattern and
  // of the producer prefix as places in `text`; fields() and wrapper() turn
  // them into values on first read (most events of a large log are counted,
  // never read). Reading one Event from two threads at once is therefore a
  // race, as for any cache: call Decoded() first, or copy it. Change `text`
  // only after Decoded() (the places point into it).
  struct Deferred {
    bool pending = false;
    std::shared_ptr<const DeferredDecoder> decoder;  // kept after decoding: reused by the next event
    std::vector<uint32_t> spans;  // per regex group: begin, length in `text` (begin kNoGroup: not taken)
    static constexpr uint32_t kNoGroup = 0xffffffffu;
  };
  const Event& Decoded() const {
    if (deferred_fields_.pending || deferred_prefix_.pending) Decode();
    return *this;
  }
  Event& Decoded() {
    static_cast<const Event*>(this)->Decoded();
    return *this;
  }
  // The parser's own: the values and what is still to decode into them.
  mutable nlohmann::json fields_ = nlohmann::json::object();
  mutable nlohmann::json wrapper_ = nlohmann::json::object();
  mutable Deferred deferred_fields_;  // into fields_
  mutable Deferred deferred_prefix_;  // into wrapper_["prefix"]

 private:
  void Decode() const;
  template <class F> static void ForEach(const nlohmann::json& object, F& f) {
    if (!object.is_object()) return;
    for (auto it = object.begin(); it != object.end(); ++it) f(std::string_view(it.key()), FieldValue(&*it));
  }
};

// Turns captures (Event::Deferred::spans over a text) into an object's values:
// a pattern's fields, or a producer prefix's metadata (parser/format_set.cc).
class DeferredDecoder {
 public:
  virtual ~DeferredDecoder() = default;
  // Refills `out` (made an object) in place. A producer prefix's decoder is
  // given the whole wrapper object and fills its "prefix" key, inserting it
  // (from a node its thread kept aside) when absent.
  virtual void Decode(std::string_view text, const std::vector<uint32_t>& spans, nlohmann::json* out) const = 0;
  // Appends, as JSON text, what Decode would put in place: the fields object,
  // or the value of a producer prefix's "prefix" key; byte for byte its
  // dump() (`tptriage events`: no object built, parser/json_text.h).
  virtual void AppendJson(std::string_view text, const std::vector<uint32_t>& spans, JsonOut* out) const = 0;
  // False when no decoding can give the key `name`: a reader looking for a
  // field most patterns lack need not decode.
  virtual bool MayHave(std::string_view name) const = 0;
};

inline void Event::Decode() const {
  if (deferred_fields_.pending) {
    deferred_fields_.pending = false;
    deferred_fields_.decoder->Decode(text, deferred_fields_.spans, &fields_);
  }
  if (deferred_prefix_.pending) {
    deferred_prefix_.pending = false;
    if (!wrapper_.is_object()) wrapper_ = nlohmann::json::object();
    deferred_prefix_.decoder->Decode(text, deferred_prefix_.spans, &wrapper_);
  }
}

inline FieldValue Event::Get(std::string_view name) const {
  const nlohmann::json& f = Decoded().fields_;
  auto it = f.find(name);
  return FieldValue(it == f.end() ? nullptr : &*it);
}

inline bool Event::MayHaveField(std::string_view name) const {
  if (deferred_fields_.pending) return deferred_fields_.decoder->MayHave(name);
  return fields_.is_object() && fields_.contains(name);
}

inline FieldValue Event::Wrapper(std::string_view key) const {
  const nlohmann::json& w = Decoded().wrapper_;
  if (!w.is_object()) return FieldValue();
  auto it = w.find(key);
  return FieldValue(it == w.end() ? nullptr : &*it);
}

// Receives events in stream order. Return false to stop early.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual bool OnEvent(const Event& event) = 0;
};

}  // namespace tpt
