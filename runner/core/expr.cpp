#include "runner/core/expr.hpp"

#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

struct Failure {
  ExprError error;
};

// Recursive descent over: expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | primary; primary := number | name | '(' expr ')'.
class IntegerExpression {
 public:
  IntegerExpression(std::string_view text, const ParamScope& params)
      : text_(text), params_(params) {}

  int64_t run() {
    skip_space();
    if (pos_ == text_.size()) fail(0, "expected an integer expression, got nothing");
    int64_t value = expr();
    if (pos_ != text_.size()) fail(pos_, fmt::format("unexpected '{}' in expression", text_[pos_]));
    return value;
  }

 private:
  int64_t expr() {
    int64_t value = term();
    while (peek() == '+' || peek() == '-') {
      char op = text_[pos_];
      size_t at = pos_++;
      int64_t rhs = term();
      bool overflow = op == '+' ? __builtin_add_overflow(value, rhs, &value)
                                : __builtin_sub_overflow(value, rhs, &value);
      if (overflow) fail(at, "integer overflow (the result does not fit in 64 bits)");
    }
    return value;
  }

  int64_t term() {
    int64_t value = unary();
    while (peek() == '*' || peek() == '/' || peek() == '%') {
      char op = text_[pos_];
      size_t at = pos_++;
      int64_t rhs = unary();
      value = apply_multiplicative(op, value, rhs, at);
    }
    return value;
  }

  int64_t apply_multiplicative(char op, int64_t lhs, int64_t rhs, size_t at) {
    if (op == '*') {
      int64_t out;
      if (__builtin_mul_overflow(lhs, rhs, &out))
        fail(at, "integer overflow (the result does not fit in 64 bits)");
      return out;
    }
    if (rhs == 0) fail(at, op == '/' ? "division by zero" : "remainder by zero");
    if (lhs == INT64_MIN && rhs == -1)
      fail(at, "integer overflow (the result does not fit in 64 bits)");
    return op == '/' ? lhs / rhs : lhs % rhs;
  }

  int64_t unary() {
    if (peek() != '-') return primary();
    size_t at = pos_++;
    Nested nested(*this, at);
    int64_t value = unary();
    if (value == INT64_MIN) fail(at, "integer overflow (the result does not fit in 64 bits)");
    return -value;
  }

  int64_t primary() {
    char c = peek();
    if (c == '(') return parenthesized();
    if (std::isdigit(static_cast<unsigned char>(c))) return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    if (pos_ == text_.size())
      fail(pos_, "expected a number, a parameter name or '(' at the end of the expression");
    fail(pos_, fmt::format("expected a number, a parameter name or '(', got '{}'", c));
  }

  int64_t parenthesized() {
    size_t open = pos_++;
    Nested nested(*this, open);
    int64_t value = expr();
    if (peek() != ')') fail(open, "unbalanced '(': expected ')'");
    ++pos_;
    skip_space();
    return value;
  }

  int64_t number() {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_++] - '0';
      if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, digit, &value))
        fail(start, "integer literal does not fit in 64 bits");
    }
    if (pos_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.'))
      fail(start, "expected an integer (expressions take whole numbers only)");
    skip_space();
    return value;
  }

  int64_t name() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    std::string_view id = text_.substr(start, pos_ - start);
    skip_space();
    auto it = params_.find(id);
    if (it == params_.end()) throw Failure{{start, unknown_parameter(id), std::string(id)}};
    return it->second;
  }

  std::string unknown_parameter(std::string_view id) const {
    std::vector<std::string> names;
    for (const auto& [n, v] : params_) names.push_back(n);
    if (names.empty())
      return fmt::format("unknown parameter '{}' (the experiment has no params)", id);
    return fmt::format("unknown parameter '{}'{} (params: {})", id, did_you_mean(id, names),
                       join(names));
  }

  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  [[noreturn]] void fail(size_t at, std::string message) {
    throw Failure{{at, std::move(message), {}}};
  }

  // One level of parentheses or unary minus: each is a stack frame of this parser, so their depth
  // is bounded.
  struct Nested {
    Nested(IntegerExpression& e, size_t at) : e_(e) {
      if (++e_.depth_ > limits::kExpressionDepth)
        e_.fail(at,
                fmt::format("the expression nests deeper than {} parentheses and unary minus signs",
                            limits::kExpressionDepth));
    }
    ~Nested() { --e_.depth_; }
    IntegerExpression& e_;
  };

  std::string_view text_;
  const ParamScope& params_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::variant<int64_t, ExprError> evaluate(std::string_view text, const ParamScope& params) {
  try {
    return IntegerExpression(text, params).run();
  } catch (const Failure& f) {
    return f.error;
  }
}

}  // namespace streamlab
