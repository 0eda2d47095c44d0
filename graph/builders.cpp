// Batched builders: one pass, no per-graph objects, no per-edge allocation.
// Strategy: closed-form edge count per graph -> exclusive prefix sum (edge offsets) -> allocate the two id
// arrays once -> parallel_for over graphs, each writing its own contiguous block at its precomputed edge and
// node offsets. Output is identical for any thread count.
#include "graph/builders.hpp"

#include <algorithm>
#include <numeric>

#include "kernels/parallel.hpp"

namespace topo::builders {
namespace {

// Sizes a caller hands over (lengths from Python may be anything up to 2^63 - 1) summed and multiplied with a
// topo::Error naming the builder where int64 cannot hold the result, instead of a wrapped count.
std::int64_t add_sizes(std::int64_t a, std::int64_t b, const char* builder) {
  std::int64_t out = 0;
  TOPO_CHECK(!__builtin_add_overflow(a, b, &out), "{}: {} + {} overflows int64", builder, a, b);
  return out;
}
std::int64_t mul_sizes(std::int64_t a, std::int64_t b, const char* builder) {
  std::int64_t out = 0;
  TOPO_CHECK(!__builtin_mul_overflow(a, b, &out), "{}: {} x {} overflows int64", builder, a, b);
  return out;
}

std::vector<std::int64_t> exclusive_prefix(const std::vector<std::int64_t>& v, const char* builder) {
  std::vector<std::int64_t> out(v.size() + 1, 0);
  for (std::size_t i = 0; i < v.size(); ++i) out[i + 1] = add_sizes(out[i], v[i], builder);
  return out;
}

void check_lengths(const std::vector<std::int64_t>& lengths, const char* builder) {
  for (std::size_t b = 0; b < lengths.size(); ++b)
    TOPO_CHECK(lengths[b] >= 0, "{}: graph {} has negative length {}", builder, b, lengths[b]);
}

// Each graph's first node id in the disjoint union (lengths checked, [B + 1]); int32 ids must number them all.
std::vector<std::int64_t> node_offsets(const std::vector<std::int64_t>& lengths, DType dtype, const char* builder) {
  check_lengths(lengths, builder);
  auto out = exclusive_prefix(lengths, builder);
  if (dtype == DType::I32) TOPO_CHECK(out.back() < INT32_MAX, "{}: {} nodes need int64 ids", builder, out.back());
  return out;
}

// count(b) -> edges of graph b; fill(b, src, dst) writes exactly count(b) edges (src/dst already offset to the
// graph's block) using global node ids.
template <class Count, class Fill>
EdgeList build(std::int64_t batch, DType dtype, const char* builder, Count count, Fill fill) {
  TOPO_CHECK(dtype == DType::I32 || dtype == DType::I64, "{}: ids must be int32 or int64, not {}", builder,
             dtype_name(dtype));
  EdgeList out;
  out.batch_num_edges.resize(static_cast<std::size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) out.batch_num_edges[b] = count(b);
  const auto offsets = exclusive_prefix(out.batch_num_edges, builder);
  const std::int64_t total = offsets.back();
  if (dtype == DType::I32)
    TOPO_CHECK(total < INT32_MAX, "{}: {} edges need int64 ids", builder, total);
  out.src = Tensor::empty({total}, dtype);
  out.dst = Tensor::empty({total}, dtype);
  auto run = [&](auto* src, auto* dst) {
    parallel_for(batch, batch > 0 ? total / batch + 1 : 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t b = begin; b < end; ++b) fill(b, src + offsets[b], dst + offsets[b]);
    });
  };
  if (dtype == DType::I32) run(out.src.data<std::int32_t>(), out.dst.data<std::int32_t>());
  else run(out.src.data<std::int64_t>(), out.dst.data<std::int64_t>());
  return out;
}

std::int64_t ring_count(std::int64_t n, bool closed) {
  if (!closed) return n > 1 ? mul_sizes(2, n - 1, "ring") : 0;
  return n >= 3 ? mul_sizes(2, n, "ring") : n == 2 ? 2 : 0;
}

// Edges of a width-w window over n nodes: n(2r+1) minus the r(r+1)/2 cut at each end (r = (w-1)/2 < n; the
// cut r(r+1) <= n(2r+1) cannot overflow where the product did not).
std::int64_t window_count(std::int64_t n, std::int64_t width) {
  const std::int64_t r = std::min((width - 1) / 2, n > 0 ? n - 1 : 0);
  return mul_sizes(n, 2 * r + 1, "window") - r * (r + 1);
}

