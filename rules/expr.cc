// expr.cc: recursive-descent parser and evaluator for rule expressions.
#include "rules/expr.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <unordered_map>
#include <utility>

namespace tpt {

bool Value::Truthy() const {
  if (is_null()) return false;
  if (is_bool()) return boolean();
  if (is_number()) return number() != 0 && !std::isnan(number());
  return !str().empty();
}

std::string Value::ToString() const {
  if (is_null()) return "null";
  if (is_bool()) return boolean() ? "true" : "false";
  if (is_string()) return str();
  char buf[64];
  double d = number();
  if (d == std::floor(d) && std::fabs(d) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", d);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", d);
  }
  return buf;
}

namespace {

// ---- AST ----

class Literal : public Expr {
 public:
  explicit Literal(Value v) : v_(std::move(v)) {}
  const Value& value() const { return v_; }
  Value Eval(const Scope&) const override { return v_; }
  void Names(std::vector<std::string>*, std::vector<std::string>*, std::vector<size_t>*) const override {}

 private:
  Value v_;
};

class Var : public Expr {
 public:
  explicit Var(std::string name) : name_(std::move(name)) {}
  Value Eval(const Scope& s) const override { return s.Lookup(name_); }
  void Names(std::vector<std::string>* vars, std::vector<std::string>*, std::vector<size_t>*) const override {
    vars->push_back(name_);
  }

 private:
  std::string name_;
};

class Call : public Expr {
 public:
  Call(std::string name, std::vector<ExprPtr> args) : name_(std::move(name)), args_(std::move(args)) {}
  Value Eval(const Scope& s) const override {
    std::vector<Value> vals;
    vals.reserve(args_.size());
    for (const auto& a : args_) vals.push_back(a->Eval(s));
    Value out;
    if (CallBuiltin(name_, vals, &out)) return out;
    return s.Call(name_, vals);
  }
  void Names(std::vector<std::string>* vars, std::vector<std::string>* funcs,
             std::vector<size_t>* arity) const override {
    funcs->push_back(name_);
    if (arity) arity->push_back(args_.size());
    for (const auto& a : args_) a->Names(vars, funcs, arity);
  }
  void LiteralArgs(std::vector<LiteralArg>* out) const override {
    for (size_t i = 0; i < args_.size(); ++i) {
      const auto* lit = dynamic_cast<const Literal*>(args_[i].get());
      if (lit != nullptr && lit->value().is_string()) out->push_back({name_, i, lit->value().str()});
      args_[i]->LiteralArgs(out);
    }
  }

 private:
  std::string name_;
  std::vector<ExprPtr> args_;
};

enum class Op { kAdd, kSub, kMul, kDiv, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr };

bool Equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.number() == b.number();
  if (a.is_string() && b.is_string()) return a.str() == b.str();
  if (a.is_bool() && b.is_bool()) return a.boolean() == b.boolean();
  // true == 1 style comparisons: a bool against a number compares truthiness.
  if ((a.is_bool() && b.is_number()) || (a.is_number() && b.is_bool())) return a.Truthy() == b.Truthy();
  return false;
}

