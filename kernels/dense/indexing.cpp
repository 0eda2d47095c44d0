// Gathers, scatter-adds, concat and split.
// CPU strategies:
// - gather (index_select, embedding): parallel_for over output rows; each row is one contiguous copy.
// - scatter-add (index_add, embedding_backward): deterministic, no atomics. Wide rows: threads own column
//   ranges and each walks all indices in order. Narrow rows: a counting sort groups source positions by
//   destination row (in increasing i) and threads own destination rows. Both add in increasing i starting
//   from 0, so the result is bitwise the same for any thread count and either path.
// - concat/split: view every tensor as [outer, size_along_dim * inner]; parallel_for over the
//   outer * K contiguous runs, one memcpy each.
// Indices are validated before any kernel runs (CPU: a serial scan; CUDA: a scan kernel whose first bad
// position comes back with one small copy), so a bad id is a topo::Error and never a stray write.
#include "kernels/dense/indexing.hpp"

#include <cstring>

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

bool index_is_64(const Tensor& index, const char* op, const char* arg) {
  TOPO_CHECK(index.dtype() == DType::I64 || index.dtype() == DType::I32, "{}: {} must be int32 or int64, got {}", op,
             arg, index.str());
  return index.dtype() == DType::I64;
}

// skip_missing: entries equal to kNoRow are allowed (embedding_sum's rows a table leaves out).
void validate(const Tensor& index, std::int64_t limit, const char* op, const char* arg, bool skip_missing = false) {
  const IndexScan scan = skip_missing ? scan_indices(index, limit, kNoRow) : scan_indices(index, limit);
  TOPO_CHECK(scan.first_bad < 0, "{}: {} at position {} is {}, out of range [0, {}){}", op, arg, scan.first_bad,
             scan.bad_value, limit, skip_missing ? " (or -1: no row)" : "");
}

std::int64_t words_per_row(const Tensor& t) {
  return t.row_numel() * static_cast<std::int64_t>(dtype_size(t.dtype())) / 4;
}

template <class W, class I>
void gather_cpu(const W* x, const I* index, W* out, std::int64_t m, std::int64_t row) {
  parallel_for(m, row, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      const W* src = x + static_cast<std::int64_t>(index[i]) * row;
      W* dst = out + i * row;
      for (std::int64_t c = 0; c < row; ++c) dst[c] = src[c];
    }
  });
}

// Negative indices (kNoRow, validated before) add nothing.
template <class I>
void scatter_add_cpu(const float* src, const I* index, float* out, std::int64_t num_rows, std::int64_t m,
                     std::int64_t row) {
  if (row >= 64 * num_threads()) {
    parallel_for(row, m, [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t i = 0; i < m; ++i) {
        if (index[i] < 0) continue;
        float* dst = out + static_cast<std::int64_t>(index[i]) * row;
        const float* s = src + i * row;
        for (std::int64_t c = c0; c < c1; ++c) dst[c] += s[c];
      }
    });
    return;
  }
  // start[r] .. start[r + 1]: positions i (increasing) with index[i] == r.
  std::vector<std::int64_t> start(static_cast<std::size_t>(num_rows) + 1, 0), order(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i)
    if (index[i] >= 0) ++start[static_cast<std::size_t>(index[i]) + 1];
  for (std::int64_t r = 0; r < num_rows; ++r) start[r + 1] += start[r];
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::int64_t i = 0; i < m; ++i)
      if (index[i] >= 0) order[fill[static_cast<std::size_t>(index[i])]++] = i;
  }
  const std::int64_t work = num_rows > 0 ? (m * row) / num_rows + row : row;
  parallel_for(num_rows, work, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      float* dst = out + r * row;
      for (std::int64_t k = start[r]; k < start[r + 1]; ++k) {
        const float* s = src + order[k] * row;
        for (std::int64_t c = 0; c < row; ++c) dst[c] += s[c];
      }
    }
  });
}

