#include "apps/train/progress.hpp"

#include <unistd.h>

#include <algorithm>

#include "apps/train/io.hpp"
#include "kernels/error.hpp"

namespace topo::apps {

Progress::Mode Progress::parse_mode(const std::string& name, std::FILE* stream) {
  if (name == "bar") return Mode::Bar;
  if (name == "lines") return Mode::Lines;
  if (name == "none") return Mode::None;
  TOPO_CHECK(name == "auto", "unknown progress mode '{}': expected auto, bar, lines or none", name);
  return ::isatty(::fileno(stream)) ? Mode::Bar : Mode::Lines;
}

Progress::Progress(Mode mode, std::int64_t total_steps, std::int64_t epochs, std::int64_t log_every, std::FILE* stream)
    : mode_(mode), total_steps_(total_steps), epochs_(epochs), log_every_(std::max<std::int64_t>(1, log_every)),
      stream_(stream) {}

void Progress::start(std::int64_t first_step) {
  first_step_ = first_step;
  last_step_ = first_step;
  start_time_ = last_draw_ = Clock::now();
}

std::string Progress::line(std::int64_t step, std::int64_t epoch, double loss) const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_time_).count();
  const std::int64_t done = step - first_step_;
  const double tokens_per_s = elapsed > 0 ? static_cast<double>(tokens_) / elapsed : 0.0;
  const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_steps_ - step) : -1.0;
  return fmt::format("epoch {}/{} step {}/{} loss {:.5f} {:.0f} tok/s ETA {}", epoch + 1, epochs_, step, total_steps_,
                     loss, tokens_per_s, eta >= 0 ? format_duration(eta) : std::string("?"));
}

void Progress::step(std::int64_t step, std::int64_t epoch, double loss, std::int64_t tokens) {
  tokens_ += tokens;
  window_loss_ += loss;
  ++window_steps_;
  last_step_ = step;
  last_epoch_ = epoch;
  if (mode_ == Mode::None) return;
  const auto now = Clock::now();
  if (mode_ == Mode::Bar) {
    // Redraw at most ~10 times a second (and on the last step): terminals are slow.
    if (step != total_steps_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  } else if (step % log_every_ != 0 && step != total_steps_) {
    return;
  }
  shown_loss_ = window_loss_ / static_cast<double>(window_steps_);
  window_loss_ = 0.0;
  window_steps_ = 0;
  last_draw_ = now;
  const std::string text = line(step, epoch, shown_loss_);
  if (mode_ == Mode::Bar) {
    constexpr int kWidth = 24;
    const auto filled = static_cast<int>(kWidth * step / std::max<std::int64_t>(1, total_steps_));
    std::fprintf(stream_, "\r[%s%s] %s\x1b[K", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), text.c_str());
    bar_visible_ = true;
  } else {
    std::fprintf(stream_, "%s\n", text.c_str());
  }
  std::fflush(stream_);
}

void Progress::message(const std::string& text) {
  if (mode_ == Mode::None) return;
  if (bar_visible_) std::fprintf(stream_, "\r\x1b[K");
  std::fprintf(stream_, "%s\n", text.c_str());
  bar_visible_ = false;
  std::fflush(stream_);
}

void Progress::finish() {
  if (mode_ == Mode::Bar && bar_visible_) std::fprintf(stream_, "\n");
  bar_visible_ = false;
  std::fflush(stream_);
}

}  // namespace topo::apps
