#include <catch2/catch.hpp>

#include "analyzer/alloc_conf.hpp"

using namespace oomlens::analyzer;

namespace {

std::string_view at(std::string_view text, ConfRange r) { return text.substr(r.begin, r.end - r.begin); }

// The problems as "covered text|message" lines, for compact assertions.
std::vector<std::string> problems(std::string_view text, AllocConfContext ctx = {}) {
  std::vector<std::string> out;
  for (const auto& p : parse_alloc_conf(text, ctx).problems)
    out.push_back(std::string(at(text, p.range)) + "|" + p.message);
  return out;
}

const AllocConfProblem& only_problem(const AllocConf& c) {
  REQUIRE(c.problems.size() == 1);
  return c.problems[0];
}

}  // namespace

TEST_CASE("alloc_conf: valid values give options with exact ranges and no problems", "[alloc_conf]") {
  std::string_view v = "expandable_segments:True, max_split_size_mb : 128 ,garbage_collection_threshold:0.6";
  auto c = parse_alloc_conf(v);
  CHECK(c.problems.empty());
  REQUIRE(c.options.size() == 3);
  CHECK(c.options[0].key == "expandable_segments");
  CHECK(c.options[0].value == "True");
  CHECK(at(v, c.options[1].key_range) == "max_split_size_mb");
  CHECK(at(v, c.options[1].value_range) == "128");
  CHECK(at(v, c.options[1].range) == "max_split_size_mb : 128");
  CHECK(c.options[2].value == "0.6");
  CHECK(parse_alloc_conf("").options.empty());
  CHECK(parse_alloc_conf("  ").problems.empty());
  // A trailing comma is accepted by PyTorch's parser.
  CHECK(problems("expandable_segments:True,").empty());
  // Every documented option with a valid value.
  CHECK(problems("backend:native,max_non_split_rounding_mb:40,roundup_power2_divisions:4,"
                 "release_lock_on_cudamalloc:False,pinned_use_cuda_host_register:True,"
                 "pinned_num_register_threads:8,pinned_use_background_threads:True,"
                 "per_process_memory_fraction:0.5,graph_capture_record_stream_reuse:False,"
                 "large_segment_size_mb:64,throw_on_cudamalloc_oom:True")
            .empty());
  CHECK(problems("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]").empty());
  CHECK(problems("roundup_power2_divisions:[ 64:0 , >:2 ],expandable_segments:False").empty());
}

TEST_CASE("alloc_conf: whitespace is dropped everywhere, even inside a word, as PyTorch's lexer does",
          "[alloc_conf]") {
  auto c = parse_alloc_conf("max_split _size_mb:1 28");
  CHECK(c.problems.empty());
  REQUIRE(c.options.size() == 1);
  CHECK(c.options[0].key == "max_split_size_mb");
  CHECK(c.options[0].value == "128");
  CHECK(problems("\texpandable_segments :\tTrue\n").empty());
}

TEST_CASE("alloc_conf: max_split_size_mb range and boundaries", "[alloc_conf]") {
  std::string_view v = "expandable_segments:True,max_split_size_mb:-1";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(p.message == "max_split_size_mb:-1: must be an integer ≥ 20 (MiB)");
  CHECK(at(v, p.range) == "max_split_size_mb:-1");
  CHECK(p.severity == ConfSeverity::error);
  CHECK_FALSE(p.replacement);
  CHECK(problems("max_split_size_mb:19") == std::vector<std::string>{
                                                 "max_split_size_mb:19|max_split_size_mb:19: must be an integer ≥ 20 (MiB)"});
  CHECK(problems("max_split_size_mb:abc").size() == 1);
  CHECK(problems("max_split_size_mb:21").empty());
  // 20 is accepted by newer PyTorch only.
  auto twenty = only_problem(parse_alloc_conf("max_split_size_mb:20"));
  CHECK(twenty.severity == ConfSeverity::warning);
  CHECK(twenty.message.find("2.6 and older reject 20") != std::string::npos);
  CHECK(problems("max_non_split_rounding_mb:10").size() == 1);
  CHECK(only_problem(parse_alloc_conf("max_split_size_mb:99999999999")).message.find("out of range") !=
        std::string::npos);
  CHECK(problems("large_segment_size_mb:0").size() == 1);
}

