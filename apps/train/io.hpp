#pragma once
// Small file helpers for run directories.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace topo::apps {

// Appends one compact JSON line and flushes (metrics.jsonl).
void append_json_line(const std::string& path, const nlohmann::json& line);
// Every line of a JSON-lines file parsed (missing file: empty); a malformed line is an error naming it.
// drop_torn_tail: a last line without its '\n' that does not parse is dropped instead (what a kill during
// append_json_line leaves; --resume rewrites the file without it).
std::vector<nlohmann::json> read_json_lines(const std::string& path, bool drop_torn_tail = false);
// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace topo::apps
