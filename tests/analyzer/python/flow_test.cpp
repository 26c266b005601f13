#include <catch2/catch.hpp>

#include "analyzer/python/script.hpp"
#include "tests/analyzer/python/helpers.hpp"

using namespace oomlens::analyzer::python;
using oomlens::analyzer::python::testing::find;
using oomlens::analyzer::python::testing::find_call;

TEST_CASE("python flow: for and while bodies are loops; headers and else clauses are not") {
  Script s = parse_script(
      "import torch\n"
      "for x in load():\n"
      "    torch.cuda.empty_cache()\n"
      "else:\n"
      "    done()\n"
      "while cond():\n"
      "    step()\n"
      "once()\n");
  auto in_for = s.enclosing_loop(find_call(s, "torch.cuda.empty_cache()").node);
  REQUIRE(in_for);
  CHECK(in_for->kind == LoopKind::for_loop);
  CHECK(in_for->node == find(s, "for x", "for_statement"));
  CHECK(in_for->body.is("block"));
  CHECK_FALSE(in_for->is_async);
  auto in_while = s.enclosing_loop(find_call(s, "step()").node);
  REQUIRE(in_while);
  CHECK(in_while->kind == LoopKind::while_loop);
  CHECK(s.enclosing_loops(find_call(s, "load()").node).empty());
  CHECK(s.enclosing_loops(find_call(s, "cond()").node).empty());
  CHECK(s.enclosing_loops(find_call(s, "done()").node).empty());
  CHECK(s.enclosing_loops(find_call(s, "once()").node).empty());
}

TEST_CASE("python flow: nested loops, innermost first; async for") {
  Script s = parse_script(
      "async def main():\n"
      "    for epoch in range(3):\n"
      "        async for batch in loader:\n"
      "            while retry():\n"
      "                flush()\n");
  auto loops = s.enclosing_loops(find_call(s, "flush()").node);
  REQUIRE(loops.size() == 3);
  CHECK(loops[0].kind == LoopKind::while_loop);
  CHECK(loops[1].kind == LoopKind::for_loop);
  CHECK(loops[1].is_async);
  CHECK(loops[2].node == find(s, "for epoch", "for_statement"));
  CHECK_FALSE(loops[2].is_async);
}

TEST_CASE("python flow: comprehensions count as loops, except their first iterable") {
  Script s = parse_script(
      "xs = [flush() for i in first() if keep() for j in second()]\n"
      "gen = (g() async for i in it)\n"
      "d = {k(): v() for k in ks}\n");
  for (const char* snippet : {"flush()", "keep()", "second()"}) {
    auto loop = s.enclosing_loop(find_call(s, snippet).node);
    REQUIRE(loop);
    CHECK(loop->kind == LoopKind::comprehension);
    CHECK(loop->node.is("list_comprehension"));
  }
  CHECK_FALSE(s.enclosing_loop(find_call(s, "first()").node));
  auto gen = s.enclosing_loop(find_call(s, "g()").node);
  REQUIRE(gen);
  CHECK(gen->is_async);
  CHECK(s.enclosing_loop(find_call(s, "k()").node));
}

TEST_CASE("python flow: a def or lambda body stops the loop search, its defaults do not") {
  Script s = parse_script(
      "for i in range(3):\n"
      "    def f(x=default()):\n"
      "        inner()\n"
      "    cb = lambda: later()\n"
      "    @decorate()\n"
      "    def g():\n"
      "        pass\n"
      "    class C:\n"
      "        body()\n");
  CHECK(s.enclosing_loop(find_call(s, "default()").node));
  CHECK_FALSE(s.enclosing_loop(find_call(s, "inner()").node));
  CHECK_FALSE(s.enclosing_loop(find_call(s, "later()").node));
  CHECK(s.enclosing_loop(find_call(s, "decorate()").node));
  CHECK(s.enclosing_loop(find_call(s, "body()").node));  // a class body runs where it stands
}

