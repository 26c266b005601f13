// Reading the fixture scripts the source-rule tests compare against.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace oomlens::testing {

// fixtures/DIR/NAME, byte for byte (CRLF and all); fails the test when missing.
inline std::string read_fixture_in(const std::string& dir, const std::string& name) {
  std::ifstream in(std::string(OOMLENS_SOURCE_DIR) + "/fixtures/" + dir + "/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string read_fixture(const std::string& name) { return read_fixture_in("scripts", name); }
inline std::string read_config_fixture(const std::string& name) { return read_fixture_in("config", name); }

}  // namespace oomlens::testing
