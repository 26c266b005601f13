// A log document that is one file of a multi-file job (a file per rank, as
// torchrun --log-dir, SLURM's %t or rank3.log write them) is analysed with
// the job's other files, as `oomlens diagnose DIR` reads them: one timeline,
// one incident across the files. Its diagnostics stay on its own lines and
// point into the other files (lsp/log_diagnostics.hpp).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "lsp/document_analysis.hpp"

namespace oomlens::lsp {

// The job key of a document's path (analyzer/log/job.hpp); empty when it names
// no rank or is not a local file.
std::string job_key_of_uri(std::string_view uri);

// The other open log documents whose paths share `doc`'s job key: taken on
// the protocol thread, so that the analysis reads the editor's text of each.
std::vector<DocumentSnapshot> open_job_documents(const Document& doc, const DocumentStore& open);

// `doc` analysed with the other files of its job: those in `open` as the
// editor holds them, the rest streamed from disk (an unreadable one is left
// out and named in job_messages). Null when the document is not one
// file of a job of several: then analyze_document is the analysis.
std::shared_ptr<const DocumentAnalysis> analyze_job_document(const DocumentSnapshot& doc,
                                                             const std::vector<DocumentSnapshot>& open,
                                                             const Settings& settings, PositionEncoding encoding,
                                                             const std::atomic<bool>& cancelled,
                                                             const std::function<void(double)>& progress);

}  // namespace oomlens::lsp
