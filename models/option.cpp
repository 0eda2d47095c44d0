#include "models/option.hpp"

#include <algorithm>

#include "nn/json_input.hpp"
#include "nn/json_number.hpp"

namespace topo::models {

std::string value_kind(const nlohmann::json& value) {
  if (value.is_boolean()) return "bool";
  if (value.is_number_integer()) return "int";
  if (value.is_number()) return "float";
  return "string";
}

std::string shown_value(const nlohmann::json& value) {
  return value.is_string() ? fmt::format("'{}'", shown_text(value.get<std::string>())) : shown_json(value);
}

nlohmann::json checked_option_value(const Option& option, const nlohmann::json& value) {
  const std::string kind = value_kind(option.default_value);
  const bool fits = kind == "bool"    ? value.is_boolean()
                    : kind == "int"   ? is_int64(value)
                    : kind == "float" ? value.is_number()
                                      : value.is_string();
  TOPO_CHECK(fits, "config field '{}': expected {}, got {}", option.name,
             kind == "bool" ? "true or false" : kind == "int" ? "an integer" : kind == "float" ? "a number" : "a string",
             shown_value(value));
  if (!option.choices.empty() &&
      std::find(option.choices.begin(), option.choices.end(), value.get<std::string>()) == option.choices.end())
    fail_invalid_field(option.name, value, fmt::format("expected one of {}", fmt::join(option.choices, ", ")));
  return kind == "float" ? nlohmann::json(value.get<double>()) : value;
}

void fail_invalid_field(const std::string& name, const nlohmann::json& value, const std::string& why) {
  fail("invalid config field '{}' = {}: {}", name, shown_value(value), why);
}

nlohmann::json option_defaults(const std::vector<Option>& declared) {
  nlohmann::json out = nlohmann::json::object();
  for (const Option& o : declared) out[o.name] = o.default_value;
  return out;
}

}  // namespace topo::models
