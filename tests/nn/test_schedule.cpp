// Schedules at chosen steps against values worked out by hand from the definitions.
#include <doctest/doctest.h>

#include "nn/optim.hpp"
#include "nn/schedule.hpp"
#include "tests/nn/nn_testing.hpp"

namespace nn = topo::nn;
using K = nn::LrSchedule::Kind;

TEST_CASE("schedule: warm-up then constant / linear / cosine / inverse sqrt") {
  nn::LrSchedule s{K::Constant, 1.f, 4, 0, 0.f};
  CHECK(s.lr(0) == doctest::Approx(0.25));
  CHECK(s.lr(3) == doctest::Approx(1.0));
  CHECK(s.lr(1000) == doctest::Approx(1.0));

  nn::LrSchedule lin{K::Linear, 1.f, 10, 110, 0.1f};
  CHECK(lin.lr(4) == doctest::Approx(0.5));
  CHECK(lin.lr(10) == doctest::Approx(1.0));
  CHECK(lin.lr(60) == doctest::Approx(0.55));  // half way from 1 to 0.1
  CHECK(lin.lr(110) == doctest::Approx(0.1));
  CHECK(lin.lr(500) == doctest::Approx(0.1));

  nn::LrSchedule cos{K::Cosine, 2.f, 0, 100, 0.f};
  CHECK(cos.lr(0) == doctest::Approx(2.0));
  CHECK(cos.lr(50) == doctest::Approx(1.0));
  CHECK(cos.lr(25) == doctest::Approx(1.0 + std::sqrt(0.5)));  // (1 + cos(pi/4))
  CHECK(cos.lr(100) == doctest::Approx(0.0));

  nn::LrSchedule rs{K::InverseSqrt, 1.f, 100, 0, 0.f};
  CHECK(rs.lr(99) == doctest::Approx(1.0));
  CHECK(rs.lr(399) == doctest::Approx(0.5));  // sqrt(100/400)
  CHECK(rs.lr(9999) == doctest::Approx(0.1));
}

TEST_CASE("schedule: invalid configs and steps are errors; apply sets the optimizer's lr") {
  CHECK_THROWS_AS((nn::LrSchedule{K::Cosine, 1.f, 10, 10, 0.f}.lr(0)), topo::Error);
  CHECK_THROWS_AS((nn::LrSchedule{K::Constant, 1.f, 0, 0, 2.f}.lr(0)), topo::Error);
  CHECK_THROWS_AS((nn::LrSchedule{K::Constant, 1.f, 0, 0, 0.f}.lr(-1)), topo::Error);
  CHECK(nn::parse_schedule_kind("inverse_sqrt") == K::InverseSqrt);
  CHECK_THROWS_AS(nn::parse_schedule_kind("step"), topo::Error);
  nn::Var p(topo::Tensor::zeros({3}), true);
  nn::SGD opt({p}, {0.5f, 0.f});
  nn::LrSchedule lin{K::Linear, 1.f, 0, 10, 0.f};
  CHECK(lin.apply(opt, 5) == doctest::Approx(0.5));
  CHECK(opt.lr() == doctest::Approx(0.5));
}
