// Suite `long` (issue #36, items 1 and 3): training on long sequences. Star, Multi-Scale with constant scales
// (1, 3, 5, 7, 9: no window grows with n) and a window + global-token pattern (configs/topologies/longformer.json:
// window radius 2, a [CLS] that attends to and is attended by every token; the topology transformer's graph
// path) train at n = 1,024, 4,096, 16,384 and 65,536 tokens per sequence (--sizes replaces the list), with the
// dense Transformer (fused dense attention, post-LN + 4d feed-forward) as the quadratic reference until its step
// passes 10x Star's; from there on it is not timed (a line says so, and its last row carries `stopped_here`).
// A step is what training does: forward, a linear loss on the sentence features, backward, Adam's update.
// Each n runs twice: one sequence of n tokens ("x1"), and the same tokens per batch as the largest n (T / n
// sequences of n: "x64" at n = 1,024 of 65,536), which is the one-sequence row at n = T and not run again.
// Width: the recipes' hidden 100, 10 heads of 10, 2 layers (the masked-sum recipe's); token ids from a
// vocabulary of 1,000; each model is built for its n (the position table is n rows: it grows with n too).
//
// Per row: time per token and MFU (FLOPs from each model's flop_count.hpp; the window + global pattern's here,
// from its graph's edges) against the run's sgemm peak, and from one more step measured apart: the process's
// high-water RSS (kernels/memory.hpp, reset before the step) and the allocator's peak (host_memory::stats), both
// absolute and above what was live before the step (parameters, Adam's moments), the topology's bytes, and the
// activation bytes kept for backward against bench/long_activations.hpp's analytical count; `ratio_to_first`
// divides the per-token figures by the first n's (same pattern and batch form). The one-sequence rows of each
// pattern get the least-squares slope of log(step time) and log(memory) over log(n) (`loglog_slope`; 1 =
// linear), and with --json FILE three log-log plots go next to it (FILE-time.svg, FILE-memory.svg, FILE-rss.svg)
// with the slopes in the legend and a line where Star's step memory passes the last-level cache. Single medians
// move with a shared machine's load, so the sparse patterns' time-per-token ratio (largest n over first) is
// measured once more with the steps interleaved round by round (`interleaved`). --profile: one more step per
// row with the op-category profiler on (stderr, and the row's `profile`).
#include <malloc.h>

#include <any>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>

#include "bench/harness.hpp"
#include "bench/long_activations.hpp"
#include "bench/loglog.hpp"
#include "bench/machine.hpp"
#include "bench/svg_plot.hpp"
#include "bench/token_batch.hpp"
#include "kernels/dense/random.hpp"
#include "kernels/memory.hpp"
#include "kernels/profile.hpp"
#include "kernels/storage.hpp"
#include "models/multiscale_transformer/flop_count.hpp"
#include "models/star_transformer/flop_count.hpp"
#include "models/topology_transformer/topology_file.hpp"
#include "models/topology_transformer/topology_transformer.hpp"
#include "models/transformer/flop_count.hpp"
#include "nn/ops.hpp"
#include "nn/optim.hpp"