Tensor gather(const Tensor& x, const Tensor& index, const char* op, const char* arg) {
  TOPO_PROFILE(Indexing);
  TOPO_CHECK(x.ndim() >= 1, "{}: source must have at least one dimension, got {}", op, x.str());
  TOPO_CHECK(index.ndim() == 1, "{}: {} must be 1-d, got {}", op, arg, index.str());
  check_same_device(x, index, op);
  const bool i64 = index_is_64(index, op, arg);
  validate(index, x.size(0), op, arg);
  Shape shape = x.shape();
  shape[0] = index.numel();
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  const std::int64_t m = index.numel(), words = words_per_row(x);
  if (out.numel() == 0) return out;
  TOPO_ON_DEVICE(
      x.device(),
      {
        const bool wide = dtype_size(x.dtype()) == 8;
        if (i64 && wide) {
          gather_cpu(x.data<std::int64_t>(), index.data<std::int64_t>(), out.data<std::int64_t>(), m, x.row_numel());
        } else if (i64) {
          gather_cpu(static_cast<const std::uint32_t*>(x.raw_data()), index.data<std::int64_t>(),
                     static_cast<std::uint32_t*>(out.raw_data()), m, words);
        } else if (wide) {
          gather_cpu(x.data<std::int64_t>(), index.data<std::int32_t>(), out.data<std::int64_t>(), m, x.row_numel());
        } else {
          gather_cpu(static_cast<const std::uint32_t*>(x.raw_data()), index.data<std::int32_t>(),
                     static_cast<std::uint32_t*>(out.raw_data()), m, words);
        }
      },
      cuda::gather_rows(x.raw_data(), index.raw_data(), i64, out.raw_data(), m, words));
  return out;
}

Tensor scatter_add(std::int64_t num_rows, const Tensor& index, const Tensor& src, const char* op, const char* arg,
                   bool skip_missing = false) {
  TOPO_PROFILE(Indexing);
  check_dtype(src, DType::F32, op, "src");
  TOPO_CHECK(src.ndim() >= 1, "{}: src must have at least one dimension, got {}", op, src.str());
  TOPO_CHECK(index.ndim() == 1 && index.numel() == src.size(0), "{}: {} must be 1-d with {} entries (src {}), got {}",
             op, arg, src.size(0), src.str(), index.str());
  TOPO_CHECK(num_rows >= 0, "{}: negative row count {}", op, num_rows);
  check_same_device(src, index, op);
  const bool i64 = index_is_64(index, op, arg);
  validate(index, num_rows, op, arg, skip_missing);
  Shape shape = src.shape();
  shape[0] = num_rows;
  Tensor out = Tensor::zeros(shape, DType::F32, src.device());
  const std::int64_t m = index.numel(), row = src.row_numel();
  if (m == 0 || row == 0) return out;
  const float* sp = src.data<float>();
  float* op_ = out.data<float>();
  TOPO_ON_DEVICE(
      src.device(),
      {
        if (i64) {
          scatter_add_cpu(sp, index.data<std::int64_t>(), op_, num_rows, m, row);
        } else {
          scatter_add_cpu(sp, index.data<std::int32_t>(), op_, num_rows, m, row);
        }
      },
      cuda::scatter_add_rows(sp, index.raw_data(), i64, op_, m, row, skip_missing));
  return out;
}

// One table of embedding_sum on the CPU: its rows and its ids (int64 or int32).
struct SumTable {
  const float* rows;
  const void* ids;
  bool wide;
  const float* row(std::int64_t i, std::int64_t width) const {  // null: kNoRow
    const std::int64_t r = wide ? static_cast<const std::int64_t*>(ids)[i] : static_cast<const std::int32_t*>(ids)[i];
    return r < 0 ? nullptr : rows + r * width;
  }
};

