#include <catch2/catch.hpp>

#include "analyzer/text.hpp"

using namespace oomlens::analyzer;

TEST_CASE("strip_ansi removes colour codes, also inside numbers") {
  CHECK(strip_ansi("\x1b[1;36m2.00\x1b[0m GiB") == "2.00 GiB");
  CHECK(strip_ansi("\x1b[31mtorch.OutOfMemoryError\x1b[0m: CUDA") == "torch.OutOfMemoryError: CUDA");
  CHECK(strip_ansi("a\x1b]0;title\x07" "b") == "ab");
  CHECK(strip_ansi("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b") == "alinkb");
  CHECK(strip_ansi("\x1b[2K\x1b[1Aprogress") == "progress");
  CHECK(strip_ansi("trailing escape \x1b") == "trailing escape ");
  CHECK(strip_ansi("unterminated \x1b[12;") == "unterminated ");
  CHECK(strip_ansi("plain") == "plain");
}

TEST_CASE("read_prefix recognises launcher rank prefixes") {
  auto p = read_prefix("[rank3]: torch.OutOfMemoryError: x");
  CHECK(p.rank == 3);
  // The program's text keeps its leading spaces: traceback indentation matters.
  CHECK(std::string("[rank3]: torch.OutOfMemoryError: x").substr(p.length) == " torch.OutOfMemoryError: x");
  auto frame = read_prefix("[default3]:  File \"/x.py\", line 1, in f");
  CHECK(std::string("[default3]:  File \"/x.py\", line 1, in f").substr(frame.length) == "  File \"/x.py\", line 1, in f");
  CHECK(read_prefix("[default12]:hello").rank == 12);
  CHECK(read_prefix("[1,7]<stderr>: Traceback").rank == 7);
  CHECK(read_prefix("[1,7]<stdout>:x").rank == 7);
  CHECK(read_prefix("5: RuntimeError").rank == 5);
  CHECK(!read_prefix("12:00:01 something").rank);
  CHECK(!read_prefix("[rank]: x").rank);
  CHECK(!read_prefix("rank3: x").rank);
  CHECK(read_prefix("plain text").length == 0);
}

TEST_CASE("read_prefix reads timestamps and stacked prefixes") {
  auto p = read_prefix("2026-03-01 12:00:00,123 INFO step");
  REQUIRE(p.time_ms);
  CHECK(*p.time_ms == epoch_ms(2026, 3, 1, 12, 0, 0, 123));
  CHECK(std::string("2026-03-01 12:00:00,123 INFO step").substr(p.length) == "INFO step");

  auto q = read_prefix("[default2]:[rank2]:[2026-03-01T12:00:05.5Z] boom");
  CHECK(q.rank == 2);
  REQUIRE(q.time_ms);
  CHECK(*q.time_ms == epoch_ms(2026, 3, 1, 12, 0, 5, 500));
  CHECK(std::string("[default2]:[rank2]:[2026-03-01T12:00:05.5Z] boom").substr(q.length) == "boom");

  auto r = read_prefix("2026-03-01T12:00:00+02:00 x");
  REQUIRE(r.time_ms);
  CHECK(*r.time_ms == epoch_ms(2026, 3, 1, 10, 0, 0, 0));
  CHECK(!read_prefix("2026-13-01 12:00:00 x").time_ms);
  CHECK(!read_prefix("2026-03-01 25:00:00 x").time_ms);
}

TEST_CASE("epoch_ms matches known instants") {
  CHECK(epoch_ms(1970, 1, 1, 0, 0, 0, 0) == 0);
  CHECK(epoch_ms(2000, 3, 1, 0, 0, 0, 0) == 951868800000);
  CHECK(epoch_ms(2024, 2, 29, 23, 59, 59, 999) == 1709251199999);
}