TEST_CASE("python flow: enclosing function") {
  Script s = parse_script(
      "def outer():\n"
      "    def inner(a=dflt()):\n"
      "        f = lambda: deep()\n"
      "    top()\n"
      "mod()\n");
  auto deep = s.enclosing_function(find_call(s, "deep()").node);
  REQUIRE(deep);
  CHECK(deep->name == "inner");
  auto dflt = s.enclosing_function(find_call(s, "dflt()").node);
  REQUIRE(dflt);
  CHECK(dflt->name == "outer");
  CHECK(s.enclosing_function(find_call(s, "top()").node)->name == "outer");
  CHECK_FALSE(s.enclosing_function(find_call(s, "mod()").node));
  CHECK(s.functions().size() == 2);
  CHECK(s.functions()[0].name == "outer");
}

TEST_CASE("python flow: a loop reaching a call through functions of the same file") {
  Script s = parse_script(
      "import torch\n"
      "def release():\n"
      "    torch.cuda.empty_cache()\n"
      "def step(batch):\n"
      "    loss = batch.sum()\n"
      "    release()\n"
      "def train(loader):\n"
      "    for batch in loader:\n"
      "        step(batch)\n"
      "def never_looped():\n"
      "    release()\n"
      "def recurse():\n"
      "    recurse()\n"
      "    torch.cuda.synchronize()\n");
  Node target = find_call(s, "torch.cuda.empty_cache()").node;
  CHECK(s.enclosing_loops(target).empty());
  auto paths = s.loops_reaching(target);
  REQUIRE(paths.size() == 1);
  CHECK(paths[0].loop.node == find(s, "for batch", "for_statement"));
  REQUIRE(paths[0].through.size() == 2);
  CHECK(s.text(paths[0].through[0].node) == "step(batch)");  // the call in the loop body first
  CHECK(s.text(paths[0].through[1].node) == "release()");

  // Recursion ends the search instead of looping forever.
  CHECK(s.loops_reaching(find_call(s, "torch.cuda.synchronize()").node).empty());
}

TEST_CASE("python flow: direct loops come before loops reached through calls") {
  Script s = parse_script(
      "def f():\n"
      "    for i in a:\n"
      "        flush()\n"
      "for j in b:\n"
      "    f()\n");
  auto paths = s.loops_reaching(find_call(s, "flush()").node);
  REQUIRE(paths.size() == 2);
  CHECK(paths[0].through.empty());
  CHECK(paths[0].loop.node == find(s, "for i", "for_statement"));
  CHECK(paths[1].through.size() == 1);
  CHECK(paths[1].loop.node == find(s, "for j", "for_statement"));
}

TEST_CASE("python flow: if guards around a call, and periodic ones") {
  Script s = parse_script(
      "for step in range(n):\n"
      "    if step % 100 == 0:\n"
      "        a()\n"
      "    elif (step + 1) % args.every == 0 and step > 0:\n"
      "        b()\n"
      "    else:\n"
      "        c()\n"
      "    if not step % N:\n"
      "        d()\n"
      "    if ready:\n"
      "        if flag:\n"
      "            e()\n"
      "    if '%d' % step:\n"
      "        f()\n");
  Node loop = find(s, "for step", "for_statement");

  auto a = s.guards(find_call(s, "a()").node, loop);
  REQUIRE(a.size() == 1);
  CHECK(a[0].branch == Guard::Branch::then_branch);
  auto pa = periodic_condition(a[0].condition);
  REQUIRE(pa);
  CHECK(s.text(pa->counter) == "step");
  CHECK(s.text(pa->period) == "100");

  auto b = s.guards(find_call(s, "b()").node, loop);
  REQUIRE(b.size() == 1);
  CHECK(b[0].branch == Guard::Branch::elif_branch);
  auto pb = periodic_condition(b[0].condition);
  REQUIRE(pb);
  CHECK(s.text(pb->counter) == "(step + 1)");
  CHECK(s.text(pb->period) == "args.every");

  auto c = s.guards(find_call(s, "c()").node, loop);
  REQUIRE(c.size() == 1);
  CHECK(c[0].branch == Guard::Branch::else_branch);
  CHECK(s.text(c[0].condition) == "step % 100 == 0");

  auto d = s.guards(find_call(s, "d()").node, loop);
  REQUIRE(d.size() == 1);
  CHECK(periodic_condition(d[0].condition));

  auto e = s.guards(find_call(s, "e()").node, loop);
  REQUIRE(e.size() == 2);
  CHECK(s.text(e[0].condition) == "flag");  // innermost first
  CHECK(s.text(e[1].condition) == "ready");
  CHECK_FALSE(periodic_condition(e[0].condition));

  auto f = s.guards(find_call(s, "f()").node, loop);
  REQUIRE(f.size() == 1);
  CHECK_FALSE(periodic_condition(f[0].condition));  // string formatting, not a period

  // Without a stop, the search runs to the module (or the enclosing def body).
  CHECK(s.guards(find_call(s, "range(n)").node).empty());
  CHECK(s.guards(find_call(s, "a()").node).size() == 1);
}