// out[i] = sum over tables of their row for i (kNoRow: left out), in table order; zero when none.
void embedding_sum_cpu(std::int64_t m, std::int64_t row, const std::vector<SumTable>& tables, float* out) {
  parallel_for(m, row * static_cast<std::int64_t>(tables.size()), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      float* dst = out + i * row;
      bool first = true;
      for (const SumTable& t : tables) {
        const float* src = t.row(i, row);
        if (!src) continue;
        if (first) {
          std::memcpy(dst, src, static_cast<std::size_t>(row) * sizeof(float));
        } else {
#pragma omp simd
          for (std::int64_t c = 0; c < row; ++c) dst[c] += src[c];
        }
        first = false;
      }
      if (first) std::fill_n(dst, row, 0.f);
    }
  });
}

int normalize_dim(int dim, int ndim, const char* op) {
  TOPO_CHECK(dim >= -ndim && dim < ndim, "{}: dim {} out of range for {} dimensions", op, dim, ndim);
  return dim < 0 ? dim + ndim : dim;
}

// outer = prod(shape[:dim]), inner = prod(shape[dim+1:]).
void outer_inner(const Shape& shape, int dim, std::int64_t& outer, std::int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (std::size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
}

// One contiguous run per (outer row, piece): piece k's block of `width` bytes sits at byte `offset` of a
// packed row of `row_bytes`.
struct Piece {
  char* packed_side;       // concat: source; split: destination (the per-piece tensor)
  std::int64_t width = 0;  // bytes per outer row
  std::int64_t offset = 0;
};

// One run of `width` bytes. Runs of 32 and 64 bytes (a [N, 8] / [N, 16] float piece: GraphSAGE's split of its
// fused [W_neigh; W_self] product, and the concat of their gradients) are copied at a constant size, which
// compiles to two or one vector moves instead of a libc call per run.
inline void copy_run(char* to, const char* from, std::int64_t width) {
  switch (width) {
    case 32: std::memcpy(to, from, 32); break;
    case 64: std::memcpy(to, from, 64); break;
    default: std::memcpy(to, from, static_cast<std::size_t>(width));
  }
}

// to_packed: copy pieces into the packed tensor (concat); otherwise out of it (split). CPU strategy: parallel_for
// over outer rows, each row's pieces in order. (Over (row, piece) pairs, each run paid a 64-bit division and a
// modulo besides the libc call: `topo-bench dense` split [100k, 32] -> 2 x [100k, 16], one thread, 3.8-4.8 ->
// 2.7-3.6 ms, most of the rest the fresh outputs' page faults.)
void copy_pieces(const std::vector<Piece>& pieces, char* packed, std::int64_t row_bytes, std::int64_t outer,
                 bool to_packed, Device device) {
  TOPO_ON_DEVICE(
      device,
      parallel_for(outer, row_bytes / 4 + 1,
                   [&](std::int64_t b, std::int64_t e) {
                     for (std::int64_t o = b; o < e; ++o)
                       for (const Piece& p : pieces) {
                         if (p.width == 0) continue;  // an empty piece's data may be null: no memcpy on it
                         char* packed_at = packed + o * row_bytes + p.offset;
                         char* piece_at = p.packed_side + o * p.width;
                         if (to_packed)
                           copy_run(packed_at, piece_at, p.width);
                         else
                           copy_run(piece_at, packed_at, p.width);
                       }
                   }),
      {
        for (const Piece& p : pieces) {
          if (p.width == 0 || outer == 0) continue;
          if (to_packed) {
            cuda::copy_strided(p.packed_side, p.width / 4, packed + p.offset, row_bytes / 4, outer, p.width / 4);
          } else {
            cuda::copy_strided(packed + p.offset, row_bytes / 4, p.packed_side, p.width / 4, outer, p.width / 4);
          }
        }
      });
}

}  // namespace

IndexScan scan_indices(const Tensor& index, std::int64_t limit, std::optional<std::int64_t> ignore) {
  const bool i64 = index_is_64(index, "scan_indices", "index");
  const std::int64_t n = index.numel();
  const bool use_ignore = ignore.has_value();
  const std::int64_t ig = ignore.value_or(0);
  IndexScan scan;
  TOPO_ON_DEVICE(
      index.device(),
      scan = i64 ? scan_indices_host(index.data<std::int64_t>(), n, limit, use_ignore, ig)
                 : scan_indices_host(index.data<std::int32_t>(), n, limit, use_ignore, ig),
      scan = cuda::scan_indices(index.raw_data(), i64, n, limit, use_ignore, ig));
  return scan;
}

