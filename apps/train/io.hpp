#pragma once
// Small file helpers for run directories.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace topo::apps {

// Appends one compact JSON line and flushes (metrics.jsonl).
void append_json_line(const std::string& path, const nlohmann::json& line);
// Every line of a JSON-lines file parsed (missing file: empty); a malformed line is an error naming it.
std::vector<nlohmann::json> read_json_lines(const std::string& path);
// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace topo::apps
