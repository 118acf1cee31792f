#pragma once
// The table of check kinds, shared by the two halves of checks: how a kind is read from YAML
// (checks_parse.cpp) and how it compares (checks.cpp). Internal to runner/check.
#include <string>
#include <vector>

#include "runner/check/checks.hpp"

namespace streamlab {

class LoadContext;
class MapReader;

// One row of the table: a check kind, how it is read and how it compares.
struct CheckKind {
  CheckKindInfo info;
  std::vector<std::string> keys;
  void (*parse)(LoadContext&, MapReader&, CheckSpec&);
  CheckResult (*run)(const Experiment&, const CheckSpec&, const BufferContents&);
};

const std::vector<CheckKind>& check_table();

// Each kind's reader (checks_parse.cpp).
void parse_transpose(LoadContext& ctx, MapReader& r, CheckSpec& c);
void parse_pairwise(LoadContext& ctx, MapReader& r, CheckSpec& c);
void parse_value(LoadContext& ctx, MapReader& r, CheckSpec& c);
void parse_checksum(LoadContext& ctx, MapReader& r, CheckSpec& c);
void parse_reference(LoadContext& ctx, MapReader& r, CheckSpec& c);

}  // namespace streamlab
