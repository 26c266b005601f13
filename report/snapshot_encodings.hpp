// Snapshots that are not a bare pickle: gzip-compressed (`x.pickle.gz`, as
// jobs store them to save space) and JSON (`json.dump(torch.cuda.memory.
// _snapshot(), f)`, as tools that cannot pickle write them). Both become the
// bytes of a pickle and go through the one data-only reader, so every limit
// and refusal of that reader holds for them too.
#pragma once

#include <string>
#include <string_view>

namespace oomlens::report {

enum class SnapshotEncoding { pickle, gzip, json };

// By the first bytes: gzip's magic (1f 8b), a JSON object or array ('{' or
// '[' after white space), else a pickle.
SnapshotEncoding detect_encoding(std::string_view head);

// Inflates every gzip member of `in`. Refuses (false, the reason in `error`)
// a corrupt or truncated stream, and output beyond the largest pickle the
// reader accepts (a decompression bomb stops there, not at memory's end).
bool gunzip(std::string_view in, std::string& out, std::string& error);

// A JSON snapshot rewritten as a protocol-2 pickle of the same values
// (objects as dicts, arrays as lists), streamed (no JSON document is built).
// Refuses malformed JSON, naming the byte offset.
bool json_to_pickle(std::string_view json, std::string& out, std::string& error);

}  // namespace oomlens::report
