// The calls behind the Python package's topograph._C (python/src/graph_bindings.cpp, op_bindings.cpp) with the
// arguments a Python caller controls decoded from the input: a graph (node types with any names and counts,
// relations between any type names with id tensors of either id dtype, any length or rank: make_graph), then
// up to 12 calls on it or on what they return — structure queries, subgraphs, neighbour and block sampling
// (fan-outs, weights with NaN or negatives, exclusions), to_block, batching, the batched edge builders,
// gspmm / gsddmm from integer op codes, edge softmax and the fused attentions over features of any shape, with
// their backward, and the band attention over packed sequences (lengths and radii as given). A bad argument
// must be a topo::Error (the binding raises it as ValueError); anything else — a crash, a sanitizer report,
// another exception, a hang — is a finding.
//
// Sizes stay small: counts, lengths and fan-outs are -3..20, with 2^31 and other extremes only where the call
// must refuse them before allocating (an int32 graph's count, an id, a fan-out without replacement). A huge
// count on an int64 graph is a legal request for terabytes, not a bug, and would only measure the allocator;
// a batch of the batch is kept only while small.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/batch.hpp"
#include "graph/block.hpp"
#include "graph/builders.hpp"
#include "graph/heterograph.hpp"
#include "graph/sampling.hpp"
#include "graph/structure.hpp"
#include "graph/to_block.hpp"
#include "kernels/error.hpp"
#include "kernels/sparse/op_codes.hpp"
#include "nn/ops.hpp"
#include "nn/sparse_ops.hpp"

namespace {

using namespace topo;

// The input read front to back; past its end every byte is 0 (so every prefix is a complete call script).
class Args {
 public:
  Args(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ == end_; }
  std::uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  int pick(int n) { return byte() % n; }
  bool flag() { return (byte() & 1) != 0; }

  // -3..20 for most bytes; the top 24 byte values are extremes (INT32 and INT64 limits, 2^31, 2^40, ...) when
  // `extremes` (ids, widths, fan-outs without replacement), else -3..20 again.
  std::int64_t integer(bool extremes) {
    static constexpr std::int64_t kMax64 = std::numeric_limits<std::int64_t>::max();
    static constexpr std::int64_t kMin64 = std::numeric_limits<std::int64_t>::min();
    static constexpr std::int64_t kExtremes[24] = {
        2147483647,       -2147483648LL,     2147483648LL, -2147483649LL, kMax64, kMin64, kMax64 - 1, kMin64 + 1,
        4294967296LL,     1LL << 40,        -(1LL << 40), 1LL << 62,     255,    256,    65535,      65536,
        -1000,            1000,             -255,         3000000000LL,  -2,     -1,     100,        50000};
    const std::uint8_t b = byte();
    if (b >= 232 && extremes) return kExtremes[b - 232];
    return static_cast<std::int64_t>(b % 24) - 3;
  }
  // A count or length: -3..20, or when `refused` (int32 ids) now and then one int32 ids cannot number or no
  // count can be (2^31, 2^40, negatives); never a large valid one (50,000 nodes made an input take seconds).
  std::int64_t count(bool refused) {
    static constexpr std::int64_t kRefused[8] = {2147483648LL, 2147483649LL, 4294967296LL, 1LL << 40,
                                                 std::numeric_limits<std::int64_t>::max(), -1, -2147483648LL,
                                                 std::numeric_limits<std::int64_t>::min()};
    const std::uint8_t b = byte();
    if (b >= 232 && refused) return kRefused[(b - 232) % 8];
    return static_cast<std::int64_t>(b % 24) - 3;
  }
  std::vector<std::int64_t> integers(bool extremes, int max_count = 10) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(pick(max_count + 1)));
    for (auto& v : out) v = integer(extremes);
    return out;
  }
  // Names as the package uses them ("_N", "_E", a block's "SRC/" types) and a few that clash or are empty.
  std::string name() {
    static const char* const kNames[8] = {"_N", "_E", "user", "item", "", "SRC/_N", "DST/_N", "user"};
    return kNames[pick(8)];
  }
  float value() {
    static const float kSpecial[8] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                      -std::numeric_limits<float>::infinity(), 0.f, -0.f, 1e30f, -1e30f, 1e-40f};
    const std::uint8_t b = byte();
    return b >= 248 ? kSpecial[b - 248] : (static_cast<float>(b) - 124.f) / 16.f;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// An id tensor as Python hands one over: int32 or int64 (values wrap into int32, as a torch int32 tensor
