#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "nn/json_number.hpp"

namespace {

using nlohmann::json;

std::string type_error_of(const json& v, bool as_float) {
  try {
    if (as_float)
      (void)topo::json_number<float>(v);
    else
      (void)topo::json_number<std::int64_t>(v);
  } catch (const json::type_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json_number: a value the type cannot hold is a type_error, never a cast (fuzz_eval_metadata's find)") {
  CHECK(topo::json_number<std::int64_t>(json::parse("-5")) == -5);
  CHECK(topo::json_number<std::uint64_t>(json::parse("18446744073709551615")) == UINT64_MAX);
  CHECK(topo::json_number<float>(json::parse("3")) == 3.f);
  CHECK(topo::json_number<double>(json::parse("1e300")) == 1e300);
  CHECK(type_error_of(json::parse("7.7e64"), false).find("expected an integer in range, got 7.7e+64") !=
        std::string::npos);
  CHECK(type_error_of(json::parse("16.5"), false) != "");                 // a fraction is not an integer
  CHECK(type_error_of(json::parse("9223372036854775808"), false) != "");  // 2^63: past int64
  CHECK(type_error_of(json::parse("1e300"), true).find("expected a number in range") != std::string::npos);
  CHECK(type_error_of(json::parse("\"12\""), false) != "");
  CHECK_THROWS_AS(topo::json_number<std::uint32_t>(json::parse("-1")), json::type_error);
  const json object = json::parse(R"({"dim": 8, "huge": 1e40})");
  CHECK(topo::json_number_or(object, "dim", std::int64_t{0}) == 8);
  CHECK(topo::json_number_or(object, "absent", std::int64_t{-1}) == -1);
  CHECK_THROWS_AS(topo::json_number_or(object, "huge", std::int64_t{0}), json::type_error);
}