TEST_CASE("alloc_conf: a unit after the number is read as the number, with a fix that keeps behaviour",
          "[alloc_conf]") {
  std::string_view v = "max_split_size_mb:512MB";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(p.severity == ConfSeverity::warning);
  CHECK(p.message == "max_split_size_mb:512MB: PyTorch reads only the leading 512 and ignores 'MB' (the unit is always MiB)");
  REQUIRE(p.replacement);
  CHECK(*p.replacement == "512");
  CHECK(at(v, p.fix_range) == "512MB");
  CHECK(p.fix_keeps_behaviour);
  // The leading number itself too small: an error, no fix.
  auto small = only_problem(parse_alloc_conf("max_split_size_mb:1.5"));
  CHECK(small.severity == ConfSeverity::error);
  CHECK_FALSE(small.replacement);
}

TEST_CASE("alloc_conf: booleans are exactly True or False", "[alloc_conf]") {
  std::string_view v = "expandable_segments:true";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(p.message == "expandable_segments:true: must be True or False (case-sensitive)");
  CHECK(p.severity == ConfSeverity::error);
  REQUIRE(p.replacement);
  CHECK(*p.replacement == "True");
  CHECK(at(v, p.fix_range) == "true");
  CHECK_FALSE(p.fix_keeps_behaviour);
  CHECK(*only_problem(parse_alloc_conf("release_lock_on_cudamalloc:FALSE")).replacement == "False");
  auto one = only_problem(parse_alloc_conf("expandable_segments:1"));
  CHECK(one.message == "expandable_segments:1: must be True or False");
  CHECK_FALSE(one.replacement);
}

TEST_CASE("alloc_conf: unknown options, with a suggestion only when one key is close", "[alloc_conf]") {
  std::string_view v = "expandable_segment:True";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(p.message == "unknown option 'expandable_segment' (did you mean 'expandable_segments'?)");
  CHECK(at(v, p.range) == "expandable_segment");
  REQUIRE(p.replacement);
  CHECK(*p.replacement == "expandable_segments");
  CHECK(at(v, p.fix_range) == "expandable_segment");
  // Case and dashes.
  CHECK(*only_problem(parse_alloc_conf("Max-Split-Size-MB:128")).replacement == "max_split_size_mb");
  // A missing unit suffix.
  CHECK(*only_problem(parse_alloc_conf("max_split_size:128")).replacement == "max_split_size_mb");
  // Transposed letters.
  CHECK(*only_problem(parse_alloc_conf("backedn:native")).replacement == "backend");
  // Nothing close: no suggestion.
  auto far = only_problem(parse_alloc_conf("use_magic:True"));
  CHECK(far.message == "unknown option 'use_magic'");
  CHECK_FALSE(far.replacement);
  // Known to 1.13 only.
  CHECK(only_problem(parse_alloc_conf("roundup_bypass_threshold_mb:64")).message.find("1.13") != std::string::npos);
}

TEST_CASE("alloc_conf: malformed entries", "[alloc_conf]") {
  // An empty entry: PyTorch reads ',' as an option name.
  std::string_view v = "expandable_segments:True,,max_split_size_mb:128";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(at(v, p.range) == ",");
  CHECK(p.range.begin == 25);
  REQUIRE(p.replacement);
  CHECK(*p.replacement == "");
  CHECK(problems(",expandable_segments:True").size() == 1);
  // No value.
  CHECK(problems("expandable_segments") ==
        std::vector<std::string>{"expandable_segments|'expandable_segments' has no value (expected 'expandable_segments:value')"});
  CHECK(problems("expandable_segments:") ==
        std::vector<std::string>{"expandable_segments:|expandable_segments: missing value after ':'"});
  CHECK(problems(":True") == std::vector<std::string>{":True|':True': missing option name before ':'"});
  // `=` for `:`.
  std::string_view eq = "expandable_segments=True";
  auto e = only_problem(parse_alloc_conf(eq));
  REQUIRE(e.replacement);
  CHECK(*e.replacement == ":");
  CHECK(at(eq, e.fix_range) == "=");
  // `;` or spaces between options.
  std::string_view semi = "expandable_segments:True;max_split_size_mb:128";
  auto sp = only_problem(parse_alloc_conf(semi));
  CHECK(sp.message == "expandable_segments:True;max_split_size_mb:128: options are separated by ',' (PyTorch reads this as one malformed value)");
  CHECK(*sp.replacement == "expandable_segments:True,max_split_size_mb:128");
  CHECK(at(semi, sp.fix_range) == semi);
  std::string_view spaced = "garbage_collection_threshold:0.6 max_split_size_mb: 128";
  CHECK(*only_problem(parse_alloc_conf(spaced)).replacement == "garbage_collection_threshold:0.6,max_split_size_mb: 128");
  // Two values in one option.
  CHECK(only_problem(parse_alloc_conf("max_split_size_mb:128:256")).message.find("malformed value") != std::string::npos);
}

