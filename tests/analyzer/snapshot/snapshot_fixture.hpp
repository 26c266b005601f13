// A snapshot fixture read and parsed, failing the test with the reader's
// message when it cannot be.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "analyzer/snapshot/model.hpp"
#include "tests/analyzer/snapshot/pickle_bytes.hpp"

namespace oomlens::analyzer::snapshot::testing {

inline Snapshot snapshot_fixture(const std::string& name) {
  std::string bytes = read_fixture(name);
  REQUIRE_FALSE(bytes.empty());
  auto snapshot = parse_snapshot(std::string_view(bytes));
  if (!snapshot) FAIL(name << ": " << snapshot.error().message);
  return std::move(*snapshot);
}

}  // namespace oomlens::analyzer::snapshot::testing