// holds them), 1-d mostly, sometimes [n, 1] (make_graph must refuse it).
Tensor id_tensor(Args& in, DType dtype) {
  const std::vector<std::int64_t> v = in.integers(true, 12);
  const auto n = static_cast<std::int64_t>(v.size());
  const Shape shape = in.pick(8) == 0 ? Shape{n, 1} : Shape{n};
  if (dtype == DType::I64) return Tensor::from_vector(v, shape);
  std::vector<std::int32_t> narrow(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) narrow[i] = static_cast<std::int32_t>(static_cast<std::uint64_t>(v[i]));
  return Tensor::from_vector(narrow, shape);
}

// A float32 tensor [rows, inner...]: `rows` and `inner` most of the time (what the call expects), else a
// dimension of 0..4 anywhere, another rank, or an int32 tensor where float32 is due.
Tensor features(Args& in, std::int64_t rows, const Shape& inner) {
  Shape shape{rows};
  shape.insert(shape.end(), inner.begin(), inner.end());
  if (in.pick(6) == 0) {
    shape.assign(static_cast<std::size_t>(1 + in.pick(3)), 0);
    for (auto& d : shape) d = in.pick(5);
  }
  std::int64_t n = 1;
  for (const auto d : shape) n *= d;
  if (in.pick(16) == 0) return Tensor::from_vector(std::vector<std::int32_t>(static_cast<std::size_t>(n), 1), shape);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = in.value();
  return Tensor::from_vector(v, shape);
}

// A feature tensor as an op's input, wanting its gradient or not (as torch's requires_grad).
nn::Var leaf(Args& in, std::int64_t rows, const Shape& inner) {
  Tensor t = features(in, rows, inner);
  return nn::Var(std::move(t), in.flag());
}

// The gradient of an op's output (its shape), as torch's backward hands it to the Tape.
void backward(const nn::Var& out, Args& in) {
  if (!in.flag()) return;
  out.backward(Tensor::full(out.data().shape(), in.value()), /*retain_graph=*/true);
}

// make_graph's arguments: node types [(name, count)], relations [((src type, etype, dst type), src, dst)].
HeteroGraph make_graph(Args& in) {
  const DType dtype = in.flag() ? DType::I64 : DType::I32;
  std::vector<NodeTypeSpec> types(static_cast<std::size_t>(in.pick(4)));
  for (auto& t : types) t = {in.name(), in.count(dtype == DType::I32), {}};
  std::vector<RelationSpec> relations(static_cast<std::size_t>(in.pick(4)));
  for (auto& r : relations) {
    r.etype = {in.name(), in.name(), in.name()};
    r.edges.src = id_tensor(in, in.pick(8) == 0 ? DType::I64 : dtype);  // mixed id dtypes, sometimes
    r.edges.dst = id_tensor(in, dtype);
  }
  return HeteroGraph(types, relations);
}