Tensor index_select(const Tensor& x, const Tensor& index) { return gather(x, index, "index_select", "index"); }

Tensor index_add(std::int64_t num_rows, const Tensor& index, const Tensor& src) {
  return scatter_add(num_rows, index, src, "index_add", "index");
}

std::vector<Tensor> unpack_parts(const Tensor& x) {
  TOPO_CHECK(x.ndim() >= 2, "unpack_parts: x must be [rows, parts, ...], got {}", x.str());
  Shape part = x.shape();
  part.erase(part.begin() + 1);
  std::vector<Tensor> parts = split(x, std::vector<std::int64_t>(static_cast<std::size_t>(x.size(1)), 1), 1);
  for (Tensor& t : parts) t = t.reshape(part);
  return parts;
}

Tensor pack_parts(const std::vector<Tensor>& parts) {
  TOPO_CHECK(!parts.empty() && parts[0].ndim() >= 1, "pack_parts: no parts");
  std::vector<Tensor> rows;
  for (const Tensor& t : parts) rows.push_back(t.reshape({t.size(0), 1, t.numel() / std::max<std::int64_t>(t.size(0), 1)}));
  Shape packed = parts[0].shape();
  packed.insert(packed.begin() + 1, static_cast<std::int64_t>(parts.size()));
  return concat(rows, 1).reshape(packed);
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  TOPO_CHECK(weight.ndim() == 2, "embedding: weight must be [V, D], got {}", weight.str());
  Shape shape = ids.shape();
  shape.push_back(weight.size(1));
  return gather(weight, ids.reshape({ids.numel()}), "embedding", "ids").reshape(shape);
}

Tensor embedding_backward(const Tensor& grad, const Tensor& ids, std::int64_t num_embeddings) {
  TOPO_CHECK(grad.ndim() == ids.ndim() + 1 &&
                 Shape(grad.shape().begin(), grad.shape().end() - 1) == ids.shape(),
             "embedding_backward: grad {} must be ids.shape + [D] (ids {})", grad.str(), ids.str());
  const std::int64_t d = grad.size(-1);
  return scatter_add(num_embeddings, ids.reshape({ids.numel()}), grad.reshape({ids.numel(), d}),
                     "embedding_backward", "ids");
}

Tensor embedding_sum(const std::vector<Tensor>& tables, const std::vector<Tensor>& ids) {
  TOPO_PROFILE(Indexing);
  TOPO_CHECK(!tables.empty() && tables.size() == ids.size(), "embedding_sum: {} tables for {} id tensors (one each)",
             tables.size(), ids.size());
  const Tensor& first = tables[0];
  const std::int64_t m = ids[0].numel();
  std::vector<bool> wide(tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const std::string table = fmt::format("table {}", t), id = fmt::format("ids {}", t);
    check_dtype(tables[t], DType::F32, "embedding_sum", table.c_str());
    TOPO_CHECK(tables[t].ndim() == 2 && tables[t].size(1) == first.size(1),
               "embedding_sum: table {} must be [V, {}] (table 0 is {}), got {}", t, first.size(1), first.str(),
               tables[t].str());
    TOPO_CHECK(ids[t].ndim() == 1 && ids[t].numel() == m, "embedding_sum: ids {} must be 1-d with {} entries (ids 0), got {}",
               t, m, ids[t].str());
    check_same_device(first, tables[t], "embedding_sum");
    check_same_device(first, ids[t], "embedding_sum");
    wide[t] = index_is_64(ids[t], "embedding_sum", id.c_str());
    validate(ids[t], tables[t].size(0), "embedding_sum", id.c_str(), true);
  }
  const std::int64_t row = first.size(1);
  // CUDA adds each table's rows into zeros, one launch per table; the CPU writes every row once.
  Tensor out = first.device().is_cuda() ? Tensor::zeros({m, row}, DType::F32, first.device())
                                        : Tensor::empty({m, row}, DType::F32, first.device());
  if (out.numel() == 0) return out;
  std::vector<SumTable> cpu_tables;
  for (std::size_t t = 0; t < tables.size(); ++t) cpu_tables.push_back({tables[t].data<float>(), ids[t].raw_data(), wide[t]});
  TOPO_ON_DEVICE(
      first.device(), embedding_sum_cpu(m, row, cpu_tables, out.data<float>()),
      for (std::size_t t = 0; t < tables.size(); ++t) cuda::gather_add_rows(
          tables[t].data<float>(), ids[t].raw_data(), wide[t], out.data<float>(), m, row));
  return out;
}