class Binary : public Expr {
 public:
  Binary(Op op, ExprPtr l, ExprPtr r) : op_(op), l_(std::move(l)), r_(std::move(r)) {}
  Value Eval(const Scope& s) const override {
    if (op_ == Op::kAnd) {
      Value a = l_->Eval(s);
      if (!a.Truthy()) return false;
      return r_->Eval(s).Truthy();
    }
    if (op_ == Op::kOr) {
      Value a = l_->Eval(s);
      if (a.Truthy()) return true;
      return r_->Eval(s).Truthy();
    }
    Value a = l_->Eval(s), b = r_->Eval(s);
    if (a.is_null() || b.is_null()) {
      if (op_ == Op::kNe) return !(a.is_null() && b.is_null());
      if (op_ == Op::kEq) return a.is_null() && b.is_null();
      if (op_ >= Op::kLt) return false;
      return Value();
    }
    switch (op_) {
      case Op::kEq: return Equal(a, b);
      case Op::kNe: return !Equal(a, b);
      default: break;
    }
    if (a.is_string() && b.is_string()) {
      int c = a.str().compare(b.str());
      switch (op_) {
        case Op::kLt: return c < 0;
        case Op::kLe: return c <= 0;
        case Op::kGt: return c > 0;
        case Op::kGe: return c >= 0;
        case Op::kAdd: return a.str() + b.str();
        default: return Value();
      }
    }
    auto num = [](const Value& v) -> std::optional<double> {
      if (v.is_number()) return v.number();
      if (v.is_bool()) return v.boolean() ? 1.0 : 0.0;
      return std::nullopt;
    };
    auto x = num(a), y = num(b);
    if (!x || !y) return op_ >= Op::kLt ? Value(false) : Value();
    switch (op_) {
      case Op::kAdd: return *x + *y;
      case Op::kSub: return *x - *y;
      case Op::kMul: return *x * *y;
      case Op::kDiv: return *y == 0 ? Value() : Value(*x / *y);
      case Op::kLt: return *x < *y;
      case Op::kLe: return *x <= *y;
      case Op::kGt: return *x > *y;
      case Op::kGe: return *x >= *y;
      default: return Value();
    }
  }
  void Names(std::vector<std::string>* vars, std::vector<std::string>* funcs,
             std::vector<size_t>* arity) const override {
    l_->Names(vars, funcs, arity);
    r_->Names(vars, funcs, arity);
  }
  void LiteralArgs(std::vector<LiteralArg>* out) const override {
    l_->LiteralArgs(out);
    r_->LiteralArgs(out);
  }

 private:
  Op op_;
  ExprPtr l_, r_;
};

class Unary : public Expr {
 public:
  Unary(char op, ExprPtr e) : op_(op), e_(std::move(e)) {}
  Value Eval(const Scope& s) const override {
    Value v = e_->Eval(s);
    if (op_ == '!') return !v.Truthy();
    if (v.is_number()) return -v.number();
    return Value();
  }
  void Names(std::vector<std::string>* vars, std::vector<std::string>* funcs,
             std::vector<size_t>* arity) const override {
    e_->Names(vars, funcs, arity);
  }
  void LiteralArgs(std::vector<LiteralArg>* out) const override { e_->LiteralArgs(out); }

 private:
  char op_;
  ExprPtr e_;
};

// ---- Parser ----

