#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "lsp/documents.hpp"
#include "tests/lsp/lsp_test_support.hpp"

using namespace oomlens::lsp;

namespace {

const std::string kUri = "file:///runs/train.log";

TextChange edit(std::uint32_t l1, std::uint32_t c1, std::uint32_t l2, std::uint32_t c2, std::string text) {
  return TextChange{Range{{l1, c1}, {l2, c2}}, std::move(text), std::nullopt};
}

TextChange full(std::string text) { return TextChange{std::nullopt, std::move(text), std::nullopt}; }

// Opens `text` at version 1 and applies one didChange at version 2.
ChangeResult apply(PositionEncoding encoding, std::string text, std::vector<TextChange> changes) {
  DocumentStore store(encoding);
  store.open(kUri, "log", 1, std::move(text));
  return store.change(kUri, 2, std::move(changes));
}

std::string applied_text(PositionEncoding encoding, std::string text, std::vector<TextChange> changes) {
  ChangeResult result = apply(encoding, std::move(text), std::move(changes));
  INFO(result.error);
  REQUIRE(result);
  return result.document->text;
}

}  // namespace

TEST_CASE("classify_document reads languageId first, then the extension") {
  CHECK(classify_document("file:///a/train.py", "python") == DocumentKind::python);
  CHECK(classify_document("file:///a/x", "Python") == DocumentKind::python);
  CHECK(classify_document("file:///a/run.log", "log") == DocumentKind::log);
  CHECK(classify_document("file:///a/x", "plaintext") == DocumentKind::log);
  CHECK(classify_document("file:///a/x", "text") == DocumentKind::log);
  CHECK(classify_document("untitled:Untitled-1", "plaintext") == DocumentKind::log);
  CHECK(classify_document("file:///a/slurm-123.out", "") == DocumentKind::log);
  CHECK(classify_document("file:///a/job.ERR", "unknown") == DocumentKind::log);
  CHECK(classify_document("file:///a/notes.txt", "markdown") == DocumentKind::log);
  CHECK(classify_document("file:///a/run.log?x=1#frag", "json") == DocumentKind::log);
  CHECK(classify_document("file:///a/train.py", "") == DocumentKind::python);
  CHECK(classify_document("file:///a/train.py", "plaintext") == DocumentKind::log);  // the user's choice wins
  // Files that may set the allocator variables: read as launch files.
  CHECK(classify_document("file:///a/config.yaml", "yaml") == DocumentKind::config);
  CHECK(classify_document("file:///a/Dockerfile", "dockerfile") == DocumentKind::config);
  CHECK(classify_document("file:///a/job.sbatch", "") == DocumentKind::config);
  CHECK(classify_document("file:///a/setup.cfg", "ini") == DocumentKind::other);
  CHECK(classify_document("file:///a.log/readme", "") == DocumentKind::other);
  CHECK(classify_document("file:///a/.log", "") == DocumentKind::other);
  CHECK(classify_document("untitled:Untitled-2", "") == DocumentKind::other);
}

TEST_CASE("DocumentStore opens, gets and closes documents") {
  DocumentStore store;
  CHECK(store.position_encoding() == PositionEncoding::utf16);
  CHECK(!store.get(kUri));
  DocumentSnapshot opened = store.open(kUri, "log", 3, "hello\n");
  REQUIRE(opened);
  CHECK(opened->uri == kUri);
  CHECK(opened->language_id == "log");
  CHECK(opened->version == 3);
  CHECK(opened->text == "hello\n");
  CHECK(opened->kind == DocumentKind::log);
  CHECK(store.get(kUri) == opened);
  CHECK(store.all().size() == 1);

  // A second open replaces the document.
  store.open(kUri, "log", 1, "again");
  CHECK(store.get(kUri)->text == "again");
  CHECK(store.all().size() == 1);

  CHECK(store.close(kUri));
  CHECK(!store.get(kUri));
  CHECK(!store.close(kUri));
  CHECK(store.all().empty());
  CHECK(opened->text == "hello\n");  // a snapshot outlives close
}

TEST_CASE("DocumentStore applies full-text changes") {
  DocumentStore store;
  store.open("file:///t.py", "python", 1, "import torch\n");
  ChangeResult result = store.change("file:///t.py", 2, {full("x = 1\n")});
  REQUIRE(result);
  CHECK(result.error.empty());
  CHECK(result.document->text == "x = 1\n");
  CHECK(result.document->version == 2);
  CHECK(result.document->kind == DocumentKind::python);
  CHECK(store.get("file:///t.py") == result.document);
}

