#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

namespace streamlab {

// Parameter values by name, for expression evaluation.
using ParamScope = std::map<std::string, int64_t, std::less<>>;

struct ExprError {
  size_t offset = 0;  // 0-based position in the expression text where the problem starts
  std::string message;
  std::string unknown_name;  // set when the problem is an unknown parameter name
};

// Evaluates an integer expression: decimal literals, parameter names, + - * / % (C semantics:
// division truncates toward zero), unary minus and parentheses. Every step is checked for
// overflow of int64, and division or remainder by zero is an error.
std::variant<int64_t, ExprError> evaluate(std::string_view text, const ParamScope& params);

}  // namespace streamlab
