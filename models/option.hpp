#pragma once
// A setting that a registered component declares for itself: a model's attention path (models/registry.hpp),
// a task's data files (apps/tasks/registry.hpp). It is a config key of topo-train and its flag (--name,
// '_' -> '-'); its type is the type of its default (string, bool, integer or number); string options may list
// the values they accept. Two owners may declare one name with different defaults, help and choices, but not
// with different types: the flag is one flag, and the chosen owner's declaration says what it means.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/error.hpp"

namespace topo::models {

struct Option {
  std::string name;
  nlohmann::json default_value;
  std::string help;
  std::vector<std::string> choices;  // string options: the accepted values (empty: any)
};

// "bool" | "int" | "float" | "string": the kind of a value (an option's kind is its default's).
std::string value_kind(const nlohmann::json& value);
// A value as errors show it: strings quoted ('band'), the rest as JSON (12, true).
std::string shown_value(const nlohmann::json& value);

// `value` as the option holds it: its kind checked (an integer is accepted for a number) and, for a string with
// choices, one of them. A topo::Error "config field 'NAME': expected ..." / "invalid config field 'NAME' =
// VALUE: expected one of ..." otherwise.
nlohmann::json checked_option_value(const Option& option, const nlohmann::json& value);

// The error every validation raises: "invalid config field 'NAME' = VALUE: WHY".
[[noreturn]] void fail_invalid_field(const std::string& name, const nlohmann::json& value, const std::string& why);

// One of `options` (an owner's options, every declared one present), typed; `owner` names whose ("model star")
// in the error a missing or mistyped one raises.
template <class T>
T option_value(const nlohmann::json& options, const std::string& name, const std::string& owner) {
  TOPO_CHECK(options.contains(name), "{} option '{}' is not set (options given: {})", owner, name, options.dump());
  try {
    return options.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    fail("{} option '{}' has the wrong type: {}", owner, name, options.at(name).dump());
  }
}

// Every option of `declared` at its default: {"variant": "full", ...}.
nlohmann::json option_defaults(const std::vector<Option>& declared);

}  // namespace topo::models