namespace {

using namespace topo;
using bench::crossing, bench::loglog_slope;
constexpr std::int64_t kVocab = 1000, kHidden = 100, kHeads = 10, kLayers = 2;
constexpr double kDenseStopRatio = 10;  // the dense step's time over Star's past which it is no longer timed

enum class Kind { Star, MultiScale, WindowGlobal, Dense };
struct Pattern {
  Kind kind;
  const char* name;   // in result names
  const char* label;  // in plots
};
constexpr Pattern kPatterns[] = {{Kind::Star, "star", "Star"},
                                 {Kind::MultiScale, "multiscale 1-9", "Multi-Scale 1-9"},
                                 {Kind::WindowGlobal, "window+global", "window+global"},
                                 {Kind::Dense, "dense", "dense"}};

// One pattern's model for sentences up to max_length, its optimizer, and how a step reaches it.
struct Trainee {
  std::shared_ptr<models::SequenceEncoder> model;
  std::unique_ptr<nn::Adam> optimizer;
  // The batch's topology (host structures the forward reads); empty for the paths that build none.
  std::function<std::any(const models::SequenceBatch&)> topology = [](const models::SequenceBatch&) { return std::any(); };
  std::function<models::Encoding(const models::SequenceBatch&, const std::any&)> encode;
  std::function<double(const models::SequenceBatch&, const std::any&)> step_flops;
  double (*kept_bytes)(const bench::ActivationShape&) = nullptr;
};

// The window + global pattern's FLOPs (models/flop_count.hpp's rules): per layer q, k, v, o over its R rows
// ([CLS] + tokens), 8 R d^2, and q.k + p v per edge of its one block, 4 d E; backward 2 x forward.
double window_global_flops(const models::TopologyGraph& graph, std::int64_t rows) {
  const double d = double(kHidden), e = double(graph.blocks.at(0).at(0).num_edges());
  return models::FlopCount::from_forward(double(kLayers) * (8 * double(rows) * d * d + 4 * d * e)).train_step();
}

Trainee make_trainee(Kind kind, std::int64_t max_length, const models::TopologySpec& window_global) {
  const models::EncoderConfig encoder{.vocab_size = kVocab, .hidden = kHidden, .heads = kHeads, .layers = kLayers,
                                      .max_length = max_length};
  Trainee t;
  switch (kind) {
    case Kind::Star: {
      models::StarConfig c;
      c.encoder = encoder;
      auto m = std::make_shared<models::StarTransformer>(c);
      t.model = m;
      t.topology = [m, c](const models::SequenceBatch& b) {
        return std::any(models::star_topology(b.lengths, c.variant, m->parameters().front().device()));
      };
      t.encode = [m](const models::SequenceBatch& b, const std::any& g) {
        return m->encode(b, std::any_cast<const models::StarTopology&>(g));
      };
      t.step_flops = [c](const models::SequenceBatch& b, const std::any&) { return models::star_flops(c, b.lengths).train_step(); };
      t.kept_bytes = bench::star_kept_bytes;
      break;
    }
    case Kind::MultiScale: {  // its band path (the default): no graph
      models::MultiScaleConfig c;
      c.encoder = encoder;
      c.scales = models::parse_scales("1,3,5,7,9");
      auto m = std::make_shared<models::MultiScaleTransformer>(c);
      t.model = m;
      t.encode = [m](const models::SequenceBatch& b, const std::any&) { return m->encode(b); };
      t.step_flops = [c](const models::SequenceBatch& b, const std::any&) {
        return models::multiscale_flops(c, b.lengths).train_step();
      };
      t.kept_bytes = bench::multiscale_band_kept_bytes;
      break;
    }
    case Kind::WindowGlobal: {  // the global relation keeps it off the band path: the sparse kernels on its graph
      models::TopologyTransformerConfig c;
      c.encoder = encoder;
      c.topology = window_global;
      auto m = std::make_shared<models::TopologyTransformer>(c);
      t.model = m;
      t.topology = [m, spec = window_global](const models::SequenceBatch& b) {
        return std::any(std::make_shared<const models::TopologyGraph>(
            models::build_topology(spec, b.lengths, m->parameters().front().device())));
      };
      const auto graph = [](const std::any& g) -> const models::TopologyGraph& {
        return *std::any_cast<const std::shared_ptr<const models::TopologyGraph>&>(g);
      };
      t.encode = [m, graph](const models::SequenceBatch& b, const std::any& g) { return m->encode(b, graph(g)); };
      t.step_flops = [graph, lead = window_global.lead_count()](const models::SequenceBatch& b, const std::any& g) {
        return window_global_flops(graph(g), b.num_tokens() + lead * b.size());
      };
      t.kept_bytes = bench::window_global_kept_bytes;
      break;
    }
    case Kind::Dense: {
      models::TransformerConfig c;
      c.encoder = encoder;
      auto m = std::make_shared<models::Transformer>(c);
      t.model = m;
      t.encode = [m](const models::SequenceBatch& b, const std::any&) { return m->encode_dense(b); };
      t.step_flops = [c](const models::SequenceBatch& b, const std::any&) {
        return models::transformer_flops(c, b.lengths).train_step();
      };
      t.kept_bytes = bench::dense_kept_bytes;
      break;
    }
  }
  t.model->reset_parameters(static_cast<std::uint64_t>(kind) + 1);
  t.optimizer = std::make_unique<nn::Adam>(t.model->parameters(), nn::AdamOptions{.lr = 1e-4f});
  return t;
}

// One training step; returns its topology (for the FLOP count) when asked.
void train_step(Trainee& t, const models::SequenceBatch& batch, const Tensor& r, std::any* topology_out = nullptr) {
  t.optimizer->zero_grad();
  const std::any topology = t.topology(batch);
  nn::sum_all(t.encode(batch, topology).sentences * nn::Var(r)).backward();
  t.optimizer->step();
  if (topology_out) *topology_out = topology;
}

struct StepMemory {
  double rss_before = 0, rss_peak = 0;         // resident bytes before the step and its high-water mark
  double live_before = 0, allocator_peak = 0;  // the allocator's live bytes before the step and its peak
  double topology = 0;  // bytes the topology took (built first)
  double kept = 0;      // bytes the forward left live for backward (after the topology)
  bool rss_reset = false;
};

// A step with the memory probes around it. The allocator's cache is emptied and the C heap trimmed first, so
// the RSS mark starts from what is in use, not from what an earlier, larger step left parked.
StepMemory measured_step(Trainee& t, const models::SequenceBatch& batch, const Tensor& r) {
  StepMemory m;
  t.optimizer->zero_grad();
  host_memory::empty_cache();
  malloc_trim(0);
  m.rss_reset = reset_peak_rss();
  host_memory::reset_peak();
  const auto live = [] { return double(host_memory::stats().bytes_in_use); };
  m.rss_before = double(rss_bytes());
  m.live_before = live();
  {
    const std::any topology = t.topology(batch);
    m.topology = live() - m.live_before;
    nn::Var loss = nn::sum_all(t.encode(batch, topology).sentences * nn::Var(r));
    m.kept = live() - m.live_before - m.topology;
    loss.backward();
  }
  t.optimizer->step();
  m.allocator_peak = double(host_memory::stats().peak_bytes_in_use);
  m.rss_peak = double(peak_rss_bytes());
  return m;
}

// The per-token figures a row is compared on with the first n's row of its pattern and batch form.
struct PerToken {
  double us = 0, rss_peak = 0, rss_step = 0, allocator_peak = 0, allocator_step = 0, kept = 0;
};

// The time-per-token goal (the largest n within 1.3x of the first) measured so that a shared machine's load
// drifting over minutes slows both sides alike: rounds of one step of the largest n as one sequence, the first
// n's batch of the same tokens (B sequences), and B steps of one first-n sequence, the order reversed every
// other round, after an untimed round. Returns the medians of the per-round ratios of time per token.
struct Interleaved {
  int rounds = 0;
  double us_first = 0, us_first_batch = 0, us_last = 0;  // median time per token over the rounds
  double last_over_first = 0, last_over_first_batch = 0;  // medians of the rounds' ratios
};
Interleaved interleave(Kind kind, std::int64_t first, std::int64_t last, int rounds,
                       const models::TopologySpec& window_global) {
  const std::int64_t b = std::max<std::int64_t>(1, last / first);
  Trainee small = make_trainee(kind, first, window_global), large = make_trainee(kind, last, window_global);
  const models::SequenceBatch one = bench::random_token_batch(1, first, kVocab, 11),
                              batch = bench::random_token_batch(b, first, kVocab, 12),
                              whole = bench::random_token_batch(1, last, kVocab, 13);
  const Tensor r1 = random_uniform({1, kHidden}, -1, 1, 3), rb = random_uniform({b, kHidden}, -1, 1, 3);
  // us per token of each of the three: 0 B single steps of `first`, 1 its batch, 2 one step of `last`.
  const auto run = [&](int which) {
    const auto t0 = std::chrono::steady_clock::now();
    if (which == 0)
      for (std::int64_t i = 0; i < b; ++i) train_step(small, one, r1);
    else if (which == 1)
      train_step(small, batch, rb);
    else
      train_step(large, whole, r1);
    return 1e3 * std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
           double(b * first);
  };
  for (int which = 0; which < 3; ++which) (void)run(which);
  std::vector<double> us[3], over_first, over_batch;
  for (int round = 0; round < rounds; ++round) {
    double t[3];
    for (int k = 0; k < 3; ++k) {
      const int which = round % 2 == 0 ? k : 2 - k;
      t[which] = run(which);
    }
    for (int k = 0; k < 3; ++k) us[k].push_back(t[k]);
    over_first.push_back(t[2] / t[0]);
    over_batch.push_back(t[2] / t[1]);
  }
  // summarize's median (its _ms name aside, any positive samples).
  const auto median = [](const std::vector<double>& v) { return bench::summarize(v).median_ms; };
  return {rounds, median(us[0]), median(us[1]), median(us[2]), median(over_first), median(over_batch)};
}

}  // namespace

