// Learning-rate schedules, evaluated in double and rounded once to float.
#include "nn/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/error.hpp"
#include "nn/optim.hpp"

namespace topo::nn {

void LrSchedule::validate() const {
  TOPO_CHECK(std::isfinite(base_lr) && base_lr >= 0.f, "LrSchedule: base_lr must be >= 0, got {}", base_lr);
  TOPO_CHECK(min_lr >= 0.f && min_lr <= base_lr, "LrSchedule: min_lr {} must be in [0, base_lr = {}]", min_lr,
             base_lr);
  TOPO_CHECK(warmup_steps >= 0, "LrSchedule: warmup_steps must be >= 0, got {}", warmup_steps);
  if (kind == Kind::Linear || kind == Kind::Cosine)
    TOPO_CHECK(total_steps > warmup_steps, "LrSchedule: total_steps {} must exceed warmup_steps {}",
               total_steps, warmup_steps);
}

float LrSchedule::lr(std::int64_t step) const {
  validate();
  TOPO_CHECK(step >= 0, "LrSchedule: step must be >= 0, got {}", step);
  const double base = base_lr, lo = min_lr;
  if (step < warmup_steps) return static_cast<float>(base * static_cast<double>(step + 1) / warmup_steps);
  const double progress =
      total_steps > warmup_steps
          ? std::clamp(static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps),
                       0.0, 1.0)
          : 1.0;
  switch (kind) {
    case Kind::Constant: return base_lr;
    case Kind::Linear: return static_cast<float>(lo + (base - lo) * (1.0 - progress));
    case Kind::Cosine:
      return static_cast<float>(lo + (base - lo) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress)));
    case Kind::InverseSqrt:
      return static_cast<float>(base * std::sqrt(static_cast<double>(std::max<std::int64_t>(warmup_steps, 1)) /
                                                 static_cast<double>(step + 1)));
  }
  fail("LrSchedule: unknown kind {}", static_cast<int>(kind));
}

float LrSchedule::apply(Optimizer& optimizer, std::int64_t step) const {
  const float value = lr(step);
  optimizer.set_lr(value);
  return value;
}

LrSchedule::Kind parse_schedule_kind(const std::string& name) {
  if (name == "constant") return LrSchedule::Kind::Constant;
  if (name == "linear") return LrSchedule::Kind::Linear;
  if (name == "cosine") return LrSchedule::Kind::Cosine;
  if (name == "inverse_sqrt") return LrSchedule::Kind::InverseSqrt;
  fail("unknown lr schedule '{}' (expected constant, linear, cosine or inverse_sqrt)", name);
}

}  // namespace topo::nn
