// pickle_reader.cc: the data opcodes of pickle protocols 2-5; see pickle_reader.h.
// Opcode values and meanings: CPython Lib/pickletools.py (the reference of the format).
#include "parser/pickle_reader.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/strings.h"

namespace tpt {

// A value as the pickle builds it, in the document's arena: containers are
// shared, because a memo reference (BINGET) names the same dict that later
// SETITEMS keep filling. A string views the pickle's bytes where they are
// valid UTF-8 (torch writes UTF-8), else a repaired copy the arena keeps.
struct PickleNode {
  enum Kind { kNone, kBool, kInt, kFloat, kStr, kList, kTuple, kDict } kind = kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string_view s;
  std::vector<PickleNode*> items;  // a dict's as key, value, key, value
};

// Owns every node of one read (one allocation per block of nodes, not one a
// value: the reader's time went to malloc and shared_ptr counts) and the
// budget of values its conversions to JSON may still expand to.
struct PickleArena {
  std::deque<PickleNode> nodes;
  std::deque<std::string> repaired;  // strings that were not valid UTF-8
  PickleLimits limits;
  std::string name;
  size_t budget = 0;
};

namespace {

using Node = PickleNode;
using NodeP = PickleNode*;

const char* RefusedName(uint8_t op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
  }
}

std::string Hex(uint8_t op) {
  static const char* d = "0123456789abcdef";
  return std::string("0x") + d[op >> 4] + d[op & 15];
}

class Reader {
 public:
  // A pickle can put a container into itself through the memo (`]q\0h\0a`):
  // the arena owns every node, so a cycle leaks nothing (ToJson refuses it).
  Reader(std::string_view bytes, const std::string& name, const PickleLimits& limits, PickleArena* arena)
      : in_(bytes), name_(name), limits_(limits), arena_(arena) {}

  // Runs to STOP (done) or to the end of the bytes (cut); an error for anything else.
  Status Run() {
    while (pos_ < in_.size()) {
      const size_t at = pos_;
      const uint8_t op = static_cast<uint8_t>(in_[pos_++]);
      Status s = Step(op, at);
      if (!s.ok()) return s;
      if (stopped_) return OkStatus();
      if (cut_) return OkStatus();
    }
    cut_ = true;
    return OkStatus();
  }

  bool cut() const { return cut_; }
  size_t pos() const { return pos_; }

  // The finished value (or, for a cut pickle, the outermost value with its
  // open containers closed as they stood).
  StatusOr<NodeP> Result() {
    if (cut_) {
      while (!marks_.empty()) {
        size_t m = marks_.back();
        marks_.pop_back();
        if (m == 0 || m > stack_.size()) {
          stack_.resize(std::min(m, stack_.size()));
          continue;
        }
        NodeP target = stack_[m - 1];
        if (target->kind == Node::kDict) {
          for (size_t k = m; k + 1 < stack_.size(); k += 2) {
            target->items.push_back(stack_[k]);
            target->items.push_back(stack_[k + 1]);
          }
        } else if (target->kind == Node::kList) {
          for (size_t k = m; k < stack_.size(); ++k) target->items.push_back(stack_[k]);
        }
        stack_.resize(m);
      }
    }
    if (stack_.empty()) return DataLossError(name_ + ": the pickle holds no complete value (cut at byte " +
                                             std::to_string(pos_) + "); the file was cut: dump it again");
    return stack_.front();
  }