TEST_CASE("alloc_conf: other values", "[alloc_conf]") {
  CHECK(problems("garbage_collection_threshold:0").size() == 1);
  CHECK(problems("garbage_collection_threshold:1.0").size() == 1);
  CHECK(problems("garbage_collection_threshold:0.999").empty());
  CHECK(problems("pinned_num_register_threads:3").size() == 1);
  CHECK(problems("pinned_num_register_threads:256").size() == 1);
  CHECK(problems("pinned_num_register_threads:128").empty());
  CHECK(problems("roundup_power2_divisions:3").size() == 1);
  CHECK(problems("roundup_power2_divisions:0").size() == 1);
  std::string_view list = "roundup_power2_divisions:[256:1,300:2,>:3]";
  auto l = problems(list);
  REQUIRE(l.size() == 2);
  CHECK(l[0] == "300:2|roundup_power2_divisions: '300:2': the interval start must be a power of 2 (MiB) or '>'");
  CHECK(l[1] == ">:3|roundup_power2_divisions: '>:3': the divisions must be a power of 2, or 0");
  CHECK(problems("roundup_power2_divisions:[256:1").size() == 1);
  CHECK(problems("backend:cudaMallocAsync").empty());
  auto b = only_problem(parse_alloc_conf("backend:cudamallocasync"));
  CHECK(*b.replacement == "cudaMallocAsync");
  CHECK(problems("backend:jemalloc") ==
        std::vector<std::string>{"backend:jemalloc|backend:jemalloc: unknown backend, must be native or cudaMallocAsync"});
  // hipMallocAsync belongs to ROCm builds.
  CHECK(problems("backend:hipMallocAsync", {"PYTORCH_HIP_ALLOC_CONF"}).empty());
  CHECK(problems("backend:hipMallocAsync", {"PYTORCH_CUDA_ALLOC_CONF"}).size() == 1);
}

TEST_CASE("alloc_conf: options ignored under backend:cudaMallocAsync", "[alloc_conf]") {
  std::string_view v = "backend:cudaMallocAsync,max_split_size_mb:128,release_lock_on_cudamalloc:True";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(p.message == "'max_split_size_mb' is ignored under backend:cudaMallocAsync");
  CHECK(p.severity == ConfSeverity::warning);
  CHECK(at(v, p.range) == "max_split_size_mb:128");
  CHECK_FALSE(p.replacement);
  CHECK(problems("expandable_segments:True,backend:cudaMallocAsync").size() == 1);
  CHECK(problems("backend:native,max_split_size_mb:128").empty());
}

TEST_CASE("alloc_conf: backend written with spaces, and conflicting backends", "[alloc_conf]") {
  std::string_view v = "backend: cudaMallocAsync";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(p.severity == ConfSeverity::error);
  CHECK(p.message.find("load-time reader") != std::string::npos);
  CHECK(*p.replacement == "backend:cudaMallocAsync");
  CHECK(problems("backend : native").empty());
  auto c = problems("backend:native,backend:cudaMallocAsync");
  REQUIRE(c.size() == 1);
  CHECK(c[0].starts_with("backend:cudaMallocAsync|backend:cudaMallocAsync conflicts with the earlier backend:native"));
}

TEST_CASE("alloc_conf: a duplicate option: the last value wins; removing the earlier one keeps behaviour",
          "[alloc_conf]") {
  std::string_view v = "max_split_size_mb:128, expandable_segments:True, max_split_size_mb:256";
  auto p = only_problem(parse_alloc_conf(v));
  CHECK(p.message == "'max_split_size_mb' is set again later (max_split_size_mb:256): the last value wins");
  CHECK(p.severity == ConfSeverity::warning);
  CHECK(at(v, p.range) == "max_split_size_mb:128");
  CHECK(at(v, p.fix_range) == "max_split_size_mb:128, ");
  CHECK(p.fix_keeps_behaviour);
  // Lists are combined, not replaced: no fix.
  auto r = only_problem(parse_alloc_conf("roundup_power2_divisions:4,roundup_power2_divisions:[>:2]"));
  CHECK_FALSE(r.replacement);
}

TEST_CASE("alloc_conf: expandable segments where the platform lacks them", "[alloc_conf]") {
  auto p = only_problem(parse_alloc_conf("expandable_segments:True", {"PYTORCH_HIP_ALLOC_CONF"}));
  CHECK(p.severity == ConfSeverity::warning);
  CHECK(p.message.find("ROCm") != std::string::npos);
  CHECK(problems("expandable_segments:True", {"", ConfPlatform::windows}).size() == 1);
  CHECK(problems("expandable_segments:False", {"PYTORCH_HIP_ALLOC_CONF"}).empty());
  CHECK(problems("expandable_segments:True", {"PYTORCH_CUDA_ALLOC_CONF"}).empty());
}

