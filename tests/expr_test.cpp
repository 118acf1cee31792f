#include <doctest/doctest.h>

#include "runner/core/expr.hpp"

using namespace streamlab;

namespace {

int64_t value_of(std::string_view text, const ParamScope& params = {{"N", 1024}, {"K", 3}}) {
  auto r = evaluate(text, params);
  REQUIRE_MESSAGE(std::holds_alternative<int64_t>(r), std::string(text));
  return std::get<int64_t>(r);
}

ExprError error_of(std::string_view text, const ParamScope& params = {{"N", 1024}, {"K", 3}}) {
  auto r = evaluate(text, params);
  REQUIRE_MESSAGE(std::holds_alternative<ExprError>(r), std::string(text));
  return std::get<ExprError>(r);
}

}  // namespace

TEST_CASE("expressions: literals, params and precedence") {
  CHECK(value_of("42") == 42);
  CHECK(value_of("N") == 1024);
  CHECK(value_of("N/32") == 32);
  CHECK(value_of("2+3*4") == 14);
  CHECK(value_of("(2+3)*4") == 20);
  CHECK(value_of("N - K - 1") == 1020);  // left associative
  CHECK(value_of("N / K / 2") == 170);
  CHECK(value_of("(N+31)/32") == 32);
  CHECK(value_of("  N * N ") == 1048576);
  CHECK(value_of("-K") == -3);
  CHECK(value_of("--K") == 3);
  CHECK(value_of("N % 1000") == 24);
  CHECK(value_of("9223372036854775807") == INT64_MAX);
}

TEST_CASE("expressions: division truncates toward zero, like C") {
  CHECK(value_of("-7/2") == -3);
  CHECK(value_of("-7%2") == -1);
  CHECK(value_of("7/-2") == -3);
}

TEST_CASE("expressions: errors point at their offset") {
  auto e = error_of("N*M");
  CHECK(e.offset == 2);
  CHECK(e.message == "unknown parameter 'M' (params: K, N)");
  CHECK(error_of("n").message == "unknown parameter 'n'; did you mean 'N'? (params: K, N)");
  CHECK(error_of("X", {}).message == "unknown parameter 'X' (the experiment has no params)");
  e = error_of("N/(K-3)");
  CHECK(e.offset == 1);
  CHECK(e.message == "division by zero");
  CHECK(error_of("N%0").message == "remainder by zero");
  e = error_of("(N+1");
  CHECK(e.offset == 0);
  CHECK(e.message == "unbalanced '(': expected ')'");
  CHECK(error_of("N+").message ==
        "expected a number, a parameter name or '(' at the end of the expression");
  CHECK(error_of("N)").message == "unexpected ')' in expression");
  CHECK(error_of("").message == "expected an integer expression, got nothing");
  CHECK(error_of("1.5").message == "expected an integer (expressions take whole numbers only)");
  CHECK(error_of("N ^ 2").offset == 2);
}

TEST_CASE("expressions: every step is checked for overflow") {
  CHECK(error_of("9223372036854775807+1").message ==
        "integer overflow (the result does not fit in 64 bits)");
  CHECK(error_of("4611686018427387904*2").offset == 19);
  CHECK(error_of("-9223372036854775807-2").message ==
        "integer overflow (the result does not fit in 64 bits)");
  CHECK(error_of("99999999999999999999").message == "integer literal does not fit in 64 bits");
  CHECK(value_of("3037000499*3037000499") == 9223372030926249001);
}