TOPO_BENCH_SUITE(long, "training steps on sequences of 1k..64k tokens: time, MFU, peak memory and kept activations") {
  std::vector<std::int64_t> sizes = !bench.sizes().empty() ? bench.sizes()
                                    : bench.quick() ? std::vector<std::int64_t>{1024, 4096}
                                                    : std::vector<std::int64_t>{1024, 4096, 16384, 65536};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    TOPO_CHECK(sizes[i] >= 2, "topo-bench long: --sizes must be sequence lengths >= 2, got {}", sizes[i]);
    TOPO_CHECK(i == 0 || sizes[i] > sizes[i - 1], "topo-bench long: --sizes must be increasing, got {}",
               fmt::join(sizes, ","));
  }
  const std::int64_t tokens_per_batch = sizes.back();
  const models::TopologySpec window_global =
      models::read_topology_file(std::string(TOPO_SOURCE_DIR) + "/configs/topologies/longformer.json");
  fmt::print("long: d = {}, {} heads x {}, {} layers (dense: feed-forward {}), vocabulary {}; Adam; batches of one "
             "sequence and of {} tokens\n",
             kHidden, kHeads, kHidden / kHeads, kLayers, 4 * kHidden, kVocab, tokens_per_batch);

  struct Form {
    const char* name;  // "one sequence" | "equal tokens"
    bool dense_on = true;
    double last_ratio = 0;  // the dense step's time over Star's at the last n it ran
    std::int64_t last_n = 0;
  };
  Form forms[2] = {{"one sequence"}, {"equal tokens"}};
  std::map<std::string, PerToken> first;  // "<pattern>/<form>" -> the first n's per-token figures
  std::map<std::string, std::vector<std::pair<double, double>>> time_pts, memory_pts, rss_pts, kept_pts;
  std::map<std::string, std::string> last_row;  // pattern -> its largest one-sequence row's name

  for (std::int64_t n : sizes) {
    for (int f = 0; f < 2; ++f) {
      const std::int64_t b = f == 0 ? 1 : std::max<std::int64_t>(1, tokens_per_batch / n);
      if (f == 1 && b == 1) continue;  // the one-sequence row already is this batch
      const models::SequenceBatch batch = bench::random_token_batch(b, n, kVocab, static_cast<std::uint32_t>(n + b));
      const Tensor r = random_uniform({b, kHidden}, -1, 1, 3);
      const std::int64_t tokens = b * n;
      double star_ms = 0;
      for (const Pattern& p : kPatterns) {
        if (p.kind == Kind::Dense && !forms[f].dense_on) continue;
        // A gap in --sizes (1,024 then 65,536) must not time a quadratic step minutes long: the dense/Star ratio
        // grows about linearly in n, so skip when the last one, scaled to this n, passes 4x the stopping ratio.
        if (p.kind == Kind::Dense && forms[f].last_ratio > 0 &&
            forms[f].last_ratio * double(n) / double(forms[f].last_n) > 4 * kDenseStopRatio) {
          forms[f].dense_on = false;
          fmt::print("long: dense not timed from n = {} ({}): at n = {} its step was {:.1f}x Star's, about {:.0f}x here\n",
                     n, forms[f].name, forms[f].last_n, forms[f].last_ratio,
                     forms[f].last_ratio * double(n) / double(forms[f].last_n));
          continue;
        }
        Trainee t = make_trainee(p.kind, n, window_global);
        const std::string name = fmt::format("{} n={} x{}", p.name, n, b);
        std::fprintf(stderr, "  running long/%s\n", name.c_str());
        const StepMemory mem = measured_step(t, batch, r);  // also the warm-up
        std::any topology;
        std::vector<double> ms;
        double total = 0;
        const double budget_ms = bench.quick() ? 200 : 2000;
        const std::size_t min_reps = bench.quick() ? 2 : 3;
        while (ms.size() < min_reps || (total < budget_ms && ms.size() < 20)) {
          const auto t0 = std::chrono::steady_clock::now();
          train_step(t, batch, r, &topology);
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
          total += ms.back();
        }
        if (bench.profile()) {  // one more step with the op-category profiler on (where the time per token goes)
          profile::reset();
          profile::enable(true);
          train_step(t, batch, r);
          profile::enable(false);
          std::fprintf(stderr, "long/%s training step by op category:\n%s", name.c_str(), profile::report().c_str());
        }
        const double flops = t.step_flops(batch, topology);
        const bench::ActivationShape shape{tokens, b, kHidden, kHeads, kLayers};
        const double analytical = t.kept_bytes(shape);
        nlohmann::json extra = {{"pattern", p.name},  {"form", forms[f].name}, {"n", n},
                                {"sentences", b},     {"tokens", tokens},      {"hidden", kHidden},
                                {"heads", kHeads},    {"layers", kLayers}};
        const bench::Result res = bench.record(name, bench::summarize(ms), {.flops = flops}, extra);
        const double tok = double(tokens);
        const PerToken pt{1e3 * res.stats.median_ms / tok,    mem.rss_peak / tok,
                          (mem.rss_peak - mem.rss_before) / tok, mem.allocator_peak / tok,
                          (mem.allocator_peak - mem.live_before) / tok, mem.kept / tok};
        bench.annotate("mfu", res.fraction_of_peak);
        if (bench.profile()) bench.annotate("profile", bench::profile_json());
        bench.annotate("us_per_token", pt.us);
        bench.annotate("peak_rss_bytes", mem.rss_peak);
        bench.annotate("rss_before_step_bytes", mem.rss_before);
        bench.annotate("rss_peak_was_reset", mem.rss_reset);
        bench.annotate("allocator_peak_bytes", mem.allocator_peak);
        bench.annotate("allocator_live_before_step_bytes", mem.live_before);
        bench.annotate("allocator_step_peak_bytes", mem.allocator_peak - mem.live_before);
        bench.annotate("topology_bytes", mem.topology);
        bench.annotate("kept_activation_bytes", mem.kept);
        bench.annotate("analytical_kept_bytes", analytical);
        bench.annotate("kept_over_analytical", mem.kept / analytical);
        bench.annotate("per_token", {{"us", pt.us},
                                     {"peak_rss_bytes", pt.rss_peak},
                                     {"rss_step_bytes", pt.rss_step},
                                     {"allocator_peak_bytes", pt.allocator_peak},
                                     {"allocator_step_peak_bytes", pt.allocator_step},
                                     {"kept_activation_bytes", pt.kept},
                                     {"topology_bytes", mem.topology / tok}});
        const std::string key = fmt::format("{}/{}", p.name, forms[f].name);
        // The equal-tokens form's largest n is the one-sequence row: its ratios start from the same first row.
        const PerToken& base = first.emplace(key, pt).first->second;
        bench.annotate("ratio_to_first", {{"first_n", sizes.front()},
                                          {"us_per_token", pt.us / base.us},
                                          {"peak_rss_per_token", pt.rss_peak / base.rss_peak},
                                          {"rss_step_per_token", pt.rss_step / base.rss_step},
                                          {"allocator_peak_per_token", pt.allocator_peak / base.allocator_peak},
                                          {"allocator_step_peak_per_token", pt.allocator_step / base.allocator_step},
                                          {"kept_per_token", pt.kept / base.kept}});
        if (f == 0) {
          time_pts[p.name].push_back({double(n), res.stats.median_ms});
          memory_pts[p.name].push_back({double(n), mem.allocator_peak - mem.live_before});
          rss_pts[p.name].push_back({double(n), std::max(1.0, mem.rss_peak - mem.rss_before)});
          kept_pts[p.name].push_back({double(n), mem.kept});
          last_row[p.name] = name;
        }
        if (p.kind == Kind::Star) star_ms = res.stats.median_ms;
        if (p.kind == Kind::Dense) forms[f].last_ratio = res.stats.median_ms / star_ms, forms[f].last_n = n;
        if (p.kind == Kind::Dense && res.stats.median_ms > kDenseStopRatio * star_ms) {
          forms[f].dense_on = false;
          const std::string why = fmt::format("dense step {:.0f} ms > {:.0f}x Star's {:.0f} ms: not timed past n = {} ({})",
                                              res.stats.median_ms, kDenseStopRatio, star_ms, n, forms[f].name);
          bench.annotate("stopped_here", why);
          fmt::print("long: {}\n", why);
        }
      }
    }
  }

  // The goal's ratio again, interleaved (see interleave), on each sparse pattern's largest row.
  if (sizes.size() >= 2)
    for (const Pattern& p : kPatterns) {
      if (p.kind == Kind::Dense || !last_row.count(p.name)) continue;
      std::fprintf(stderr, "  running long/%s n=%lld against n=%lld, interleaved\n", p.name,
                   static_cast<long long>(sizes.back()), static_cast<long long>(sizes.front()));
      const Interleaved i = interleave(p.kind, sizes.front(), sizes.back(), bench.quick() ? 2 : 5, window_global);
      // The log-log slope of step time the ratio implies: step time ~ n^(1 + log ratio / log(last / first)).
      const double slope = 1 + std::log(i.last_over_first) / std::log(double(sizes.back()) / double(sizes.front()));
      bench.annotate_result(last_row[p.name], "interleaved",
                            {{"rounds", i.rounds},
                             {"first_n", sizes.front()},
                             {"us_per_token_first", i.us_first},
                             {"us_per_token_first_batch", i.us_first_batch},
                             {"us_per_token_last", i.us_last},
                             {"last_over_first", i.last_over_first},
                             {"last_over_first_batch", i.last_over_first_batch},
                             {"step_time_slope", slope}});
      fmt::print("long: {:<16} time per token at n = {} over n = {}, interleaved ({} rounds): {:.2f} (one sequence of {}; "
                 "step time slope {:.2f}), {:.2f} (batch of {} tokens)\n",
                 p.name, sizes.back(), sizes.front(), i.rounds, i.last_over_first, sizes.front(), slope,
                 i.last_over_first_batch, tokens_per_batch);
    }

  // Slopes over the one-sequence rows, on each pattern's largest row; the plots carry them in their legends.
  const double llc = double(bench.machine().llc_bytes());
  std::vector<bench::Series> time_series, memory_series, rss_series;
  std::vector<bench::XMark> marks;
  for (const Pattern& p : kPatterns) {
    if (!last_row.count(p.name)) continue;
    const double st = loglog_slope(time_pts[p.name]), sm = loglog_slope(memory_pts[p.name]),
                 sr = loglog_slope(rss_pts[p.name]), sk = loglog_slope(kept_pts[p.name]);
    const double leaves = crossing(memory_pts[p.name], llc);
    bench.annotate_result(last_row[p.name], "loglog_slope",
                          {{"step_time", st}, {"allocator_step_peak", sm}, {"rss_step_peak", sr}, {"kept_activations", sk},
                           {"from_n", sizes.front()}, {"points", time_pts[p.name].size()}});
    bench.annotate_result(last_row[p.name], "step_peak_passes_llc_at_n", leaves > 0 ? nlohmann::json(leaves) : nullptr);
    fmt::print("long: {:<16} log-log slope over n: step time {:.2f}, allocator step peak {:.2f}, RSS step peak {:.2f}, "
               "kept activations {:.2f}\n",
               p.name, st, sm, sr, sk);
    time_series.push_back({fmt::format("{}, slope {:.2f}", p.label, st), time_pts[p.name]});
    memory_series.push_back({fmt::format("{}, slope {:.2f}", p.label, sm), memory_pts[p.name]});
    rss_series.push_back({fmt::format("{}, slope {:.2f}", p.label, sr), rss_pts[p.name]});
    if (p.kind == Kind::Star && leaves > 0)
      marks.push_back({leaves, fmt::format("Star's step > L3 ({:.0f} MiB)", llc / (1 << 20))});
  }
  const std::string width = fmt::format("(d={}, {} layers, one sequence)", kHidden, kLayers);
  if (const std::string path = bench.artifact_path("time.svg"); !path.empty())
    bench::write_log_log_svg(path, "Training step time " + width, "tokens per sequence n", "step time (ms)",
                             time_series, marks);
  if (const std::string path = bench.artifact_path("memory.svg"); !path.empty())
    bench::write_log_log_svg(path, "Allocator step peak " + width, "tokens per sequence n",
                             "allocator peak - live before (bytes)", memory_series, marks);
  if (const std::string path = bench.artifact_path("rss.svg"); !path.empty())
    bench::write_log_log_svg(path, "RSS growth in a step " + width, "tokens per sequence n",
                             "RSS peak - RSS before (bytes)", rss_series, marks);
}
