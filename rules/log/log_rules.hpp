// The log rules, one per file in this folder; registry.cpp lists them.
#pragma once

#include "rules/rule.hpp"

namespace oomlens::rules::log {

IncidentRule fragmentation_rule();  // OOM101
IncidentRule capacity_rule();       // OOM102
IncidentRule external_rule();       // OOM103
IncidentRule limit_rule();          // OOM104
IncidentRule unquantified_rule();   // OOM105

FindingRule pressure_warning_rule();         // OOM201
FindingRule host_oom_kill_rule();            // OOM202
FindingRule dataloader_killed_rule();        // OOM203
FindingRule host_allocation_failure_rule();  // OOM204
FindingRule not_memory_error_rule();         // OOM205
FindingRule collateral_rule();               // OOM206

}  // namespace oomlens::rules::log