std::string node_type(Args& in, const HeteroGraph& g) {
  return g.num_node_types() > 0 && in.pick(4) != 0 ? g.node_types()[in.pick(g.num_node_types())] : in.name();
}
int relation(Args& in, const HeteroGraph& g) {
  return in.pick(8) == 0 ? static_cast<int>(in.integer(true)) : in.pick(std::max(1, g.num_relations()));
}
std::string etype(Args& in, const HeteroGraph& g) {
  return g.num_relations() > 0 && in.pick(4) != 0 ? g.canonical_etype(in.pick(g.num_relations())).etype : in.name();
}
std::map<std::string, std::vector<std::int64_t>> node_sets(Args& in, const HeteroGraph& g) {
  std::map<std::string, std::vector<std::int64_t>> out;
  for (int k = in.pick(3); k > 0; --k) out[node_type(in, g)] = in.integers(true);
  return out;
}
std::vector<std::vector<std::int64_t>> per_type(Args& in, int count) {
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(in.pick(8) == 0 ? in.pick(4) : count));
  for (auto& ids : out) ids = in.integers(true);
  return out;
}
std::vector<std::int64_t> fanouts(Args& in, const HeteroGraph& g, bool replace) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(in.pick(8) == 0 ? in.pick(4) : g.num_relations()));
  for (auto& f : out) f = in.integer(!replace);  // with replacement a fan-out of 2^40 draws 2^40 edges
  return out;
}
SamplingOptions sampling_options(Args& in, const HeteroGraph& g) {
  SamplingOptions o;
  o.edge_dir = in.flag() ? EdgeDir::out : EdgeDir::in;
  o.replace = in.flag();
  if (in.flag())
    for (int r = 0; r < g.num_relations(); ++r)
      o.prob.push_back(in.flag() ? features(in, g.num_edges(r), in.flag() ? Shape{1} : Shape{}) : Tensor());
  if (in.flag())
    for (int r = 0; r < g.num_relations(); ++r) o.exclude.push_back(in.integers(true, 4));
  return o;
}

