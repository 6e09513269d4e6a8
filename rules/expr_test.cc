// expr_test.cc: the rule expression language.
#include "rules/expr.h"

#include <map>

#include <gtest/gtest.h>

namespace tpt {
namespace {

class MapScope : public Scope {
 public:
  std::map<std::string, Value> vars;
  Value Lookup(std::string_view n) const override {
    auto it = vars.find(std::string(n));
    return it == vars.end() ? Value() : it->second;
  }
  Value Call(std::string_view n, const std::vector<Value>& a) const override {
    if (n == "twice" && a.size() == 1 && a[0].is_number()) return a[0].number() * 2;
    return Value();
  }
};

Value Eval(const std::string& text, const MapScope& s) {
  auto e = ParseExpr(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status().message();
  if (!e.ok()) return Value();
  return (*e)->Eval(s);
}

TEST(ExprTest, ArithmeticPrecedenceAndParentheses) {
  MapScope s;
  EXPECT_DOUBLE_EQ(Eval("1 + 2 * 3", s).number(), 7);
  EXPECT_DOUBLE_EQ(Eval("(1 + 2) * 3", s).number(), 9);
  EXPECT_DOUBLE_EQ(Eval("10 - 4 - 3", s).number(), 3);  // left associative
  EXPECT_DOUBLE_EQ(Eval("8 / 4 / 2", s).number(), 1);
  EXPECT_DOUBLE_EQ(Eval("-2 * -3", s).number(), 6);
  EXPECT_DOUBLE_EQ(Eval("1e3 + .5", s).number(), 1000.5);
}

// The expression language evaluates the rest formula as written (the rule
// files' formula is tested on the founding log by AnalyzeFoundingTest and
// SglangKvPoolTest; this only checks arithmetic, comparison and ceil2 together).
TEST(ExprTest, EvaluatesARestShapedFormula) {
  MapScope s;
  s.vars["avail"] = 21.7;
  s.vars["total"] = 94.0;
  s.vars["f"] = 0.5;
  EXPECT_NEAR(Eval("avail - total * (1 - f)", s).number(), -25.3, 1e-9);
  EXPECT_TRUE(Eval("avail - total * (1 - f) <= 0", s).Truthy());
  EXPECT_DOUBLE_EQ(Eval("ceil2(1 - avail / total)", s).number(), 0.77);
}

TEST(ExprTest, ComparisonsAndLogic) {
  MapScope s;
  s.vars["fw"] = "sglang";
  s.vars["n"] = 8;
  EXPECT_TRUE(Eval("fw == 'sglang' and n >= 8", s).Truthy());
  EXPECT_FALSE(Eval("fw == 'vllm' or n < 8", s).Truthy());
  EXPECT_TRUE(Eval("not (n != 8)", s).Truthy());
  EXPECT_TRUE(Eval("!(n > 8) && n <= 8 || false", s).Truthy());
  EXPECT_TRUE(Eval("'0.4' < '0.5'", s).Truthy());
}

TEST(ExprTest, KeywordsDoNotSwallowIdentifiers) {
  MapScope s;
  s.vars["order"] = 3;
  s.vars["android"] = 2;
  s.vars["notes"] = 1;
  EXPECT_DOUBLE_EQ(Eval("order + android + notes", s).number(), 6);
}

TEST(ExprTest, NullPropagatesAndComparisonsWithNullAreFalse) {
  MapScope s;
  s.vars["x"] = 5;
  EXPECT_TRUE(Eval("missing + 1", s).is_null());
  EXPECT_FALSE(Eval("missing < 1", s).Truthy());
  EXPECT_FALSE(Eval("missing >= 1", s).Truthy());
  EXPECT_TRUE(Eval("missing == null", s).Truthy());
  EXPECT_TRUE(Eval("x != null", s).Truthy());
  EXPECT_TRUE(Eval("1 / 0", s).is_null());  // no inf in figures
}

TEST(ExprTest, IfPicksABranch) {
  MapScope s;
  s.vars["x"] = 5;
  EXPECT_DOUBLE_EQ(Eval("if(x > 1, 10, 20)", s).number(), 10);
  EXPECT_DOUBLE_EQ(Eval("if(x > 9, 10, 20)", s).number(), 20);
  EXPECT_TRUE(Eval("if(x > 9, 10)", s).is_null());        // no else: null
  EXPECT_TRUE(Eval("if(missing, 10, null)", s).is_null());  // null condition is false
  EXPECT_DOUBLE_EQ(Eval("coalesce(if(x > 9, 1), 2)", s).number(), 2);
}

TEST(ExprTest, Builtins) {
  MapScope s;
  s.vars["b"] = 1073741824.0 * 2.5;
  EXPECT_DOUBLE_EQ(Eval("gib(b)", s).number(), 2.5);
  EXPECT_DOUBLE_EQ(Eval("mib(b)", s).number(), 2560);
  EXPECT_DOUBLE_EQ(Eval("min(3, 1, 2)", s).number(), 1);
  EXPECT_DOUBLE_EQ(Eval("max(3, missing, 7)", s).number(), 7);  // nulls skipped
  EXPECT_DOUBLE_EQ(Eval("abs(-4)", s).number(), 4);
  EXPECT_DOUBLE_EQ(Eval("ceil2(0.7601)", s).number(), 0.77);
  EXPECT_DOUBLE_EQ(Eval("floor(23.99)", s).number(), 23);
  EXPECT_DOUBLE_EQ(Eval("floor(32768 * 2.91 / 4.00 / 1024) * 1024", s).number(), 23552);
  EXPECT_DOUBLE_EQ(Eval("ceil2(0.77)", s).number(), 0.77);  // exact stays
  EXPECT_DOUBLE_EQ(Eval("floor2(0.779)", s).number(), 0.77);
  EXPECT_DOUBLE_EQ(Eval("coalesce(missing, 4, 5)", s).number(), 4);
  EXPECT_DOUBLE_EQ(Eval("twice(21)", s).number(), 42);  // scope function
}

TEST(ExprTest, StringsAndNames) {
  MapScope s;
  s.vars["anchor.kind"] = "cuda_oom";
  EXPECT_TRUE(Eval("anchor.kind == \"cuda_oom\"", s).Truthy());
  std::vector<std::string> vars, funcs;
  auto e = ParseExpr("count('cuda_oom') > 0 and gib(anchor.free_bytes) < x");
  ASSERT_TRUE(e.ok());
  (*e)->Names(&vars, &funcs);
  EXPECT_EQ(vars, (std::vector<std::string>{"anchor.free_bytes", "x"}));
  EXPECT_EQ(funcs, (std::vector<std::string>{"count", "gib"}));
}

TEST(ExprTest, ParseErrorsNameTheColumn) {
  for (const char* bad : {"1 +", "(1 + 2", "a b", "'open", "f(1,", "* 2", "1 + $"}) {
    auto e = ParseExpr(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("col "), std::string::npos) << e.status().message();
  }
}

// 10,000 nested parentheses overflowed the parser's stack
// (SIGSEGV at rule load); long chains built trees Eval and the destructor
// could not walk.
TEST(ExprTest, DeepNestingIsAnErrorNotACrash) {
  auto nest = [](const std::string& open, const std::string& leaf, const std::string& close, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += leaf;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  std::vector<std::string> deep = {
      nest("(", "true", ")", 10000), nest("not ", "true", "", 50000), nest("!", "true", "", 200000),
      nest("-", "1", "", 100000),    nest("abs(", "1", ")", 10000),
  };
  for (const auto& text : deep) {
    auto e = ParseExpr(text);
    ASSERT_FALSE(e.ok()) << text.substr(0, 40);
    EXPECT_NE(e.status().message().find("nested more than 100 levels"), std::string::npos) << e.status().message();
    EXPECT_LT(e.status().message().size(), 600u);  // quotes the start, not megabytes
  }
  // A chain of operators is as deep as it is long (and a chain inside its first
  // term adds to it): refused past 1,000 levels.
  for (const auto& text : {nest("", "x", " or x", 100000), nest("", "1", " + 1", 100000), nest("", "a", " and a", 2000),
                           nest("", "(" + nest("", "1", " * 1", 600) + ")", " + 1", 600)}) {
    auto e = ParseExpr(text);
    ASSERT_FALSE(e.ok()) << text.substr(0, 40);
    EXPECT_NE(e.status().message().find("more than 1000 operators deep"), std::string::npos) << e.status().message();
    EXPECT_LT(e.status().message().size(), 600u);
  }
  // Up to the limits is fine: a flat sum of 150 terms was refused as "nested".
  MapScope s;
  EXPECT_TRUE(Eval(nest("(", "true", ")", 90), s).Truthy());
  EXPECT_TRUE(Eval(nest("not not ", "true", "", 45), s).Truthy());
  EXPECT_DOUBLE_EQ(Eval(nest("", "1", " + 1", 150), s).number(), 151);
  EXPECT_DOUBLE_EQ(Eval(nest("", "1", " + 1", 990), s).number(), 991);
}

}  // namespace
}  // namespace tpt
