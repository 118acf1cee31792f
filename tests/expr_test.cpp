#include <doctest/doctest.h>
#include "runner/expr.hpp"
