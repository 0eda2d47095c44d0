#pragma once
// Learning-rate schedules: lr(step) is a pure function of the step (0-based), so a resumed run gets the
// same rates. Linear warm-up over `warmup_steps` (lr = base * (step + 1) / warmup, reaching base at the
// last warm-up step), then:
//   Constant:   base
//   Linear:     min + (base - min) * (1 - progress)
//   Cosine:     min + (base - min) * (1 + cos(pi * progress)) / 2
//   InverseSqrt: base * sqrt(max(warmup, 1) / (step + 1))   (the Transformer's rsqrt decay)
// with progress = (step - warmup) / (total_steps - warmup) clamped to [0, 1]; past total_steps the
// linear / cosine rate stays at min_lr.
#include <cstdint>
#include <string>

namespace topo::nn {

class Optimizer;

struct LrSchedule {
  enum class Kind { Constant, Linear, Cosine, InverseSqrt };
  Kind kind = Kind::Constant;
  float base_lr = 1e-3f;
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 0;  // needed by Linear / Cosine (> warmup_steps)
  float min_lr = 0.f;

  // Throws naming the inconsistent field.
  void validate() const;
  float lr(std::int64_t step) const;
  // Sets the optimizer's lr to lr(step) and returns it.
  float apply(Optimizer& optimizer, std::int64_t step) const;
};

// "constant", "linear", "cosine", "inverse_sqrt".
LrSchedule::Kind parse_schedule_kind(const std::string& name);

}  // namespace topo::nn