TEST_CASE("DocumentStore inserts and deletes within and across lines") {
  const auto u16 = PositionEncoding::utf16;
  CHECK(applied_text(u16, "hello world", {edit(0, 5, 0, 5, ",")}) == "hello, world");
  CHECK(applied_text(u16, "hello world", {edit(0, 0, 0, 6, "")}) == "world");
  CHECK(applied_text(u16, "line one\nline two\nline three", {edit(0, 5, 2, 5, "")}) == "line three");
  CHECK(applied_text(u16, "a\nb", {edit(1, 0, 1, 0, "x\ny\n")}) == "a\nx\ny\nb");
  CHECK(applied_text(u16, "a\nb\n", {edit(2, 0, 2, 0, "c")}) == "a\nb\nc");  // the empty last line
  CHECK(applied_text(u16, "", {edit(0, 0, 0, 0, "first")}) == "first");
  CHECK(applied_text(u16, "abc", {}) == "abc");
}

TEST_CASE("DocumentStore edits lines ended by CRLF and bare CR") {
  const auto u16 = PositionEncoding::utf16;
  CHECK(applied_text(u16, "a\r\nb", {edit(0, 1, 1, 0, "")}) == "ab");
  CHECK(applied_text(u16, "a\rb", {edit(0, 1, 1, 0, "")}) == "ab");
  CHECK(applied_text(u16, " 10%\r 50%\r100%\nOOM", {edit(2, 0, 2, 4, "done")}) == " 10%\r 50%\rdone\nOOM");
  CHECK(applied_text(u16, "a\r\nb", {edit(0, 99, 0, 99, "!")}) == "a!\r\nb");  // clamps before the CRLF
}

TEST_CASE("DocumentStore applies changes in order, each against the text the previous one left") {
  const auto u16 = PositionEncoding::utf16;
  // Read against the original, the second change would delete 'b'.
  CHECK(applied_text(u16, "abc", {edit(0, 0, 0, 0, "X"), edit(0, 1, 0, 2, "")}) == "Xbc");
  // After joining the lines, column 6 of line 0 exists; in the original it clamps to 3.
  CHECK(applied_text(u16, "one\ntwo", {edit(0, 3, 1, 0, ""), edit(0, 6, 0, 6, "!")}) == "onetwo!");
  // A full replacement in the middle resets the base for what follows.
  CHECK(applied_text(u16, "old", {edit(0, 0, 0, 3, "older"), full("hello\nworld"), edit(1, 0, 1, 5, "there")}) ==
        "hello\nthere");
  // Typing "ö😀" one character per change, as editors send it.
  CHECK(applied_text(u16, "ab", {edit(0, 1, 0, 1, "ö"), edit(0, 2, 0, 2, "😀"), edit(0, 4, 0, 4, "c")}) ==
        "aö😀cb");
}

TEST_CASE("DocumentStore reads ranges in emoji lines in the negotiated encoding") {
  std::string text = "a😀b\nx漢😀y";
  // Replace the emoji on line 0 by "ö".
  CHECK(applied_text(PositionEncoding::utf16, text, {edit(0, 1, 0, 3, "ö")}) == "aöb\nx漢😀y");
  CHECK(applied_text(PositionEncoding::utf8, text, {edit(0, 1, 0, 5, "ö")}) == "aöb\nx漢😀y");
  CHECK(applied_text(PositionEncoding::utf32, text, {edit(0, 1, 0, 2, "ö")}) == "aöb\nx漢😀y");
  // Insert after the emoji on line 1 (x=1, 漢=1, 😀=2 UTF-16 units; 1+3+4 bytes).
  CHECK(applied_text(PositionEncoding::utf16, text, {edit(1, 4, 1, 4, "!")}) == "a😀b\nx漢😀!y");
  CHECK(applied_text(PositionEncoding::utf8, text, {edit(1, 8, 1, 8, "!")}) == "a😀b\nx漢😀!y");
  // Split a line after an emoji, then delete across the new line end.
  CHECK(applied_text(PositionEncoding::utf16, text, {edit(0, 3, 0, 3, "\n"), edit(0, 3, 1, 0, "")}) == text);
  CHECK(applied_text(PositionEncoding::utf8, text, {edit(0, 5, 0, 5, "\r\n"), edit(1, 0, 1, 1, "B")}) ==
        "a😀\r\nB\nx漢😀y");
  // Delete from an emoji line through the next emoji.
  CHECK(applied_text(PositionEncoding::utf16, text, {edit(0, 1, 1, 4, "")}) == "ay");
  CHECK(applied_text(PositionEncoding::utf8, text, {edit(0, 1, 1, 8, "")}) == "ay");
}

