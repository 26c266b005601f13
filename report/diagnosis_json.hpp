// The JSON of one diagnosis, written once for every contract that carries
// diagnoses: `diagnose --format json` (docs/json-contract.md), `lint --format
// json` (docs/lint-json.md) and the language server's diagnostics' data.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rules/diagnosis.hpp"

namespace oomlens::report {

// The two contracts spell a few keys differently: a log's names the rule
// `rule` and explains it; a script's names it `code`, gives the column and
// its automatic fix.
enum class DiagnosisContract { log, lint };

// What every diagnosis says, in the contract's spelling: file (`file`, as the
// caller names the input), line, rule code and name, severity and message;
// for a log also the explanation, for a lint diagnostic the column.
nlohmann::json diagnosis_json(const rules::Diagnosis& diagnosis, const std::string& file, DiagnosisContract contract);

// Every fix: title, kind, safety; an env fix's variable and value, a
// command's line, the detail, and an edit fix's byte edits when it has them.
nlohmann::json fixes_json(const std::vector<rules::Fix>& fixes);

// The fix `lint --fix` can apply, as lint's `fix` ({title, safety,
// applicable, edits}), or null when the diagnosis has none. `unsafe`: the
// user allowed unsafe fixes.
nlohmann::json automatic_fix_json(const rules::Diagnosis& diagnosis, bool unsafe);

// Whether `lint --fix` (with --unsafe-fixes when `unsafe`) applies the
// diagnosis' automatic fix.
bool fix_applies(const rules::Diagnosis& diagnosis, bool unsafe);

}  // namespace oomlens::report