 private:
  Status Error(size_t at, const std::string& what) {
    return InvalidArgumentError(name_ + ": " + what + " at byte " + std::to_string(at) +
                                "; not a flight-recorder dump tptriage can read (pass the file torch wrote)");
  }
  // Reads n bytes; false (and the pickle marked cut) when fewer are left.
  bool Take(size_t n, std::string_view* out) {
    if (in_.size() - pos_ < n) {
      cut_ = true;
      pos_ = in_.size();
      return false;
    }
    *out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool TakeUint(size_t n, uint64_t* v) {
    std::string_view b;
    if (!Take(n, &b)) return false;
    *v = 0;
    for (size_t k = 0; k < n; ++k) *v |= uint64_t{static_cast<uint8_t>(b[k])} << (8 * k);
    return true;
  }
  Status Push(NodeP n, size_t at) {
    if (++nodes_ > limits_.max_nodes) return Error(at, "more than " + std::to_string(limits_.max_nodes) + " values");
    stack_.push_back(std::move(n));
    return OkStatus();
  }
  NodeP Make(Node::Kind k) {
    NodeP n = &arena_->nodes.emplace_back();
    n->kind = k;
    return n;
  }
  Status PushInt(int64_t v, size_t at) {
    NodeP n = Make(Node::kInt);
    n->i = v;
    return Push(std::move(n), at);
  }
  // A string's bytes as UTF-8: a byte that starts no valid sequence becomes
  // U+FFFD (torch writes UTF-8; a hostile dump's bytes must not reach the
  // JSON writer, which refuses them).
  Status PushStr(std::string_view s, size_t at) {
    NodeP n = Make(Node::kStr);
    size_t i = 0;
    for (size_t len; i < s.size() && (len = Utf8SequenceLength(s, i)) != 0;) i += len;
    if (i == s.size()) {
      n->s = s;  // valid: a view of the pickle's bytes
      return Push(n, at);
    }
    std::string& fixed = arena_->repaired.emplace_back();
    fixed.reserve(s.size() + 8);
    for (i = 0; i < s.size();) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        fixed += "\xEF\xBF\xBD";
        ++i;
      } else {
        fixed.append(s.data() + i, len);
        i += len;
      }
    }
    n->s = fixed;
    return Push(n, at);
  }
  // The index of the topmost MARK, which is popped.
  StatusOr<size_t> PopMark(size_t at, const char* op) {
    if (marks_.empty()) return Error(at, std::string(op) + " without a MARK");
    size_t m = marks_.back();
    marks_.pop_back();
    if (m > stack_.size()) return Error(at, std::string(op) + ": the stack is shorter than its MARK");
    return m;
  }
  Status Need(size_t n, size_t at, const char* op) {
    size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) return Error(at, std::string(op) + " on a stack too short");
    return OkStatus();
  }
  Status AddTo(NodeP target, size_t from, size_t at, const char* op) {
    if (target->kind == Node::kDict) {
      if ((stack_.size() - from) % 2) return Error(at, std::string(op) + " with a key and no value");
    } else if (target->kind != Node::kList) {
      return Error(at, std::string(op) + " into something that is not a " +
                           (std::strcmp(op, "SETITEMS") == 0 || std::strcmp(op, "SETITEM") == 0 ? "dict" : "list"));
    }
    if ((target->kind == Node::kDict) != (op[0] == 'S'))
      return Error(at, std::string(op) + " into a " + (target->kind == Node::kDict ? "dict" : "list"));
    target->items.insert(target->items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    stack_.resize(from);
    return OkStatus();
  }
  Status Memo(uint64_t idx, size_t at) {
    if (stack_.empty()) return Error(at, "memo store with an empty stack");
    if (idx >= limits_.max_memo) return Error(at, "memo index " + std::to_string(idx) + " past the limit");
    if (memo_count_ >= limits_.max_memo) return Error(at, "more than " + std::to_string(limits_.max_memo) + " memo slots");
    // Picklers number the slots 0, 1, 2...: a vector; a far index (a
    // hand-made pickle) in the map, so no index makes a huge vector.
    if (idx < memo_vec_.size() + 4096) {
      if (idx >= memo_vec_.size()) memo_vec_.resize(idx + 1, nullptr);
      memo_count_ += memo_vec_[idx] == nullptr;
      memo_vec_[idx] = stack_.back();
    } else {
      memo_count_ += memo_.count(static_cast<uint32_t>(idx)) == 0;
      memo_[static_cast<uint32_t>(idx)] = stack_.back();
    }
    return OkStatus();
  }
  Status Get(uint64_t idx, size_t at) {
    NodeP n = nullptr;
    if (idx < memo_vec_.size()) {
      n = memo_vec_[idx];
    } else if (auto it = memo_.find(static_cast<uint32_t>(idx)); idx < limits_.max_memo && it != memo_.end()) {
      n = it->second;
    }
    if (idx >= limits_.max_memo || n == nullptr) return Error(at, "memo reference " + std::to_string(idx) + " to nothing");
    return Push(n, at);
  }
  Status Tuple(size_t n, size_t at, const char* op) {
    TPT_RETURN_IF_ERROR(Need(n, at, op));
    NodeP t = Make(Node::kTuple);
    t->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return Push(std::move(t), at);
  }

  Status Step(uint8_t op, size_t at) {
    std::string_view b;
    uint64_t u = 0;
    switch (op) {
      case 0x80:  // PROTO
        if (!Take(1, &b)) return OkStatus();
        if (static_cast<uint8_t>(b[0]) < 2 || static_cast<uint8_t>(b[0]) > 5)
          return Error(at, "pickle protocol " + std::to_string(static_cast<uint8_t>(b[0])) + " (2 to 5 are read)");
        return OkStatus();
      case 0x95:  // FRAME: a length; the frame's opcodes follow inline
        TakeUint(8, &u);
        return OkStatus();
      case '}': return Push(Make(Node::kDict), at);   // EMPTY_DICT
      case ']': return Push(Make(Node::kList), at);   // EMPTY_LIST
      case ')': return Push(Make(Node::kTuple), at);  // EMPTY_TUPLE
      case '(':                                        // MARK
        if (marks_.size() >= limits_.max_depth) return Error(at, "nested deeper than " + std::to_string(limits_.max_depth));
        marks_.push_back(stack_.size());
        return OkStatus();
      case 'd': case 'l': {  // DICT, LIST: from the items since the MARK
        auto m = PopMark(at, op == 'd' ? "DICT" : "LIST");
        if (!m.ok()) return m.status();
        NodeP c = Make(op == 'd' ? Node::kDict : Node::kList);
        if (op == 'd' && (stack_.size() - *m) % 2) return Error(at, "DICT with a key and no value");
        c->items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(*m), stack_.end());
        stack_.resize(*m);
        return Push(std::move(c), at);
      }
      case 't': {  // TUPLE
        auto m = PopMark(at, "TUPLE");
        if (!m.ok()) return m.status();
        return Tuple(stack_.size() - *m, at, "TUPLE");
      }
      case 0x85: return Tuple(1, at, "TUPLE1");
      case 0x86: return Tuple(2, at, "TUPLE2");
      case 0x87: return Tuple(3, at, "TUPLE3");
      case 's': case 'a': {  // SETITEM, APPEND
        const char* name = op == 's' ? "SETITEM" : "APPEND";
        const size_t n = op == 's' ? 2 : 1;
        TPT_RETURN_IF_ERROR(Need(n + 1, at, name));
        return AddTo(stack_[stack_.size() - n - 1], stack_.size() - n, at, name);
      }
      case 'u': case 'e': {  // SETITEMS, APPENDS
        const char* name = op == 'u' ? "SETITEMS" : "APPENDS";
        auto m = PopMark(at, name);
        if (!m.ok()) return m.status();
        if (*m == 0) return Error(at, std::string(name) + " with nothing to add to");
        return AddTo(stack_[*m - 1], *m, at, name);
      }
      case 'X': case 0x8c: case 0x8d: {  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
        if (!TakeUint(op == 'X' ? 4 : op == 0x8c ? 1 : 8, &u)) return OkStatus();
        if (u > in_.size()) {  // a length past the file: cut
          cut_ = true;
          pos_ = in_.size();
          return OkStatus();
        }
        if (!Take(static_cast<size_t>(u), &b)) return OkStatus();
        return PushStr(b, at);
      }
      case 'J':  // BININT
        if (!TakeUint(4, &u)) return OkStatus();
        return PushInt(static_cast<int32_t>(static_cast<uint32_t>(u)), at);
      case 'K':  // BININT1
        if (!TakeUint(1, &u)) return OkStatus();
        return PushInt(static_cast<int64_t>(u), at);
      case 'M':  // BININT2
        if (!TakeUint(2, &u)) return OkStatus();
        return PushInt(static_cast<int64_t>(u), at);
      case 0x8a: {  // LONG1: n bytes, little-endian two's complement
        if (!TakeUint(1, &u)) return OkStatus();
        const size_t n = static_cast<size_t>(u);
        if (n > 8) return Error(at, "LONG1 of " + std::to_string(n) + " bytes (more than 64 bits)");
        uint64_t v = 0;
        if (n > 0 && !TakeUint(n, &v)) return OkStatus();
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign
        return PushInt(static_cast<int64_t>(v), at);
      }
      case 'G': {  // BINFLOAT: big-endian double
        if (!Take(8, &b)) return OkStatus();
        uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits = (bits << 8) | static_cast<uint8_t>(b[k]);
        NodeP n = Make(Node::kFloat);
        std::memcpy(&n->f, &bits, sizeof bits);
        return Push(std::move(n), at);
      }
      case 'N': return Push(Make(Node::kNone), at);
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        NodeP n = Make(Node::kBool);
        n->b = op == 0x88;
        return Push(std::move(n), at);
      }
      case 'q':  // BINPUT
        if (!TakeUint(1, &u)) return OkStatus();
        return Memo(u, at);
      case 'r':  // LONG_BINPUT
        if (!TakeUint(4, &u)) return OkStatus();
        return Memo(u, at);
      case 0x94:  // MEMOIZE
        return Memo(memo_count_, at);
      case 'h':  // BINGET
        if (!TakeUint(1, &u)) return OkStatus();
        return Get(u, at);
      case 'j':  // LONG_BINGET
        if (!TakeUint(4, &u)) return OkStatus();
        return Get(u, at);
      case '0':  // POP
        if (stack_.empty()) return Error(at, "POP of an empty stack");
        stack_.pop_back();
        return OkStatus();
      case '.':  // STOP
        if (stack_.size() != 1 || !marks_.empty()) return Error(at, "STOP with " + std::to_string(stack_.size()) + " values left");
        stopped_ = true;
        return OkStatus();
      default:
        if (const char* refused = RefusedName(op))
          return Error(at, std::string("opcode ") + refused + " (" + Hex(op) +
                               ") would construct an object or call code; refused (only data is read)");
        return Error(at, "opcode " + Hex(op) + " is not one of the data opcodes torch's pickler writes");
    }
  }

  std::string_view in_;
  const std::string& name_;
  PickleLimits limits_;
  size_t pos_ = 0;
  size_t nodes_ = 0;
  bool stopped_ = false, cut_ = false;
  PickleArena* arena_;
  std::vector<NodeP> stack_;
  std::vector<size_t> marks_;
  std::vector<NodeP> memo_vec_;               // slots 0..n (see Memo)
  std::unordered_map<uint32_t, NodeP> memo_;  // slots far past them
  size_t memo_count_ = 0;                     // slots filled
};

