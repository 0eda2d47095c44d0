#include <doctest/doctest.h>

#include <string>

#include "nn/json_input.hpp"

namespace {

using nlohmann::json;

std::string parse_error_of(const std::string& text) {
  try {
    (void)topo::parse_json_input(text);
  } catch (const json::parse_error& e) {
    return e.what();
  }
  return "";
}

std::string nested(int levels, const std::string& open, const std::string& close) {
  std::string text;
  for (int i = 0; i < levels; ++i) text += open;
  text += "1";
  for (int i = 0; i < levels; ++i) text += close;
  return text;
}

}  // namespace

TEST_CASE("parse_json_input: what nlohmann's parse reads, within kMaxJsonDepth levels and without repeated keys") {
  CHECK(topo::parse_json_input(R"({"a": [1, {"b": 2}], "c": {"a": 3}})") ==
        json::parse(R"({"a": [1, {"b": 2}], "c": {"a": 3}})"));  // the same key in different objects is fine
  CHECK(topo::parse_json_input<nlohmann::ordered_json>(R"({"z": 1, "a": 2})").begin().key() == "z");
  CHECK(topo::parse_json_input(nested(topo::kMaxJsonDepth, "[", "]")).is_array());
  CHECK(topo::parse_json_input(R"([{"k": 1}, {"k": 2}])").size() == 2);  // sibling objects: keys counted apart

  // 100,000 levels: dump() of that recursed past the stack (a probe's topology file and config, 2026-12-05)
  CHECK(parse_error_of(nested(100000, "[", "]")).find("nested deeper than 256 levels") != std::string::npos);
  CHECK(parse_error_of(nested(topo::kMaxJsonDepth + 1, "[", "]")).find("nested deeper") != std::string::npos);
  CHECK(parse_error_of(nested(300, "{\"a\":", "}")).find("nested deeper") != std::string::npos);
  CHECK(parse_error_of(R"({"hidden": 100, "layers": 2, "hidden": 32})")
            .find("the key \"hidden\" appears twice in one object") != std::string::npos);
  CHECK(parse_error_of(R"({"a": {"x": 1, "y": {"x": 2}, "x": 3}})").find("\"x\" appears twice") != std::string::npos);
  // The place is named (nlohmann's callback knows no line or column): keys, and array elements by index.
  CHECK(parse_error_of(R"({"radius": 1, "radius": 2})").find("(at radius)") != std::string::npos);
  CHECK(parse_error_of(R"({"relations": [{"a": 1}, {"b": [1, 2], "c": {}, "c": 2}]})")
            .find("\"c\" appears twice in one object (at relations[1].c)") != std::string::npos);
  CHECK(parse_error_of(R"({"n": [[1], [2], )" + nested(300, "[", "]") + "]}").find("(at n[2]") != std::string::npos);
  CHECK(parse_error_of(nested(300, "[", "]")).find("(at [0][0]") != std::string::npos);
  CHECK(parse_error_of("{\"a\": 1").find("parse error") != std::string::npos);  // nlohmann's own errors pass through
}

TEST_CASE("shown_json: an error message quotes a value's JSON cut to a readable length") {
  CHECK(topo::shown_json(json::parse("[1, 2]")) == "[1,2]");
  const std::string long_text = topo::shown_json(json(std::string(1000, 'x')), 20);
  CHECK(long_text == "\"xxxxxxxxxxxxxxxxxxx... (1002 characters)");
}

TEST_CASE("read_json_file: a path that never ends (/dev/zero) is an error naming it, not an out-of-memory") {
  // Reading it whole ran out of memory: "out of memory (an allocation failed)", no file named (2026-12-06).
  std::string message;
  try {
    (void)topo::read_json_file("/dev/zero", "topology file");
  } catch (const std::exception& e) {
    message = e.what();
  }
  CHECK(message.find("topology file '/dev/zero' holds more than 67108864 bytes") != std::string::npos);
  message.clear();
  try {
    (void)topo::read_json_file("/dev/null", "config file");
  } catch (const std::exception& e) {
    message = e.what();
  }
  CHECK(message.find("config file '/dev/null' is not valid JSON") != std::string::npos);
}