TEST_CASE("alloc_conf: problems come in order of position", "[alloc_conf]") {
  auto c = parse_alloc_conf("backend:cudaMallocAsync,expandable_segment:True,max_split_size_mb:10");
  REQUIRE(c.problems.size() == 2);
  CHECK(c.problems[0].range.begin < c.problems[1].range.begin);
}

TEST_CASE("alloc_conf: merge sets one option, keeps the rest and their order, and is idempotent", "[alloc_conf]") {
  CHECK(merge_alloc_conf("", "expandable_segments:True") == "expandable_segments:True");
  CHECK(merge_alloc_conf("  ", "expandable_segments:True") == "expandable_segments:True");
  CHECK(merge_alloc_conf("max_split_size_mb:128", "expandable_segments:True") ==
        "max_split_size_mb:128,expandable_segments:True");
  CHECK(merge_alloc_conf("max_split_size_mb:128,", "expandable_segments:True") ==
        "max_split_size_mb:128,expandable_segments:True");
  CHECK(merge_alloc_conf("max_split_size_mb:128 ", "expandable_segments:True") ==
        "max_split_size_mb:128,expandable_segments:True ");
  // Replaced in place, spacing around it kept.
  CHECK(merge_alloc_conf("expandable_segments : False, max_split_size_mb:128", "expandable_segments:True") ==
        "expandable_segments : True, max_split_size_mb:128");
  CHECK(merge_alloc_conf("a:1,max_split_size_mb:[x],b:2", "max_split_size_mb:64") == "a:1,max_split_size_mb:64,b:2");
  // Every duplicate gets the value, so they agree.
  CHECK(merge_alloc_conf("max_split_size_mb:64,max_split_size_mb:32", "max_split_size_mb:128") ==
        "max_split_size_mb:128,max_split_size_mb:128");
  // A key without a value gets one.
  CHECK(merge_alloc_conf("expandable_segments,x:1", "expandable_segments:True") == "expandable_segments:True,x:1");
  CHECK(merge_alloc_conf("expandable_segments:", "expandable_segments:True") == "expandable_segments:True");
  // Same value already there: the input unchanged, byte for byte.
  for (std::string_view v : {"expandable_segments:True", " expandable_segments : True ,x:1", "a:1,expandable_segments:Tr ue"})
    CHECK(merge_alloc_conf(v, "expandable_segments:True") == v);
  // Idempotent.
  for (std::string_view v : {"", "max_split_size_mb:128", "expandable_segments:False,", "roundup_power2_divisions:[256:1,>:2]"}) {
    std::string once = merge_alloc_conf(v, "expandable_segments:True");
    CHECK(merge_alloc_conf(once, "expandable_segments:True") == once);
  }
  // A list value is one entry: its commas do not split it.
  CHECK(merge_alloc_conf("roundup_power2_divisions:[256:1,>:2]", "roundup_power2_divisions:[>:4]") ==
        "roundup_power2_divisions:[>:4]");
  CHECK(merge_alloc_conf("roundup_power2_divisions:[256:1,>:2]", "expandable_segments:True") ==
        "roundup_power2_divisions:[256:1,>:2],expandable_segments:True");
  // An unclosed `[` does not swallow what follows it.
  std::string open = merge_alloc_conf("roundup_power2_divisions:[256:1", "expandable_segments:True");
  CHECK(open == "roundup_power2_divisions:[256:1,expandable_segments:True");
  CHECK(merge_alloc_conf(open, "expandable_segments:True") == open);
  // Not a key:value option: nothing changes.
  CHECK(merge_alloc_conf("x:1", "garbage") == "x:1");
  CHECK(merge_alloc_conf("x:1", ":True") == "x:1");
  CHECK(merge_alloc_conf("x:1", " backend : cudaMallocAsync ") == "x:1,backend:cudaMallocAsync");
}

TEST_CASE("alloc_conf: the variable names", "[alloc_conf]") {
  CHECK(is_alloc_conf_variable("PYTORCH_CUDA_ALLOC_CONF"));
  CHECK(is_alloc_conf_variable("PYTORCH_ALLOC_CONF"));
  CHECK(is_alloc_conf_variable("PYTORCH_HIP_ALLOC_CONF"));
  CHECK_FALSE(is_alloc_conf_variable("pytorch_cuda_alloc_conf"));
  CHECK_FALSE(is_alloc_conf_variable("PYTORCH_NO_CUDA_MEMORY_CACHING"));
}
