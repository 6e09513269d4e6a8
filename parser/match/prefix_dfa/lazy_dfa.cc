// lazy_dfa.cc: PrefixDfa (prefix_dfa.h), its last stage: Build runs the
// parser (regex_subset.h) and the compiler (nfa.h) over the members, then
// Match walks the lazy DFA over their NFA with its per-thread caches, as
// RE2's dfa.cc does over its program.
#include "parser/match/prefix_dfa.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <unordered_map>

#include "parser/match/prefix_dfa/nfa.h"
#include "parser/match/prefix_dfa/regex_subset.h"

namespace tpt {

namespace {

using Inst = PrefixDfa::Inst;

std::atomic<uint64_t> next_dfa_id{1};

struct VectorHash {
  size_t operator()(const std::vector<int>& v) const {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ v.size();
    for (int x : v) h = (h ^ static_cast<uint32_t>(x)) * 0x100000001b3ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace

// ---- The lazy DFA ---------------------------------------------------------------

// A thread's DFA states of one PrefixDfa. A state is a set of byte
// instructions (of members that have not matched yet) and the members that
// matched on entering it; its key is the sorted instructions, -1, the sorted
// members. Each state is a row of `stride` words that never moves until the
// cache is flushed: its transition on each byte class, then the offset in
// `accepts` of the members it matched ([count, ids...]) or -1, then its
// number (index in `keys`). A transition is the next row's address (> 0), or
// minus it when that state matched members, or 0 when no member can match any
// more (the dead state has no row), or kUnknown (not computed yet): one test
// (> 0) and no arithmetic on the hot path.
struct PrefixDfa::Cache {
  static constexpr int64_t kUnknown = INT64_MIN;
  static constexpr size_t kRowsPerBlock = 64;
  uint64_t owner = 0;
  size_t stride = 0;
  int64_t* start = nullptr;
  std::vector<std::unique_ptr<int64_t[]>> blocks;  // kRowsPerBlock rows each
  size_t rows_used = 0;  // over all blocks
  std::vector<int> accepts;
  std::unordered_map<std::vector<int>, int64_t*, VectorHash> rows;
  std::vector<const std::vector<int>*> keys;  // by state number
  size_t key_bytes = 0;
  int64_t flushes = 0;
  std::vector<int> start_key;
  // Scratch of Closure and Step.
  std::vector<uint32_t> mark, member_mark;
  uint32_t stamp = 0;
  std::vector<int> stack, matched, next, key;
  // The last short walks, by the class of their first byte (Match says why).
  // Byte k of a kept walk was in the class of bytes [lo[k], lo[k] + width[k]]
  // (a class is a range of bytes); past its length, every byte is (0, 255).
  struct Walk {
    size_t len = 0;     // bytes read; 0: none kept
    bool died = false;  // the walk ended on a dead state (else at the text's end)
    alignas(16) uint8_t lo[PrefixDfa::kWalkBytes];
    alignas(16) uint8_t width[PrefixDfa::kWalkBytes];
    std::vector<int> members;
  };
  Walk walks[PrefixDfa::kWalkSlots][2];  // two ways per slot
  uint8_t newest[PrefixDfa::kWalkSlots] = {};  // the way kept last
  int64_t walks_reused = 0;
};

namespace {

constexpr size_t kMaxCachesPerThread = 8;

// This thread's caches, the newest last; at most kMaxCachesPerThread (an
// automaton destroyed leaves its cache here until pushed out). The last one
// used is remembered apart (plain thread_locals: no guard on the hot path).
thread_local std::vector<std::unique_ptr<PrefixDfa::Cache>> thread_caches;
thread_local uint64_t last_cache_owner = 0;
thread_local PrefixDfa::Cache* last_cache = nullptr;

int64_t* RowOf(int64_t transition) { return reinterpret_cast<int64_t*>(transition); }

// Whether text[0, walk.len) is byte by byte in the classes of `walk`
// (text.size() >= walk.len). 16 bytes at a time where the text has them.
bool SameClasses(const PrefixDfa::Cache::Walk& walk, const uint8_t* text, size_t size) {
  size_t k = 0;
#if defined(__SSE2__)
  for (; k < walk.len && size - k >= 16; k += 16) {
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text + k));
    __m128i d = _mm_sub_epi8(b, _mm_load_si128(reinterpret_cast<const __m128i*>(walk.lo + k)));
    __m128i w = _mm_load_si128(reinterpret_cast<const __m128i*>(walk.width + k));
    // d <= w, unsigned: min(d, w) == d
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, w), d)) != 0xffff) return false;
  }
