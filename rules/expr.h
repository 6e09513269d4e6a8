// expr.h: the small expression language of rule files (rules/README.md).
//
// Arithmetic (+ - * /), comparisons (== != < <= > >=), and/or/not, numbers,
// 'strings', true/false/null, dotted names (anchor.avail_bytes, config.tp_size,
// rest_gib) and function calls (min, max, abs, gib, count('cuda_oom'), ...).
// A missing value is null: arithmetic on null gives null, a comparison with
// null is false, so a rule over fields a log did not print simply does not hold.
//
//   auto e = tpt::ParseExpr("avail - free * (1 - f)");
//   if (!e.ok()) return e.status();           // "col 7: expected an operand"
//   tpt::Value v = (*e)->Eval(scope);          // scope resolves names and calls
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace tpt {

// null, number, string or bool.
class Value {
 public:
  Value() = default;
  Value(double d) : v_(d) {}                       // NOLINT
  Value(int i) : v_(static_cast<double>(i)) {}     // NOLINT
  Value(bool b) : v_(b) {}                         // NOLINT
  Value(std::string s) : v_(std::move(s)) {}       // NOLINT
  Value(const char* s) : v_(std::string(s)) {}     // NOLINT

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_number() const { return std::holds_alternative<double>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  double number() const { return std::get<double>(v_); }
  const std::string& str() const { return std::get<std::string>(v_); }
  bool boolean() const { return std::get<bool>(v_); }

  // Conditions: null/false/0/"" are false.
  bool Truthy() const;
  std::string ToString() const;

 private:
  std::variant<std::monostate, double, std::string, bool> v_;
};

// What an expression can see: variables and functions other than the
// built-in arithmetic ones (min, max, abs, gib, mib, ceil2, floor2, round2).
class Scope {
 public:
  virtual ~Scope() = default;
  virtual Value Lookup(std::string_view name) const = 0;
  virtual Value Call(std::string_view name, const std::vector<Value>& args) const = 0;
};

class Expr {
 public:
  virtual ~Expr() = default;
  virtual Value Eval(const Scope& scope) const = 0;
  // Every variable name and function name the expression uses (for checks at
  // load time); `arity`, when given, gets each call's argument count beside funcs.
  virtual void Names(std::vector<std::string>* vars, std::vector<std::string>* funcs,
                     std::vector<size_t>* arity = nullptr) const = 0;
  // The string-literal arguments of every call (a regex to compile at load).
  struct LiteralArg {
    std::string func;
    size_t index = 0;
    std::string text;
  };
  virtual void LiteralArgs(std::vector<LiteralArg>*) const {}
};

using ExprPtr = std::shared_ptr<const Expr>;

// Parses `text`; the error names the column and what was expected.
StatusOr<ExprPtr> ParseExpr(std::string_view text);

// Built-in pure functions (min, max, abs, gib, ...). Returns true and sets
// *out when `name` is one of them.
bool CallBuiltin(std::string_view name, const std::vector<Value>& args, Value* out);
bool IsBuiltinFunction(std::string_view name);

}  // namespace tpt