// Node -> JSON, bounded: a container reached through itself, or a value
// expanded past the node limit by memo references, is refused.
Status ToJson(const Node& n, size_t depth, const PickleLimits& limits, size_t* budget, const std::string& name,
              nlohmann::json* out) {
  if (depth > limits.max_depth) return InvalidArgumentError(name + ": values nested deeper than " + std::to_string(limits.max_depth) + " (or a container that holds itself)");
  if (*budget == 0) return InvalidArgumentError(name + ": the pickle expands to more than " + std::to_string(limits.max_nodes) + " values");
  --*budget;
  switch (n.kind) {
    case Node::kNone: *out = nullptr; return OkStatus();
    case Node::kBool: *out = n.b; return OkStatus();
    case Node::kInt: *out = n.i; return OkStatus();
    case Node::kFloat: *out = n.f; return OkStatus();
    case Node::kStr: *out = std::string(n.s); return OkStatus();
    case Node::kList: case Node::kTuple: {
      *out = nlohmann::json::array();
      for (const NodeP& c : n.items) {
        nlohmann::json v;
        TPT_RETURN_IF_ERROR(ToJson(*c, depth + 1, limits, budget, name, &v));
        out->push_back(std::move(v));
      }
      return OkStatus();
    }
    case Node::kDict: {
      *out = nlohmann::json::object();
      for (size_t k = 0; k + 1 < n.items.size(); k += 2) {
        const Node& key = *n.items[k];
        std::string ks = key.kind == Node::kStr ? std::string(key.s) : key.kind == Node::kInt ? std::to_string(key.i) : std::string("?");
        nlohmann::json v;
        TPT_RETURN_IF_ERROR(ToJson(*n.items[k + 1], depth + 1, limits, budget, name, &v));
        (*out)[ks] = std::move(v);
      }
      return OkStatus();
    }
  }
  return OkStatus();
}

}  // namespace