void check_width(std::int64_t width, std::int64_t graph) {
  TOPO_CHECK(width >= 1 && width % 2 == 1, "window: width {} of graph {} must be odd and >= 1", width, graph);
}

}  // namespace

NodeTypeSpec node_type(const std::string& name, const std::vector<std::int64_t>& counts) {
  return NodeTypeSpec{name, std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), counts};
}

std::vector<std::int64_t> ones(std::int64_t batch) { return std::vector<std::int64_t>(static_cast<std::size_t>(batch), 1); }

EdgeList ring_batch(const std::vector<std::int64_t>& lengths, bool closed, DType dtype) {
  const auto node_off = node_offsets(lengths, dtype, "ring");
  return build(
      static_cast<std::int64_t>(lengths.size()), dtype, "ring", [&](std::int64_t b) { return ring_count(lengths[b], closed); },
      [&](std::int64_t b, auto* src, auto* dst) {
        using T = std::remove_pointer_t<decltype(src)>;
        const std::int64_t n = lengths[b], o = node_off[b];
        std::int64_t k = 0;
        auto edge = [&](std::int64_t j, std::int64_t i) {
          src[k] = static_cast<T>(o + j);
          dst[k] = static_cast<T>(o + i);
          ++k;
        };
        for (std::int64_t i = 0; i < n; ++i) {
          if (closed && n >= 3) {
            edge((i + n - 1) % n, i);
            edge((i + 1) % n, i);
          } else if (closed && n == 2) {
            edge(1 - i, i);
          } else if (!closed) {
            if (i > 0) edge(i - 1, i);
            if (i + 1 < n) edge(i + 1, i);
          }
        }
      });
}
EdgeList ring(std::int64_t n, bool closed, DType dtype) { return ring_batch({n}, closed, dtype); }

EdgeList window_batch(const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& widths, DType dtype) {
  const auto node_off = node_offsets(lengths, dtype, "window");
  TOPO_CHECK(widths.size() == lengths.size(), "window: {} widths for {} graphs", widths.size(), lengths.size());
  for (std::size_t b = 0; b < widths.size(); ++b) check_width(widths[b], static_cast<std::int64_t>(b));
  return build(
      static_cast<std::int64_t>(lengths.size()), dtype, "window",
      [&](std::int64_t b) { return window_count(lengths[b], widths[b]); },
      [&](std::int64_t b, auto* src, auto* dst) {
        using T = std::remove_pointer_t<decltype(src)>;
        const std::int64_t n = lengths[b], o = node_off[b], r = (widths[b] - 1) / 2;
        std::int64_t k = 0;
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = std::max<std::int64_t>(0, i - r); j <= std::min(n - 1, i + r); ++j, ++k) {
            src[k] = static_cast<T>(o + j);
            dst[k] = static_cast<T>(o + i);
          }
      });
}
EdgeList window_batch(const std::vector<std::int64_t>& lengths, std::int64_t width, DType dtype) {
  return window_batch(lengths, std::vector<std::int64_t>(lengths.size(), width), dtype);
}
EdgeList window(std::int64_t n, std::int64_t width, DType dtype) { return window_batch({n}, width, dtype); }

std::vector<std::int64_t> fractional_widths(const std::vector<std::int64_t>& lengths, std::int64_t divisor) {
  TOPO_CHECK(divisor >= 1, "fractional_widths: divisor {} must be >= 1", divisor);
  check_lengths(lengths, "fractional_widths");
  std::vector<std::int64_t> out;
  out.reserve(lengths.size());
  for (std::int64_t n : lengths) {
    const std::int64_t w = std::max<std::int64_t>(1, n / divisor + (n % divisor != 0));  // ceil, no overflow
    out.push_back(w % 2 == 1 ? w : w + 1);
  }
  return out;
}

EdgeList full_batch(const std::vector<std::int64_t>& lengths, DType dtype) {
  const auto node_off = node_offsets(lengths, dtype, "full");
  return build(
      static_cast<std::int64_t>(lengths.size()), dtype, "full",
      [&](std::int64_t b) { return mul_sizes(lengths[b], lengths[b], "full"); },
      [&](std::int64_t b, auto* src, auto* dst) {
        using T = std::remove_pointer_t<decltype(src)>;
        const std::int64_t n = lengths[b], o = node_off[b];
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            src[i * n + j] = static_cast<T>(o + j);
            dst[i * n + j] = static_cast<T>(o + i);
          }
      });
}
EdgeList full(std::int64_t n, DType dtype) { return full_batch({n}, dtype); }