// One call of the binding's; returns the graph the next call runs on (a result graph, sometimes).
HeteroGraph call(Args& in, const HeteroGraph& g) {
  switch (in.pick(16)) {
    case 0: {
      const auto nodes = in.integers(true);
      (void)(in.flag() ? in_edges(g, nodes, etype(in, g)) : out_edges(g, nodes, etype(in, g)));
      return g;
    }
    case 1: {
      const std::int64_t node = in.integer(true);
      (void)(in.flag() ? predecessors(g, node, etype(in, g)) : successors(g, node, etype(in, g)));
      return g;
    }
    case 2: {
      const auto nodes = node_sets(in, g);
      const HeteroGraph sub = in.flag() ? node_subgraph(g, nodes) : in_subgraph(g, nodes);
      return in.flag() ? sub : g;
    }
    case 3: {
      std::map<std::string, std::vector<std::int64_t>> edges;
      for (int k = in.pick(3); k > 0; --k) edges[etype(in, g)] = in.integers(true);
      const HeteroGraph sub = edge_subgraph(g, edges, in.flag());
      return in.flag() ? sub : g;
    }
    case 4: {
      const auto seeds = node_sets(in, g);
      const SamplingOptions options = sampling_options(in, g);
      const auto fan = fanouts(in, g, options.replace);
      const HeteroGraph frontier = sample_neighbors(g, seeds, fan, in.byte(), options);
      return in.flag() ? frontier : g;
    }
    case 5: {  // sample_blocks, then each layer as the binding makes it a graph
      const auto seeds = per_type(in, g.num_node_types());
      const SamplingOptions options = sampling_options(in, g);
      std::vector<std::vector<std::int64_t>> layers(static_cast<std::size_t>(in.pick(4)));
      for (auto& l : layers) l = fanouts(in, g, options.replace);
      const auto sampled = sample_blocks(g, seeds, layers, in.byte(), options);
      const HeteroGraph oriented = options.edge_dir == EdgeDir::out ? g.reverse() : g;
      for (const SampledBlock& l : sampled) (void)block_graph(oriented, l.parts, l.dst_nodes, "SRC/", "DST/");
      return g;
    }
    case 6: {
      const auto dst = per_type(in, g.num_node_types());
      const bool include_dst = in.flag();
      std::optional<std::vector<std::vector<std::int64_t>>> src;
      if (in.flag()) src = per_type(in, g.num_node_types());
      const BlockParts parts = to_block(g, dst, include_dst, src);
      const HeteroGraph block = block_graph(g, parts, dst, "SRC/", "DST/");
      return in.flag() ? block : g;
    }
    case 7:
      switch (in.pick(5)) {
        case 0: return g.reverse();
        case 1: {
          const std::string e = etype(in, g);
          return add_self_loop(g, e, in.value());
        }
        case 2: return remove_self_loop(g, etype(in, g));
        case 3: return to_simple(g, in.flag() ? "count" : "");
        default: {
          std::vector<CanonicalEType> keep;
          for (int k = in.pick(3); k > 0; --k)
            keep.push_back(in.flag() && g.num_relations() > 0 ? g.canonical_etype(in.pick(g.num_relations()))
                                                              : CanonicalEType{in.name(), in.name(), in.name()});
          return g.edge_type_subgraph(keep);
        }
      }
    case 8: {
      std::vector<HeteroGraph> graphs(static_cast<std::size_t>(in.pick(3)), g);
      if (in.flag()) graphs.push_back(make_graph(in));
      const HeteroGraph batched = batch(graphs);
      (void)unbatch(batched);
      // kept small: batching the batch again in each of 12 calls grew the graph 3^12-fold (300 executions/s)
      const bool small = batched.total_num_nodes() + batched.total_num_edges() <= 4096;
      return in.flag() && small ? batched : g;
    }
    case 9: {  // builder_edges and span_edges: lengths (extremes only where int32 ids must refuse them)
      const DType dtype = in.flag() ? DType::I64 : DType::I32;
      std::vector<std::int64_t> lengths(static_cast<std::size_t>(in.pick(5)));
      for (auto& n : lengths) n = in.count(dtype == DType::I32);
      switch (in.pick(7)) {
        case 0: (void)builders::ring_batch(lengths, in.flag(), dtype); break;
        case 1: (void)builders::window_batch(lengths, in.integers(true, 4), dtype); break;
        case 2: (void)builders::full_batch(lengths, dtype); break;
        case 3: (void)builders::self_loops_batch(lengths, dtype); break;
        case 4: (void)builders::to_one_batch(lengths, dtype); break;
        case 5: (void)builders::from_one_batch(lengths, dtype); break;
        default: {
          std::vector<std::vector<builders::Span>> spans(static_cast<std::size_t>(in.pick(4)));
          for (auto& s : spans)
            for (int k = in.pick(4); k > 0; --k) s.push_back({in.integer(true), in.integer(true)});
          (void)builders::bipartite_spans_batch(lengths, spans, dtype);
        }
      }
      return g;
    }
    case 10: {  // the binding's gspmm: op and reducer as integer codes
      const MessageOp op = message_op_from_code(static_cast<int>(in.integer(true)));
      const SpmmReduce reduce = spmm_reduce_from_code(static_cast<int>(in.integer(true)));
      const int r = relation(in, g);
      const Block block = nn::gspmm_block(g, r, op, reduce);
      const Shape inner = in.flag() ? Shape{2} : Shape{2, 3};
      nn::Var u = message_uses_u(op) ? leaf(in, block.num_src, inner) : nn::Var();
      nn::Var e = message_uses_e(op) ? leaf(in, block.num_edges(), inner) : nn::Var();
      backward(nn::gspmm(block, op, reduce, u, e), in);
      return g;
    }
    case 11: {
      const SddmmOp op = sddmm_op_from_code(static_cast<int>(in.integer(true)));
      const Target lt = target_from_code(static_cast<int>(in.integer(true)));
      const Target rt = target_from_code(static_cast<int>(in.integer(true)));
      const Block block = relation_block(g, relation(in, g));
      const auto rows = [&](Target t) {
        return t == Target::U ? block.num_src : t == Target::V ? block.num_dst : block.num_edges();
      };
      const Shape inner = in.flag() ? Shape{3} : Shape{2, 3};
      nn::Var lhs = sddmm_uses_lhs(op) ? leaf(in, rows(lt), inner) : nn::Var();
      nn::Var rhs = sddmm_uses_rhs(op) ? leaf(in, rows(rt), inner) : nn::Var();
      backward(nn::gsddmm(block, op, lhs, rhs, lt, rt), in);
      return g;
    }
    case 12: {
      const Block block = relation_block(g, relation(in, g));
      const nn::Var logits = leaf(in, block.num_edges(), in.flag() ? Shape{} : Shape{2});
      backward(nn::edge_softmax(block, logits, in.flag() ? nn::NormBy::Src : nn::NormBy::Dst), in);
      return g;
    }
    case 13: {  // the fused attention: q [num_dst, H, dk], k [num_src, H, dk], v [num_src, H, dv]
      const Block block = relation_block(g, relation(in, g));
      const std::int64_t heads = 1 + in.pick(3), dk = 1 + in.pick(4), dv = 1 + in.pick(4);
      const nn::Var q = leaf(in, block.num_dst, {heads, dk});
      const nn::Var k = leaf(in, block.num_src, {heads, dk});
      const nn::Var v = leaf(in, block.num_src, {heads, dv});
      backward(nn::sparse_attention(block, q, k, v, in.value()), in);
      return g;
    }
    case 14: {  // GAT's: el [num_src, H], er [num_dst, H], z [num_src, H, F], dropout from a seed
      const Block block = relation_block(g, relation(in, g));
      const std::int64_t heads = 1 + in.pick(3), width = 1 + in.pick(4);
      const nn::Var el = leaf(in, block.num_src, {heads});
      const nn::Var er = leaf(in, block.num_dst, {heads});
      const nn::Var z = leaf(in, block.num_src, {heads, width});
      const float drop = in.pick(4) == 0 ? in.value() : 0.f;
      nn::Generator gen(in.byte());
      backward(nn::gat_attention(block, el, er, z, in.value(), drop, drop > 0.f, gen), in);
      return g;
    }
    default: {  // the accessors the Python graph reads, and the band attention (no graph: packed sequences)
      const int r = relation(in, g);
      switch (in.pick(7)) {
        case 0: (void)g.out_csr(r); (void)g.in_csc(r); break;
        case 1: (void)g.in_degrees(r); (void)g.out_degrees(r); break;
        case 2: (void)g.edata_map(r); (void)g.batch_num_edges(r); break;
        case 3: (void)g.num_nodes(r); (void)g.batch_num_nodes(r); break;
        case 4: (void)g.node_type_id(in.name()); break;
        case 5: (void)g.relation_id(CanonicalEType{in.name(), in.name(), in.name()}); break;
        default: {  // _C.band_attention: lengths and radii as given, q / k / v of their rows mostly
          const std::vector<std::int64_t> lengths = in.integers(true, 4), radii = in.integers(true, 4);
          std::int64_t rows = 0;
          for (const std::int64_t n : lengths) rows += n > 0 && n <= 20 ? n : 0;  // the valid ones' rows
          const std::int64_t heads = 1 + in.pick(2);
          const nn::Var q = leaf(in, rows, {heads, 3});
          const nn::Var k = leaf(in, rows, {heads, 3});
          const nn::Var v = leaf(in, rows, {heads, 2});
          backward(nn::flash_attention(q, k, v, lengths, in.value(), radii), in);
        }
      }
      return g;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Args in(data, size);
  try {
    HeteroGraph g = make_graph(in);
    for (int i = 0; i < 12 && !in.done(); ++i) {
      try {
        g = call(in, g);
      } catch (const Error&) {  // a refused call; the graph stays, the next call runs
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