bool LooksLikePickle(std::string_view head) {
  return head.size() >= 3 && static_cast<uint8_t>(head[0]) == 0x80 && static_cast<uint8_t>(head[1]) >= 2 &&
         static_cast<uint8_t>(head[1]) <= 5;
}

bool PickleRef::is_dict() const { return node_ && node_->kind == Node::kDict; }
bool PickleRef::is_list() const { return node_ && (node_->kind == Node::kList || node_->kind == Node::kTuple); }

size_t PickleRef::size() const {
  if (!node_) return 0;
  return node_->kind == Node::kDict ? node_->items.size() / 2 : is_list() ? node_->items.size() : 0;
}

PickleRef PickleRef::operator[](size_t i) const {
  return is_list() && i < node_->items.size() ? PickleRef(node_->items[i], arena_) : PickleRef();
}

PickleRef PickleRef::operator[](std::string_view key) const {
  if (!is_dict()) return PickleRef();
  // The last of equal keys, as a dict built by SETITEMS keeps it.
  for (size_t k = node_->items.size() & ~size_t{1}; k >= 2; k -= 2) {
    const Node& kn = *node_->items[k - 2];
    if (kn.kind == Node::kStr && kn.s == key) return PickleRef(node_->items[k - 1], arena_);
  }
  return PickleRef();
}

