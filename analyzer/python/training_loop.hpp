// Which loop of a script is its training loop: read-only queries over Script
// for the source rules that wrap that loop (record a memory snapshot, OOM304).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/python/script.hpp"

namespace oomlens::analyzer::python {

// A call that trains: `.backward(` on anything (`loss.backward()`,
// `scaler.scale(loss).backward()`, `accelerator.backward(loss)`),
// `torch.autograd.backward(...)`, or `.step(` on an optimizer or grad scaler
// (`optimizer.step()`, `self.opt.step()`, `scaler.step(optimizer)`).
bool is_training_call(const Script& script, const Call& call);

// The outermost `for`/`while` loop (comprehensions excluded) that runs the
// first training call of the file on every iteration, directly or through
// functions of this file; outermost across those calls too, so the epoch loop
// wins over the batch loop inside it.
std::optional<Loop> training_loop(const Script& script);

// Every `for`/`while` loop that runs a training call on every iteration
// (directly or through functions of this file), in source order of the calls.
std::vector<Loop> training_loops(const Script& script);

// Whether `node` sits in a function (def) after one of `loops` that lies in
// the same function's own body has finished: it then runs once per call of
// that function, after its training phase (a teardown), not per iteration.
bool after_loop_in_own_function(const Script& script, const std::vector<Loop>& loops, Node node);

// The outermost `for`/`while` loop that runs the code on `line` (1-based) on
// every iteration: the innermost loop whose text holds the line, then the
// loops around it, directly or through calls. Nothing when no loop holds it.
std::optional<Loop> loop_at_line(const Script& script, std::uint32_t line);

}  // namespace oomlens::analyzer::python