#endif
  for (; k < walk.len; ++k) {
    if (static_cast<uint8_t>(text[k] - walk.lo[k]) > walk.width[k]) return false;
  }
  return true;
}

// The row of `key` (not the dead state's), added (flushing the cache first
// when full) if new.
int64_t* Intern(PrefixDfa::Cache* c, const std::vector<int>& key, int max_states) {
  auto it = c->rows.find(key);
  if (it != c->rows.end()) return it->second;
  size_t bytes = c->rows_used * c->stride * 8 + c->accepts.size() * 4 + c->key_bytes;
  if (c->keys.size() >= static_cast<size_t>(max_states) || bytes >= PrefixDfa::kMaxCacheBytes) {
    ++c->flushes;
    c->rows_used = 0;  // the blocks are kept for the new rows
    c->accepts.clear();
    c->rows.clear();
    c->keys.clear();
    c->key_bytes = 0;
    c->start = Intern(c, c->start_key, max_states);
    if (key == c->start_key) return c->start;
  }
  size_t block = c->rows_used / PrefixDfa::Cache::kRowsPerBlock;
  if (block == c->blocks.size()) c->blocks.emplace_back(new int64_t[PrefixDfa::Cache::kRowsPerBlock * c->stride]);
  int64_t* row = c->blocks[block].get() + (c->rows_used % PrefixDfa::Cache::kRowsPerBlock) * c->stride;
  ++c->rows_used;
  const size_t nc = c->stride - 2;
  std::fill(row, row + nc, PrefixDfa::Cache::kUnknown);
  row[nc] = -1;
  row[nc + 1] = static_cast<int64_t>(c->keys.size());
  auto [pos, inserted] = c->rows.emplace(key, row);
  c->keys.push_back(&pos->first);
  c->key_bytes += key.size() * 4 + 64;
  auto sep = std::find(key.begin(), key.end(), -1);
  if (sep + 1 != key.end()) {
    row[nc] = static_cast<int64_t>(c->accepts.size());
    c->accepts.push_back(static_cast<int>(key.end() - sep - 1));
    c->accepts.insert(c->accepts.end(), sep + 1, key.end());
  }
  return row;
}

}  // namespace

StatusOr<std::shared_ptr<const PrefixDfa>> PrefixDfa::Build(const std::vector<std::string>& regexes, int max_states) {
  auto dfa = std::make_shared<PrefixDfa>();
  dfa->id_ = next_dfa_id.fetch_add(1);
  dfa->num_members_ = regexes.size();
  dfa->max_states_ = std::max(max_states, 4);
  prefix_dfa::Compiler compiler(&dfa->prog_);
  for (size_t m = 0; m < regexes.size(); ++m) {
    auto where = [&] { return "prefix regex " + std::to_string(m) + " `" + regexes[m] + "`: "; };
    prefix_dfa::Node tree;
    std::string error;
    if (!prefix_dfa::ParseRegexSubset(regexes[m], &tree, &error)) {
      return InvalidArgumentError(where() + error + "; the automaton supports the subset of RE2 in parser/match/prefix_dfa.h");
    }
    compiler.member = static_cast<int>(m);
    int match = compiler.Match();
    dfa->entries_.push_back(compiler.Emit(tree, match));
    if (compiler.overflow()) {
      return InvalidArgumentError(where() + "more than " + std::to_string(kMaxInstructions) +
                                  " automaton instructions (counted repeats too large)");
    }
  }
  // Byte classes: bytes no range tells apart share a class.
  bool split[257] = {};
  for (const Inst& i : dfa->prog_) {
    if (i.op == Inst::kByte && i.lo <= i.hi) {
      split[i.lo] = true;
      split[i.hi + 1] = true;
    }
  }
  // A class is a range of bytes: [class_lo_[c], class_lo_[c] + class_width_[c]].
  int cls = 0;
  for (int b = 0; b < 256; ++b) {
    if (b > 0 && split[b]) {
      dfa->class_width_[cls] = static_cast<uint8_t>(b - 1 - dfa->class_lo_[cls]);
      dfa->class_lo_[++cls] = static_cast<uint8_t>(b);
    }
    dfa->byte_class_[b] = static_cast<uint8_t>(cls);
  }
  dfa->class_width_[cls] = static_cast<uint8_t>(255 - dfa->class_lo_[cls]);
  dfa->num_classes_ = cls + 1;
  return std::shared_ptr<const PrefixDfa>(std::move(dfa));
}