// Deepest nesting of the parser's recursion (parentheses, not, unary minus,
// calls) and deepest expression tree (a chain of operators is one level a
// term) accepted. Rules need a handful of levels and chains of tens of terms;
// the limits keep a hostile rule file (10,000 parentheses, a chain of 100,000
// `or`s) from overflowing the stack in the parser, in Eval or in the tree's
// destructor (1,000 levels of Eval are well inside any thread's stack).
constexpr int kMaxExprDepth = 100;
constexpr int kMaxTreeDepth = 1000;

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  StatusOr<ExprPtr> Parse() {
    ExprPtr e = ParseOr();
    if (!err_.empty()) return InvalidArgumentError(err_);
    Skip();
    if (p_ < t_.size()) return InvalidArgumentError(At("unexpected '" + std::string(1, t_[p_]) + "'"));
    return e;
  }

 private:
  std::string At(const std::string& what) const {
    // A hostile expression can be megabytes long: quote its start only.
    const std::string text = t_.size() <= 200 ? std::string(t_) : std::string(t_.substr(0, 160)) + "...";
    return "col " + std::to_string(p_ + 1) + ": " + what + " in '" + text + "'";
  }
  void Fail(const std::string& what) {
    if (err_.empty()) err_ = At(what);
  }
  void TooDeep() {
    Fail("nested more than " + std::to_string(kMaxExprDepth) +
         " levels deep (parentheses, not, unary minus, calls); split the rule's condition into simpler ones");
  }
  void TooLong() {
    Fail("more than " + std::to_string(kMaxTreeDepth) +
         " operators deep (a chain of operators and what it holds); split the rule's condition into simpler ones");
  }
  // Records `node`'s depth in the tree (1 + its deepest child).
  ExprPtr Node(ExprPtr node, std::initializer_list<const ExprPtr*> kids) {
    int d = 0;
    for (const ExprPtr* k : kids) {
      auto it = depth_.find(k->get());
      d = std::max(d, it == depth_.end() ? 1 : it->second);
    }
    depth_[node.get()] = d + 1;
    if (d + 1 > kMaxTreeDepth) TooLong();
    return node;
  }
  // Guards one level of the parser's own recursion.
  struct Nest {
    explicit Nest(Parser* p) : p_(p) {
      if (++p_->nest_ > kMaxExprDepth) p_->TooDeep();
    }
    ~Nest() { --p_->nest_; }
    bool ok() const { return p_->err_.empty(); }
    Parser* p_;
  };
  void Skip() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  bool Eat(std::string_view tok) {
    Skip();
    if (t_.substr(p_, tok.size()) != tok) return false;
    // Keywords must not run into an identifier: "order" is not "or" + "der".
    if (std::isalpha(static_cast<unsigned char>(tok[0]))) {
      size_t q = p_ + tok.size();
      if (q < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[q])) || t_[q] == '_')) return false;
    }
    p_ += tok.size();
    return true;
  }

  ExprPtr ParseOr() {
    ExprPtr l = ParseAnd();
    while (err_.empty() && (Eat("or") || Eat("||"))) {
      ExprPtr r = ParseAnd();
      l = Node(std::make_shared<Binary>(Op::kOr, l, r), {&l, &r});
    }
    return l;
  }
  ExprPtr ParseAnd() {
    ExprPtr l = ParseNot();
    while (err_.empty() && (Eat("and") || Eat("&&"))) {
      ExprPtr r = ParseNot();
      l = Node(std::make_shared<Binary>(Op::kAnd, l, r), {&l, &r});
    }
    return l;
  }
  ExprPtr ParseNot() {
    bool neg = Eat("not");
    if (!neg) {
      Skip();
      if (p_ < t_.size() && t_[p_] == '!' && !(p_ + 1 < t_.size() && t_[p_ + 1] == '=')) {
        ++p_;
        neg = true;
      }
    }
    if (!neg) return ParseCmp();
    Nest nest(this);
    if (!nest.ok()) return std::make_shared<Literal>(Value());
    ExprPtr e = ParseNot();
    return Node(std::make_shared<Unary>('!', e), {&e});
  }
  ExprPtr ParseCmp() {
    ExprPtr l = ParseAdd();
    static constexpr std::pair<std::string_view, Op> kOps[] = {
        {"==", Op::kEq}, {"!=", Op::kNe}, {"<=", Op::kLe}, {">=", Op::kGe}, {"<", Op::kLt}, {">", Op::kGt}};
    for (const auto& [tok, op] : kOps) {
      if (err_.empty() && Eat(tok)) {
        ExprPtr r = ParseAdd();
        return Node(std::make_shared<Binary>(op, l, r), {&l, &r});
      }
    }
    return l;
  }
  ExprPtr ParseAdd() {
    ExprPtr l = ParseMul();
    while (err_.empty()) {
      Op op;
      if (Eat("+")) op = Op::kAdd;
      else if (Eat("-")) op = Op::kSub;
      else break;
      ExprPtr r = ParseMul();
      l = Node(std::make_shared<Binary>(op, l, r), {&l, &r});
    }
    return l;
  }
  ExprPtr ParseMul() {
    ExprPtr l = ParseUnary();
    while (err_.empty()) {
      Op op;
      if (Eat("*")) op = Op::kMul;
      else if (Eat("/")) op = Op::kDiv;
      else break;
      ExprPtr r = ParseUnary();
      l = Node(std::make_shared<Binary>(op, l, r), {&l, &r});
    }
    return l;
  }
  ExprPtr ParseUnary() {
    if (!Eat("-")) return ParsePrimary();
    Nest nest(this);
    if (!nest.ok()) return std::make_shared<Literal>(Value());
    ExprPtr e = ParseUnary();
    return Node(std::make_shared<Unary>('-', e), {&e});
  }
  ExprPtr ParsePrimary() {
    Skip();
    auto null = std::make_shared<Literal>(Value());
    if (p_ >= t_.size()) {
      Fail("expected an operand, found the end");
      return null;
    }
    char c = t_[p_];
    if (c == '(') {
      ++p_;
      Nest nest(this);
      if (!nest.ok()) return null;
      ExprPtr e = ParseOr();
      if (!Eat(")")) Fail("expected ')'");
      return e;
    }
    if (c == '\'' || c == '"') {
      size_t end = t_.find(c, p_ + 1);
      if (end == std::string_view::npos) {
        Fail("unterminated string");
        return null;
      }
      std::string s(t_.substr(p_ + 1, end - p_ - 1));
      p_ = end + 1;
      return std::make_shared<Literal>(Value(std::move(s)));
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      std::string buf(t_.substr(p_, std::min<size_t>(64, t_.size() - p_)));
      char* end = nullptr;
      double d = std::strtod(buf.c_str(), &end);
      if (end == buf.c_str()) {
        Fail("bad number");
        return null;
      }
      p_ += static_cast<size_t>(end - buf.c_str());
      return std::make_shared<Literal>(Value(d));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t q = p_;
      while (q < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[q])) || t_[q] == '_' || t_[q] == '.')) ++q;
      std::string name(t_.substr(p_, q - p_));
      p_ = q;
      if (name == "true") return std::make_shared<Literal>(Value(true));
      if (name == "false") return std::make_shared<Literal>(Value(false));
      if (name == "null") return null;
      if (Eat("(")) {
        Nest nest(this);
        if (!nest.ok()) return null;
        std::vector<ExprPtr> args;
        if (!Eat(")")) {
          do {
            args.push_back(ParseOr());
          } while (err_.empty() && Eat(","));
          if (!Eat(")")) Fail("expected ')' or ',' in the arguments of " + name);
        }
        int d = 0;
        for (const auto& a : args) {
          auto it = depth_.find(a.get());
          d = std::max(d, it == depth_.end() ? 1 : it->second);
        }
        ExprPtr call = std::make_shared<Call>(name, std::move(args));
        depth_[call.get()] = d + 1;
        if (d + 1 > kMaxTreeDepth) TooLong();
        return call;
      }
      return std::make_shared<Var>(name);
    }
    Fail("expected an operand, found '" + std::string(1, c) + "'");
    return null;
  }

  std::string_view t_;
  size_t p_ = 0;
  std::string err_;
  int nest_ = 0;
  std::unordered_map<const Expr*, int> depth_;  // nodes above leaves
};