Tensor embedding_sum_backward(const Tensor& grad, const Tensor& ids, std::int64_t num_embeddings) {
  return scatter_add(num_embeddings, ids, grad, "embedding_sum_backward", "ids", true);
}

Tensor concat(const std::vector<Tensor>& xs, int dim) {
  TOPO_PROFILE(Indexing);
  TOPO_CHECK(!xs.empty(), "concat: no tensors");
  const Tensor& first = xs[0];
  TOPO_CHECK(first.ndim() >= 1, "concat: tensors must have at least one dimension, got {}", first.str());
  const int d = normalize_dim(dim, first.ndim(), "concat");
  Shape shape = first.shape();
  shape[d] = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const Tensor& x = xs[k];
    TOPO_CHECK(x.dtype() == first.dtype() && x.device() == first.device() && x.ndim() == first.ndim(),
               "concat: tensor {} is {}, tensor 0 is {}", k, x.str(), first.str());
    for (int i = 0; i < x.ndim(); ++i)
      TOPO_CHECK(i == d || x.size(i) == first.size(i), "concat along dim {}: tensor {} has shape {}, tensor 0 {}", d,
                 k, shape_str(x.shape()), shape_str(first.shape()));
    shape[d] += x.size(d);
  }
  Tensor out = Tensor::empty(shape, first.dtype(), first.device());
  std::int64_t outer, inner;
  outer_inner(shape, d, outer, inner);
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(first.dtype()));
  std::vector<Piece> pieces;
  std::int64_t offset = 0;
  for (const Tensor& x : xs) {
    const std::int64_t width = x.size(d) * inner * es;
    pieces.push_back(Piece{static_cast<char*>(const_cast<void*>(x.raw_data())), width, offset});
    offset += width;
  }
  if (out.numel() > 0) copy_pieces(pieces, static_cast<char*>(out.raw_data()), offset, outer, true, out.device());
  return out;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<std::int64_t>& sizes, int dim) {
  TOPO_PROFILE(Indexing);
  TOPO_CHECK(x.ndim() >= 1, "split: tensor must have at least one dimension, got {}", x.str());
  const int d = normalize_dim(dim, x.ndim(), "split");
  std::int64_t total = 0;
  for (std::int64_t s : sizes) {
    TOPO_CHECK(s >= 0, "split: negative size {} in {}", s, shape_str(sizes));
    total += s;
  }
  TOPO_CHECK(total == x.size(d), "split: sizes {} sum to {}, but dim {} of {} is {}", shape_str(sizes), total, d,
             shape_str(x.shape()), x.size(d));
  std::int64_t outer, inner;
  outer_inner(x.shape(), d, outer, inner);
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(x.dtype()));
  std::vector<Tensor> outs;
  std::vector<Piece> pieces;
  std::int64_t offset = 0;
  for (std::int64_t s : sizes) {
    Shape shape = x.shape();
    shape[d] = s;
    outs.push_back(Tensor::empty(shape, x.dtype(), x.device()));
    const std::int64_t width = s * inner * es;
    pieces.push_back(Piece{static_cast<char*>(outs.back().raw_data()), width, offset});
    offset += width;
  }
  if (x.numel() > 0 && !pieces.empty())
    copy_pieces(pieces, static_cast<char*>(const_cast<void*>(x.raw_data())), offset, outer, false, x.device());
  return outs;
}

}  // namespace topo