void PrefixDfa::Closure(Cache* c, const int* entries, size_t n, std::vector<int>* key) const {
  if (++c->stamp == 0) {
    std::fill(c->mark.begin(), c->mark.end(), 0);
    std::fill(c->member_mark.begin(), c->member_mark.end(), 0);
    c->stamp = 1;
  }
  const uint32_t stamp = c->stamp;
  key->clear();
  c->matched.clear();
  c->stack.assign(entries, entries + n);
  while (!c->stack.empty()) {
    int i = c->stack.back();
    c->stack.pop_back();
    if (c->mark[static_cast<size_t>(i)] == stamp) continue;
    c->mark[static_cast<size_t>(i)] = stamp;
    const Inst& in = prog_[static_cast<size_t>(i)];
    switch (in.op) {
      case Inst::kByte:
        if (in.lo <= in.hi) key->push_back(i);
        break;
      case Inst::kAlt:
        c->stack.push_back(in.out1);
        c->stack.push_back(in.out);
        break;
      case Inst::kMatch:
        c->matched.push_back(in.member);
        c->member_mark[static_cast<size_t>(in.member)] = stamp;
        break;
    }
  }
  // A member that matched is decided: its threads cannot change the answer.
  if (!c->matched.empty()) {
    key->erase(std::remove_if(key->begin(), key->end(),
                              [&](int i) { return c->member_mark[static_cast<size_t>(prog_[static_cast<size_t>(i)].member)] == stamp; }),
               key->end());
  }
  std::sort(key->begin(), key->end());
  key->push_back(-1);
  std::sort(c->matched.begin(), c->matched.end());
  key->insert(key->end(), c->matched.begin(), c->matched.end());
}

PrefixDfa::Cache* PrefixDfa::ThreadCache() const {
  if (last_cache_owner == id_) return last_cache;
  auto& list = thread_caches;
  Cache* found = nullptr;
  for (auto& c : list) {
    if (c->owner == id_) found = c.get();
  }
  if (!found) {
    if (list.size() >= kMaxCachesPerThread) list.erase(list.begin());
    auto c = std::make_unique<Cache>();
    c->owner = id_;
    c->stride = static_cast<size_t>(num_classes_) + 2;
    c->mark.assign(prog_.size(), 0);
    c->member_mark.assign(num_members_, 0);
    Closure(c.get(), entries_.data(), entries_.size(), &c->start_key);
    c->start = Intern(c.get(), c->start_key, max_states_);
    list.push_back(std::move(c));
    found = list.back().get();
  }
  last_cache_owner = id_;
  last_cache = found;
  return found;
}

int64_t PrefixDfa::Step(Cache* c, int64_t* row, int cls) const {
  const size_t nc = static_cast<size_t>(num_classes_);
  const std::vector<int>& from = *c->keys[static_cast<size_t>(row[nc + 1])];
  const uint8_t b = class_lo_[cls];
  c->next.clear();
  for (int i : from) {
    if (i < 0) break;
    const Inst& in = prog_[static_cast<size_t>(i)];
    if (in.lo <= b && b <= in.hi) c->next.push_back(in.out);
  }
  Closure(c, c->next.data(), c->next.size(), &c->key);
  if (c->key.size() == 1) {  // no thread left, nothing matched: dead
    row[cls] = 0;
    return 0;
  }
  int64_t flushes = c->flushes;
  int64_t* to = Intern(c, c->key, max_states_);
  int64_t t = reinterpret_cast<int64_t>(to);
  if (to[nc] >= 0) t = -t;
  if (c->flushes == flushes) row[cls] = t;  // else `row` is gone
  return t;
}