TEST_CASE("DocumentStore rejects a change to a document that is not open") {
  DocumentStore store;
  ChangeResult result = store.change("file:///nowhere.log", 2, {full("x")});
  CHECK(!result);
  CHECK(!result.document);
  CHECK_THAT(result.error, Catch::Contains("not open") && Catch::Contains("nowhere.log"));
  CHECK(!store.get("file:///nowhere.log"));
}

TEST_CASE("DocumentStore rejects a version that is not above the current one") {
  DocumentStore store;
  store.open(kUri, "log", 5, "abc");
  for (std::int64_t version : {5, 4, -1}) {
    ChangeResult result = store.change(kUri, version, {full("x")});
    CHECK(!result);
    CHECK_THAT(result.error, Catch::Contains("version"));
  }
  CHECK(store.get(kUri)->text == "abc");
  CHECK(store.change(kUri, 6, {full("x")}));
}

TEST_CASE("DocumentStore rejects ranges beyond the document, inverted or inside a character") {
  const auto u16 = PositionEncoding::utf16;
  const std::string text = "a😀b\nsecond";  // 2 lines
  struct Case {
    TextChange change;
    const char* why;
  };
  std::vector<Case> cases = {
      {edit(3, 0, 3, 0, "x"), "past the end"},
      {edit(0, 0, 5, 0, "x"), "past the end"},
      {edit(2, 1, 2, 1, "x"), "past the end"},
      {edit(1, 2, 0, 1, "x"), "after its end"},
      {edit(0, 3, 0, 1, "x"), "after its end"},
      {edit(0, 2, 0, 3, "x"), "inside a character"},
      {edit(0, 1, 0, 2, "x"), "inside a character"},
  };
  for (auto& c : cases) {
    INFO(c.why);
    ChangeResult result = apply(u16, text, {c.change});
    CHECK(!result);
    CHECK_THAT(result.error, Catch::Contains(c.why) && Catch::Contains("change 1 of 1"));
  }
  ChangeResult utf8_split = apply(PositionEncoding::utf8, text, {edit(0, 2, 0, 2, "x")});
  CHECK_THAT(utf8_split.error, Catch::Contains("inside a character") && Catch::Contains("utf-8"));
  // The position just past the last line, at character 0, is the end of the text.
  CHECK(applied_text(u16, text, {edit(1, 0, 2, 0, "end")}) == "a😀b\nend");
}

TEST_CASE("DocumentStore never applies part of a didChange") {
  DocumentStore store;
  DocumentSnapshot before = store.open(kUri, "log", 1, "one\ntwo");
  ChangeResult result = store.change(kUri, 2, {edit(0, 0, 0, 3, "ONE"), full("replaced"), edit(9, 0, 9, 0, "x")});
  CHECK(!result);
  CHECK_THAT(result.error, Catch::Contains("change 3 of 3"));
  CHECK(store.get(kUri) == before);
  CHECK(store.get(kUri)->text == "one\ntwo");
  CHECK(store.get(kUri)->version == 1);
  // Nothing was applied, so the same version can be sent again.
  CHECK(store.change(kUri, 2, {edit(0, 0, 0, 3, "ONE")}));
  CHECK(store.get(kUri)->text == "ONE\ntwo");
}

TEST_CASE("DocumentStore snapshots stay valid and unchanged while the store changes") {
  DocumentStore store;
  DocumentSnapshot v1 = store.open(kUri, "log", 1, "a😀\nb");
  const LineIndex& lines = v1->lines();
  CHECK(lines.line_count() == 2);
  REQUIRE(store.change(kUri, 2, {edit(0, 0, 1, 1, "xyz\r\n\r\n")}));
  DocumentSnapshot v2 = store.get(kUri);
  CHECK(v2->text == "xyz\r\n\r\n");
  CHECK(v2->lines().line_count() == 3);
  CHECK(v1->text == "a😀\nb");
  CHECK(&v1->lines() == &lines);
  CHECK(v1->lines().position_of(5, PositionEncoding::utf16) == Position{0, 3});
}