EdgeList self_loops_batch(const std::vector<std::int64_t>& lengths, DType dtype) {
  const auto node_off = node_offsets(lengths, dtype, "self_loops");
  return build(
      static_cast<std::int64_t>(lengths.size()), dtype, "self_loops", [&](std::int64_t b) { return lengths[b]; },
      [&](std::int64_t b, auto* src, auto* dst) {
        using T = std::remove_pointer_t<decltype(src)>;
        for (std::int64_t i = 0; i < lengths[b]; ++i) src[i] = dst[i] = static_cast<T>(node_off[b] + i);
      });
}
EdgeList self_loops(std::int64_t n, DType dtype) { return self_loops_batch({n}, dtype); }

namespace {
EdgeList one_batch(const std::vector<std::int64_t>& lengths, DType dtype, bool to_center) {
  const char* name = to_center ? "to_one" : "from_one";
  const auto node_off = node_offsets(lengths, dtype, name);
  return build(
      static_cast<std::int64_t>(lengths.size()), dtype, name, [&](std::int64_t b) { return lengths[b]; },
      [&](std::int64_t b, auto* src, auto* dst) {
        using T = std::remove_pointer_t<decltype(src)>;
        T* leaf = to_center ? src : dst;
        T* center = to_center ? dst : src;
        for (std::int64_t i = 0; i < lengths[b]; ++i) {
          leaf[i] = static_cast<T>(node_off[b] + i);
          center[i] = static_cast<T>(b);
        }
      });
}
}  // namespace

EdgeList to_one_batch(const std::vector<std::int64_t>& lengths, DType dtype) { return one_batch(lengths, dtype, true); }
EdgeList from_one_batch(const std::vector<std::int64_t>& lengths, DType dtype) {
  return one_batch(lengths, dtype, false);
}
EdgeList to_one(std::int64_t n, DType dtype) { return to_one_batch({n}, dtype); }
EdgeList from_one(std::int64_t n, DType dtype) { return from_one_batch({n}, dtype); }
StarEdges star_batch(const std::vector<std::int64_t>& lengths, DType dtype) {
  return {to_one_batch(lengths, dtype), from_one_batch(lengths, dtype)};
}

std::vector<std::int64_t> span_counts(const std::vector<std::vector<Span>>& spans) {
  std::vector<std::int64_t> out;
  out.reserve(spans.size());
  for (const auto& s : spans) out.push_back(static_cast<std::int64_t>(s.size()));
  return out;
}

SpanEdges bipartite_spans_batch(const std::vector<std::int64_t>& lengths, const std::vector<std::vector<Span>>& spans,
                                DType dtype) {
  const auto char_off = node_offsets(lengths, dtype, "bipartite_spans");
  TOPO_CHECK(spans.size() == lengths.size(), "bipartite_spans: {} span lists for {} graphs", spans.size(),
             lengths.size());
  for (std::size_t b = 0; b < spans.size(); ++b)
    for (std::size_t j = 0; j < spans[b].size(); ++j) {
      const Span s = spans[b][j];
      TOPO_CHECK(s.start >= 0 && s.start <= s.end && s.end < lengths[b],
                 "bipartite_spans: graph {} word {} has span [{}, {}] outside a sentence of {} characters", b, j,
                 s.start, s.end, lengths[b]);
    }
  const auto word_off = node_offsets(span_counts(spans), dtype, "bipartite_spans");
  const auto batch = static_cast<std::int64_t>(lengths.size());
  auto count = [&](std::int64_t b) {
    std::int64_t c = 0;
    for (const Span& s : spans[b]) c = add_sizes(c, s.end - s.start + 1, "bipartite_spans");
    return c;
  };
  auto fill = [&](bool char_to_word) {
    return [&, char_to_word](std::int64_t b, auto* src, auto* dst) {
      using T = std::remove_pointer_t<decltype(src)>;
      T* chars = char_to_word ? src : dst;
      T* words = char_to_word ? dst : src;
      std::int64_t k = 0;
      for (std::size_t j = 0; j < spans[b].size(); ++j)
        for (std::int64_t c = spans[b][j].start; c <= spans[b][j].end; ++c, ++k) {
          chars[k] = static_cast<T>(char_off[b] + c);
          words[k] = static_cast<T>(word_off[b] + static_cast<std::int64_t>(j));
        }
    };
  };
  return {build(batch, dtype, "bipartite_spans", count, fill(true)),
          build(batch, dtype, "bipartite_spans", count, fill(false))};
}
SpanEdges bipartite_spans(std::int64_t n, const std::vector<Span>& spans, DType dtype) {
  return bipartite_spans_batch({n}, {spans}, dtype);
}

}  // namespace topo::builders
