// Reading the fixture scripts the source-rule tests compare against.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace oomlens::testing {

// fixtures/scripts/NAME, byte for byte (CRLF and all); fails the test when missing.
inline std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(OOMLENS_SOURCE_DIR) + "/fixtures/scripts/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace oomlens::testing