TEST_CASE("DocumentStore uses the encoding set after initialize") {
  DocumentStore store;
  store.set_position_encoding(PositionEncoding::utf8);
  CHECK(store.position_encoding() == PositionEncoding::utf8);
  store.open(kUri, "log", 1, "😀x");
  REQUIRE(store.change(kUri, 2, {edit(0, 4, 0, 5, "y")}));
  CHECK(store.get(kUri)->text == "😀y");
}

TEST_CASE("DocumentStore keeps snapshots consistent under concurrent edits and reads") {
  DocumentStore store;
  store.open(kUri, "log", 0, "");
  constexpr int kEdits = 2000;
  std::atomic<bool> done = false;
  std::atomic<int> inconsistent = 0;
  std::atomic<int> reads = 0;
  auto reader = [&] {
    while (!done) {
      DocumentSnapshot document = store.get(kUri);
      auto version = static_cast<std::size_t>(document->version);
      // Version v holds v lines of "row\r\n": text and line index must agree.
      if (document->text.size() != 5 * version || document->lines().line_count() != version + 1) ++inconsistent;
      ++reads;
    }
  };
  std::thread first(reader), second(reader);
  int failed = 0;
  for (int v = 1; v <= kEdits; ++v) {
    auto line = static_cast<std::uint32_t>(v - 1);
    if (!store.change(kUri, v, {edit(line, 0, line, 0, "row\r\n")})) ++failed;
  }
  done = true;
  first.join();
  second.join();
  CHECK(failed == 0);
  CHECK(inconsistent == 0);
  CHECK(reads > 0);
  CHECK(store.get(kUri)->lines().line_count() == kEdits + 1);
}

TEST_CASE("DocumentStore edits a large text in place only when no snapshot of it is held") {
  // Two MiB of lines ending in \n, \r\n and bare \r, with non-ASCII text.
  std::string text;
  for (int i = 0; text.size() < (2u << 20); ++i)
    text += i % 3 == 0 ? "step " + std::to_string(i) + " ö\n" : i % 3 == 1 ? "bar 50%\r" : "loss 2.5\r\n";
  const std::string original = text;
  DocumentStore store;
  store.open(kUri, "log", 1, text);
  std::string expected = text;
  // Line 1000 has content on every kind of line; the edit spans two lines.
  const std::size_t at = LineIndex(expected).line_start(1000);
  const std::size_t to = LineIndex(expected).line_start(1001) + 2;
  expected.replace(at + 1, to - (at + 1), "XY\nZ");

  SECTION("no snapshot held: in place, with the index the new text would have") {
    ChangeResult result = store.change(kUri, 2, {edit(1000, 1, 1001, 2, "XY\nZ")});
    INFO(result.error);
    REQUIRE(result);
    CHECK(result.document->text == expected);
    CHECK(result.edit == oomlens::analyzer::LogEdit{at + 1, to - (at + 1), 4});
    const LineIndex& lines = result.document->lines();
    const LineIndex fresh(expected);
    REQUIRE(lines.line_count() == fresh.line_count());
    for (std::size_t l = 0; l < fresh.line_count(); l += 97) CHECK(lines.line_start(l) == fresh.line_start(l));
    CHECK(store.get(kUri)->text == expected);
  }
  SECTION("a snapshot held elsewhere keeps its text") {
    DocumentSnapshot held = store.get(kUri);
    ChangeResult result = store.change(kUri, 2, {edit(1000, 1, 1001, 2, "XY\nZ")});
    REQUIRE(result);
    CHECK(result.document->text == expected);
    CHECK(held->text == original);
    CHECK(held->lines().line_count() == LineIndex(original).line_count());
  }
  SECTION("a change that does not fit is rejected and changes nothing") {
    ChangeResult result = store.change(kUri, 2, {edit(9999999, 0, 9999999, 0, "x")});
    CHECK_FALSE(result);
    CHECK(result.error.find("past the end") != std::string::npos);
    CHECK(store.get(kUri)->text == original);
    CHECK(store.get(kUri)->version == 1);
  }
}