StatusOr<nlohmann::json> PickleRef::ToJson() const {
  if (!node_) return nlohmann::json();
  nlohmann::json out;
  TPT_RETURN_IF_ERROR(tpt::ToJson(*node_, 0, arena_->limits, &arena_->budget, arena_->name, &out));
  return out;
}

PickleDoc::PickleDoc() = default;
PickleDoc::~PickleDoc() = default;
PickleDoc::PickleDoc(PickleDoc&&) noexcept = default;
PickleDoc& PickleDoc::operator=(PickleDoc&&) noexcept = default;

StatusOr<PickleDoc> ReadPickleDoc(std::string_view bytes, const std::string& name, std::string* warning,
                                  const PickleLimits& limits) {
  PickleDoc doc;
  doc.arena_ = std::make_unique<PickleArena>();
  doc.arena_->limits = limits;
  doc.arena_->name = name;
  doc.arena_->budget = limits.max_nodes;
  Reader r(bytes, name, limits, doc.arena_.get());
  TPT_RETURN_IF_ERROR(r.Run());
  auto root = r.Result();
  if (!root.ok()) return root.status();
  doc.root_ = *root;
  if (r.cut() && warning)
    *warning = name + ": the pickle ends at byte " + std::to_string(bytes.size()) +
               " before its STOP (the file was cut): what was read before the cut is used; dump it again for the rest";
  return doc;
}

StatusOr<nlohmann::json> ReadPickle(std::string_view bytes, const std::string& name, std::string* warning,
                                    const PickleLimits& limits) {
  auto doc = ReadPickleDoc(bytes, name, warning, limits);
  if (!doc.ok()) return doc.status();
  return doc->root().ToJson();
}

}  // namespace tpt
