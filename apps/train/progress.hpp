#pragma once
// Training progress on stderr. On a terminal (isatty) one line redrawn in place with '\r': a bar, epoch,
// step, loss (running mean since the last redraw's window), tokens/s and the ETA. Elsewhere (logs, CI) a
// plain line every `log_every` steps, so a log file is not a single megabyte line of carriage returns.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace topo::apps {

class Progress {
 public:
  enum class Mode { Bar, Lines, None };
  // "auto" picks Bar when `stream` is a terminal, else Lines.
  static Mode parse_mode(const std::string& name, std::FILE* stream);

  Progress(Mode mode, std::int64_t total_steps, std::int64_t epochs, std::int64_t log_every,
           std::FILE* stream = stderr);
  // Starts timing; `first_step` > 0 when resuming (the ETA counts only steps run by this process).
  void start(std::int64_t first_step);
  // After every optimizer step: global step (1-based after the update), epoch (0-based), loss, tokens.
  void step(std::int64_t step, std::int64_t epoch, double loss, std::int64_t tokens);
  // A message on its own line (the bar is redrawn after it).
  void message(const std::string& text);
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  Mode mode_;
  std::int64_t total_steps_, epochs_, log_every_;
  std::FILE* stream_;
  Clock::time_point start_time_, last_draw_;
  std::int64_t first_step_ = 0, tokens_ = 0, window_steps_ = 0, last_step_ = 0, last_epoch_ = 0;
  double window_loss_ = 0.0, shown_loss_ = 0.0;
  bool bar_visible_ = false;
  std::string line(std::int64_t step, std::int64_t epoch, double loss) const;
};

}  // namespace topo::apps