TEST_CASE("python flow: guards stop at the enclosing function body") {
  Script s = parse_script(
      "if outer:\n"
      "    def f():\n"
      "        if step % 10 == 0:\n"
      "            flush()\n");
  auto guards = s.guards(find_call(s, "flush()").node);
  REQUIRE(guards.size() == 1);
  CHECK(s.text(guards[0].condition) == "step % 10 == 0");
}

TEST_CASE("python flow: module statements and execution order") {
  Script s = parse_script(
      "import os  # comment\n"
      "import torch\n"
      "def setup():\n"
      "    model = Net().cuda()\n"
      "    os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n"
      "def main():\n"
      "    setup()\n"
      "    train()\n"
      "def train():\n"
      "    pass\n"
      "class Config:\n"
      "    size = compute()\n"
      "if torch.cuda.is_available():\n"
      "    x = 1\n"
      "else:\n"
      "    x = 2\n"
      "if __name__ == '__main__':\n"
      "    main()\n");
  auto statements = s.module_statements();
  REQUIRE(statements.size() == 8);
  CHECK(statements[0].is("import_statement"));
  CHECK(statements[7].is("if_statement"));

  auto steps = s.execution_order();
  std::vector<std::string> seen;
  for (const Step& step : steps) seen.emplace_back(s.text(step.range));
  std::vector<std::string> expected{
      "import os",
      "import torch",
      "def setup():",
      "def main():",
      "def train():",
      "class Config:",
      "size = compute()",
      "if torch.cuda.is_available():",
      "x = 1",
      "x = 2",
      "if __name__ == '__main__':",
      // main() runs setup() then train() before the `main()` statement completes.
      "model = Net().cuda()",
      "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'",
      "setup()",
      "pass",
      "train()",
      "main()",
  };
  CHECK(seen == expected);
  // How each step was reached.
  const Step& cuda_use = steps[11];
  REQUIRE(cuda_use.via.size() == 2);
  CHECK(s.text(cuda_use.via[0].node) == "main()");
  CHECK(s.text(cuda_use.via[1].node) == "setup()");
  CHECK(steps[7].header_only);
  CHECK_FALSE(steps[8].header_only);
}

TEST_CASE("python flow: execution order expands a function once, and not from lambdas") {
  Script s = parse_script(
      "def f():\n"
      "    g()\n"
      "def g():\n"
      "    f()\n"
      "f()\n"
      "f()\n"
      "h = lambda: g()\n");
  std::vector<std::string> seen;
  for (const Step& step : s.execution_order()) seen.emplace_back(s.text(step.range));
  std::vector<std::string> expected{"def f():", "def g():", "f()", "g()", "f()", "f()", "h = lambda: g()"};
  CHECK(seen == expected);
}

TEST_CASE("python flow: try, with and match blocks are walked") {
  Script s = parse_script(
      "try:\n"
      "    a()\n"
      "except ValueError as e:\n"
      "    b()\n"
      "finally:\n"
      "    c()\n"
      "with ctx() as f:\n"
      "    d()\n"
      "match cmd:\n"
      "    case 1:\n"
      "        e()\n");
  std::vector<std::string> seen;
  for (const Step& step : s.execution_order()) seen.emplace_back(s.text(step.range));
  std::vector<std::string> expected{"a()", "except ValueError as e:", "b()", "c()", "with ctx() as f:",
                                    "d()", "match cmd:", "case 1:", "e()"};
  CHECK(seen == expected);
}
