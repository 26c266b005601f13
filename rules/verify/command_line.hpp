// The verification command every diagnosis ends with: `oomlens verify`,
// which re-runs the job with and without the fix and compares them.
#pragma once

#include <string>
#include <string_view>

namespace oomlens::rules::verify {

// `oomlens verify --baseline --conf 'expandable_segments:True' -- python train.py`
// for an allocator setting (--env NAME=VALUE for any other variable), or
// `oomlens verify -- python train.py`, a measured run, when there is none.
// `run` is the command line that starts the job, already quoted.
// Without `baseline`, one run with the variable set (a diagnostic setting
// such as CUDA_LAUNCH_BLOCKING=1, not a fix to compare).
std::string verify_command(std::string_view variable, std::string_view value, std::string_view run,
                           bool baseline = true);

// A word for a POSIX shell: as is when it needs no quoting, else in single
// quotes ('\'' for a quote inside).
std::string shell_quote(std::string_view word);

}  // namespace oomlens::rules::verify