bool PrefixDfa::Match(std::string_view text, std::vector<int>* members) const {
  Cache* c = last_cache_owner == id_ ? last_cache : ThreadCache();
  const size_t nc = static_cast<size_t>(num_classes_);
  const uint8_t* bc = byte_class_;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t* const end = p + text.size();
  // A walk's answer depends only on the classes of the bytes it read before
  // it died (or the text ended), and lines of one kind mostly read the same
  // classes where their bytes differ (a timestamp's digits). So a text is
  // first checked against the last two walks kept for its first byte's class
  // (modulo kWalkSlots): 16 independent range tests at a time, where the walk
  // is a chain of dependent loads (~5 cycles a byte).
  Cache::Walk* memo = nullptr;  // where this walk will be kept
  if (p != end) {
    const size_t slot = bc[p[0]] % kWalkSlots;
    for (int way : {int{c->newest[slot]}, 1 - c->newest[slot]}) {
      Cache::Walk& w = c->walks[slot][way];
      if (w.len > 0 && (w.died ? text.size() >= w.len : text.size() == w.len) && SameClasses(w, p, text.size())) {
        members->assign(w.members.begin(), w.members.end());
        ++c->walks_reused;
        return !members->empty();
      }
    }
    c->newest[slot] = static_cast<uint8_t>(1 - c->newest[slot]);
    memo = &c->walks[slot][c->newest[slot]];
  }
  members->clear();
  int64_t* r = c->start;  // the current state's row
  auto take = [&](int64_t a) {
    const int* m = c->accepts.data() + a;
    for (int k = 1; k <= m[0]; ++k) members->push_back(m[k]);
  };
  if (r[nc] >= 0) take(r[nc]);
  bool died = false;
  for (;;) {
    // The hot path, 4 bytes a turn while it can: ~6 instructions a byte.
    int64_t next;
    for (;;) {
      if (end - p >= 4) {
        next = r[bc[p[0]]];
        if (next <= 0) { p += 1; break; }
        r = RowOf(next);
        next = r[bc[p[1]]];
        if (next <= 0) { p += 2; break; }
        r = RowOf(next);
        next = r[bc[p[2]]];
        if (next <= 0) { p += 3; break; }
        r = RowOf(next);
        next = r[bc[p[3]]];
        p += 4;
        if (next <= 0) break;
        r = RowOf(next);
      } else {
        if (p == end) goto done;
        next = r[bc[*p++]];
        if (next <= 0) break;
        r = RowOf(next);
      }
    }
    // On p[-1]: not computed yet, dead, or members matched.
    if (next == Cache::kUnknown) {
      next = Step(c, r, bc[p[-1]]);
      if (next > 0) {
        r = RowOf(next);
        continue;
      }
    }
    if (next == 0) {
      died = true;
      break;
    }
    r = RowOf(-next);
    take(r[nc]);
  }
done:
  if (members->size() > 1) std::sort(members->begin(), members->end());
  const size_t read = static_cast<size_t>(p - reinterpret_cast<const uint8_t*>(text.data()));
  if (memo != nullptr && read <= kWalkBytes) {
    const uint8_t* q = reinterpret_cast<const uint8_t*>(text.data());
    size_t k = 0;
    for (; k < read; ++k) {
      const size_t cls = bc[q[k]];
      memo->lo[k] = class_lo_[cls];
      memo->width[k] = class_width_[cls];
    }
    static_assert(kWalkBytes % 16 == 0);
    for (; k % 16 != 0; ++k) {  // SameClasses reads whole 16-byte chunks
      memo->lo[k] = 0;
      memo->width[k] = 255;
    }
    memo->len = read;
    memo->died = died;
    memo->members.assign(members->begin(), members->end());
  }
  return !members->empty();
}

int64_t PrefixDfa::FlushesOnThisThread() const { return ThreadCache()->flushes; }

int64_t PrefixDfa::WalksReusedOnThisThread() const { return ThreadCache()->walks_reused; }

}  // namespace tpt