bool AllNumbers(const std::vector<Value>& a) {
  for (const auto& v : a)
    if (!v.is_number()) return false;
  return !a.empty();
}

}  // namespace

StatusOr<ExprPtr> ParseExpr(std::string_view text) { return Parser(text).Parse(); }

bool IsBuiltinFunction(std::string_view n) {
  return n == "min" || n == "max" || n == "abs" || n == "gib" || n == "mib" || n == "ceil2" ||
         n == "floor2" || n == "floor" || n == "round2" || n == "round1" || n == "coalesce" || n == "if";
}

bool CallBuiltin(std::string_view n, const std::vector<Value>& a, Value* out) {
  if (!IsBuiltinFunction(n)) return false;
  if (n == "coalesce") {
    *out = Value();
    for (const auto& v : a)
      if (!v.is_null()) {
        *out = v;
        break;
      }
    return true;
  }
  // if(cond, a[, b]): a when cond holds, else b (null without b). Both are
  // evaluated; a missing value in the branch not taken does no harm.
  if (n == "if") {
    *out = a.size() >= 2 && a[0].Truthy() ? a[1] : (a.size() >= 3 ? a[2] : Value());
    return true;
  }
  // min/max skip nulls: min(a, null) is a.
  if (n == "min" || n == "max") {
    std::optional<double> best;
    for (const auto& v : a) {
      if (!v.is_number()) continue;
      if (!best || (n == "min" ? v.number() < *best : v.number() > *best)) best = v.number();
    }
    *out = best ? Value(*best) : Value();
    return true;
  }
  if (!AllNumbers(a) || a.size() != 1) {
    *out = Value();
    return true;
  }
  double x = a[0].number();
  if (n == "abs") *out = std::fabs(x);
  else if (n == "gib") *out = x / 1073741824.0;
  else if (n == "mib") *out = x / 1048576.0;
  // Two decimals, rounding up: a remedy value must be at least the minimum.
  else if (n == "ceil2") *out = std::ceil(x * 100 - 1e-9) / 100;
  else if (n == "floor2") *out = std::floor(x * 100 + 1e-9) / 100;
  else if (n == "floor") *out = std::floor(x + 1e-9);
  else if (n == "round2") *out = std::round(x * 100) / 100;
  else if (n == "round1") *out = std::round(x * 10) / 10;
  return true;
}

}  // namespace tpt
