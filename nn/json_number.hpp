#pragma once
// Numbers read from JSON that a file supplies (checkpoint indexes, task metadata, resume state). nlohmann's
// get<T>() converts with a static_cast, which is undefined for a value T cannot hold (7.7e64 as an int64, 1e300
// as a float; found by fuzz_eval_metadata). These throw nlohmann::json::type_error instead, so the readers'
// "malformed ..." handlers for nlohmann's exceptions name the file.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace topo {

// `v` as T: an integer that T holds (integral T), or a number within T's range (floating T).
template <class T>
T json_number(const nlohmann::json& v) {
  if constexpr (std::is_integral_v<T>) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (std::in_range<T>(u)) return static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const auto i = v.get<std::int64_t>();
      if (std::in_range<T>(i)) return static_cast<T>(i);
    }
  } else {
    static_assert(std::is_floating_point_v<T>);
    if (v.is_number()) {
      const double d = v.get<double>();
      if (std::fabs(d) <= static_cast<double>(std::numeric_limits<T>::max())) return static_cast<T>(d);
    }
  }
  throw nlohmann::json::type_error::create(
      302, std::string("expected ") + (std::is_integral_v<T> ? "an integer" : "a number") + " in range, got " + v.dump(),
      &v);
}

// True for an integer that int64 holds: nlohmann calls 2^64 - 1 an integer too, and get<std::int64_t>() made it -1
// (a config's "seed": 18446744073709551615 was refused as "= -1", a value the file does not have).
inline bool is_int64(const nlohmann::json& v) {
  return v.is_number_unsigned() ? std::in_range<std::int64_t>(v.get<std::uint64_t>()) : v.is_number_integer();
}

// object[key] as json_number<T>, or `fallback` where the key is absent (older files).
template <class T>
T json_number_or(const nlohmann::json& object, const char* key, T fallback) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : json_number<T>(*it);
}

}  // namespace topo
