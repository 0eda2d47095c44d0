// Dense matrix products. CPU: row-major, through the backend of the precision (gemm_backend.hpp: OpenBLAS
// cblas_sgemm, oneDNN, or the own bf16 kernel), always with the threading below.
//  - 2-D, and 3-D a with a shared 2-D b (not transposed a): one sgemm, the batch flattened into M; above
//    cpu::single_thread_gemm_mnk() cut along M or N into chunks fixed by the shape, whole chunks per thread
//    (cpu::sgemm), else on one thread.
//  - batched with small items (M*N*K <= 2^21): OpenMP over the batch; inside the parallel region the OpenMP
//    build of OpenBLAS runs single-threaded, so there is no oversubscription.
//  - batched with big items: one threaded sgemm per item, in order.
// Each single-threaded product above is the backend's; the threading is the same for all of them.
// CUDA: cuBLAS (gemm_cuda.cu), strided-batched for 3-D operands (stride 0 shares b), fp32 at either precision.
#include "kernels/dense/gemm.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "kernels/parallel.hpp"
#include "kernels/profile.hpp"
#include "kernels/threads.hpp"
#include "kernels/dense/binary.hpp"
#include "kernels/dense/gemm_amx.hpp"
#include "kernels/dense/gemm_backend.hpp"
#include "kernels/dense/gemm_bf16.hpp"
#include "kernels/dense/gemm_onednn.hpp"
#include "kernels/dense/gemm_skinny.hpp"
#include "kernels/dense/gemm_math.hpp"
#include "kernels/dispatch.hpp"

namespace topo {
namespace {

struct Plan {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  bool batched = false;   // a is 3-D
  bool shared_b = false;  // a is 3-D, b 2-D
  Shape c_shape;
};

Plan plan_for(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, const char* op) {
  check_dtype(a, DType::F32, op, "a");
  check_dtype(b, DType::F32, op, "b");
  check_same_device(a, b, op);
  const Shape &as = a.shape(), &bs = b.shape();
  const auto bad = [&](const char* why) {
    fail("{}: cannot multiply {}{} by {}{}: {}", op, shape_str(as), trans_a ? "^T" : "", shape_str(bs),
         trans_b ? "^T" : "", why);
  };
  if (a.ndim() < 2 || a.ndim() > 3 || b.ndim() < 2 || b.ndim() > 3) bad("operands must be 2-D or 3-D");
  if (a.ndim() == 2 && b.ndim() == 3) bad("a 2-D a with a 3-D b is not supported");
  Plan p;
  p.batched = a.ndim() == 3;
  p.shared_b = p.batched && b.ndim() == 2;
  if (p.batched) {
    p.batch = as[0];
    if (!p.shared_b && bs[0] != p.batch) bad("batch sizes differ");
  }
  const std::int64_t a_rows = as[as.size() - 2], a_cols = as.back();
  const std::int64_t b_rows = bs[bs.size() - 2], b_cols = bs.back();
  p.m = trans_a ? a_cols : a_rows;
  p.k = trans_a ? a_rows : a_cols;
  const std::int64_t kb = trans_b ? b_cols : b_rows;
  p.n = trans_b ? b_rows : b_cols;
  if (p.k != kb) bad("inner dims differ");
  p.c_shape = p.batched ? Shape{p.batch, p.m, p.n} : Shape{p.m, p.n};
  return p;
}

std::atomic<Precision> g_precision{Precision::fp32};

}  // namespace

const char* precision_name(Precision p) { return p == Precision::bf16 ? "bf16" : "fp32"; }

Precision parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  fail("precision '{}': expected fp32 or bf16", name);
}

bool bf16_gemm_supported() { return cpu::bf16_gemm_cpu_supported(); }

void set_gemm_precision(Precision p) {
  TOPO_CHECK(p == Precision::fp32 || bf16_gemm_supported(),
             "precision bf16: this CPU does not report AVX512_BF16 (use fp32)");
  g_precision.store(p, std::memory_order_relaxed);
}

Precision gemm_precision() { return g_precision.load(std::memory_order_relaxed); }

PrecisionChoice configure_gemm_precision(std::string_view requested, bool cuda_device) {
  const Precision want = parse_precision(requested);
  PrecisionChoice out;
  if (want == Precision::fp32) {
    out.line = "precision: fp32 GEMMs";
  } else if (cuda_device) {
    out.line = "precision: bf16 requested, fp32 used: bf16 GEMMs are CPU-only (AVX512_BF16); CUDA runs cuBLAS fp32";
  } else if (!bf16_gemm_supported()) {
    out.line = "precision: bf16 requested, fp32 used: this CPU does not report AVX512_BF16";
  } else {
    out.used = Precision::bf16;
    const GemmBackend backend = gemm_backend(Precision::bf16);
    out.line = fmt::format("precision: bf16 GEMM inputs ({}), fp32 accumulation, weights, optimizer, norms and softmax",
                           backend == GemmBackend::onednn ? cpu::onednn_version()
                           : backend == GemmBackend::amx  ? std::string("own AMX kernel")
                                                          : std::string("own AVX512_BF16 kernel"));
  }
  set_gemm_precision(out.used);
  return out;
}

std::int64_t cpu::single_thread_gemm_mnk() {
  static const std::int64_t mnk = [] {
    const char* env = std::getenv("TOPO_GEMM_SINGLE_THREAD_MNK");
    if (!env || !*env) return kSingleThreadGemmMnk;
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    TOPO_CHECK(*end == '\0' && v >= 0, "TOPO_GEMM_SINGLE_THREAD_MNK='{}': expected a non-negative integer", env);
    return static_cast<std::int64_t>(v);
  }();
  return mnk;
}

namespace {
// An on/off switch from the environment, read once per name by its caller: unset or empty is on.
bool env_switch(const char* name) {
  const char* env = std::getenv(name);
  if (!env || !*env) return true;
  const std::string v = env;
  TOPO_CHECK(v == "0" || v == "1", "{}='{}': expected 0 or 1", name, v);
  return v == "1";
}
}  // namespace

bool cpu::split_gemm() {
  static const bool split = env_switch("TOPO_GEMM_SPLIT");
  return split;
}

bool cpu::skinny_gemm() {
  static const bool on = env_switch("TOPO_GEMM_SKINNY");
  return on;
}

namespace {

void blas_sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(std::max<std::int64_t>(lda, 1)), b,
              static_cast<int>(std::max<std::int64_t>(ldb, 1)), beta, c,
              static_cast<int>(std::max<std::int64_t>(ldc, 1)));
}

using Kernel = void (*)(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                       const float*, std::int64_t, float, float*, std::int64_t);

// A weight gradient's product, op(a) [m, k] op(b) [k, n] with k (the rows of a batch) far longer than m and
// n: cut along K into split_k_parts(m, n, k) slabs, a number fixed by the shape and the machine, never by the
// thread count; each thread runs whole slabs, slab 0 into c (with the caller's beta), the others into partial
// [m, n] products, then c += the partials in slab order, in the same region. So the sum order, and every bit
// of c, is the same at 1, 2 or 3 threads, as for slabs of M or N, and a run may change its thread count
// between steps (apps/train/thread_tuner.hpp) without changing its results. Slabs of M left each thread a
// [m / 2, n] block with the whole K, which OpenBLAS ran at 131-168 GFLOP/s on 2 cores at the models' shapes;
// slabs of K ran 1.01-1.07x faster there (K 16,384-32,896; M, N 300-1,200; docs/performance/kernels.md).
void split_k(Kernel kernel, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
             const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
             std::int64_t parts, int threads) {
  Tensor partials = Tensor::empty({parts - 1, m, n});
  float* pp = partials.data<float>();
  const int team = static_cast<int>(std::min<std::int64_t>(threads, parts));
  if (team > 1) profile::count_parallel_region();
#pragma omp parallel num_threads(team) if (team > 1)
  {
#pragma omp for schedule(static)
    for (std::int64_t p = 0; p < parts; ++p) {  // a loop, not the thread id: right for any team size
      const std::int64_t lo = k * p / parts, hi = k * (p + 1) / parts;
      const float* ap = ta ? a + lo * lda : a + lo;
      const float* bp = tb ? b + lo : b + lo * ldb;
      if (p == 0)
        kernel(ta, tb, m, n, hi - lo, alpha, ap, lda, bp, ldb, beta, c, ldc);
      else
        kernel(ta, tb, m, n, hi - lo, alpha, ap, lda, bp, ldb, 0.f, pp + (p - 1) * m * n, n);
    }
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t q = 1; q < parts; ++q) {
        const float* row = pp + ((q - 1) * m + i) * n;
        float* out = c + i * ldc;
#pragma omp simd
        for (std::int64_t j = 0; j < n; ++j) out[j] += row[j];
      }
  }
}

// The single-threaded product of each backend (gemm_backend.hpp). OpenBLAS and oneDNN run on as many threads
// as OpenMP gives the caller (one inside a region); the own bf16 kernels are always single-threaded.
Kernel kernel_of(GemmBackend backend, Precision p) {
  switch (backend) {
    case GemmBackend::openblas: return &blas_sgemm;
    case GemmBackend::onednn: return p == Precision::bf16 ? &cpu::onednn_sgemm_bf16 : &cpu::onednn_sgemm;
    case GemmBackend::own: return &cpu::sgemm_bf16;
    case GemmBackend::amx: return &cpu::amx_sgemm_bf16;
  }
  return &blas_sgemm;
}

}  // namespace

void cpu::sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  // OpenBLAS's OpenMP build and oneDNN take their thread count from omp_get_max_threads() at each call (which
  // num_threads() has just set), and run single-threaded inside a parallel region; both are used below.
  const Precision precision = gemm_precision();
  if (precision == Precision::fp32 && skinny_gemm()) {  // narrow outputs read in place, whatever the backend
    if (skinny_rows_applies(ta, m, n, k)) return skinny_gemm_rows(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (skinny_tn_applies(ta, tb, m, n, k)) return skinny_gemm_tn(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  const GemmBackend backend = gemm_backend(precision);
  const auto kernel = kernel_of(backend, precision);
  // Whether the library would thread the call itself (OpenBLAS only as its OpenMP build: see blas_follows_openmp).
  const bool own_threads =
      backend == GemmBackend::onednn || (backend == GemmBackend::openblas && blas_follows_openmp());
  const std::int64_t mnk = m * n * k;
  const int threads = omp_in_parallel() ? 1 : num_threads();
  if (mnk <= single_thread_gemm_mnk()) {  // one thread: the region would cost what the second thread gives
    if (!own_threads || threads <= 1) return kernel(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    omp_set_num_threads(1);
    kernel(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    omp_set_num_threads(threads);
    return;
  }
  if (own_threads && !split_gemm() && threads > 1) {
    profile::count_parallel_region();
    return kernel(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  // One thread runs the same slabs of K in turn, so its bits are those of any count (one slab: the chunks below).
  if (k >= kSplitKRatio * std::max(m, n)) {
    const std::int64_t parts = split_k_parts(m, n, k);
    if (parts > 1) return split_k(kernel, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, parts, threads);
  }
  // Chunks along the longer of M (rows of c: rows of a, or columns of a stored transposed) and N (columns of
  // c: columns of b, or rows of b stored transposed), fixed by the shape alone (gemm_chunks); each thread runs
  // whole chunks, one call each. A backend's kernel may treat the last rows of a call apart (OpenBLAS's Zen 3
  // kernels round its last 4 rows differently), so a row's bits depend on where the calls are cut: cut by the
  // shape, never by the thread count, they are the same at 1, 2 and 3 threads.
  const bool by_rows = m >= n;
  const std::int64_t len = by_rows ? m : n;
  const std::int64_t chunks = gemm_chunks(m, n, k);
  const std::int64_t parts = std::min<std::int64_t>(threads, chunks);
  const auto run_chunks = [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t q = first; q < last; ++q) {
      const std::int64_t lo = len * q / chunks, hi = len * (q + 1) / chunks;
      if (by_rows)
        kernel(ta, tb, hi - lo, n, k, alpha, ta ? a + lo : a + lo * lda, lda, b, ldb, beta, c + lo * ldc, ldc);
      else
        kernel(ta, tb, m, hi - lo, k, alpha, a, lda, tb ? b + lo * ldb : b + lo, ldb, beta, c + lo, ldc);
    }
  };
  if (parts <= 1) {  // one chunk, or one thread: on this thread, with the library kept to it
    if (own_threads && threads > 1) omp_set_num_threads(1);
    run_chunks(0, chunks);
    if (own_threads && threads > 1) omp_set_num_threads(threads);
    return;
  }
  profile::count_parallel_region();
#pragma omp parallel for num_threads(static_cast<int>(parts)) schedule(static)
  for (std::int64_t p = 0; p < parts; ++p) run_chunks(chunks * p / parts, chunks * (p + 1) / parts);
}

namespace {
thread_local bool t_repeated_shapes = false;
}  // namespace

cpu::RepeatedShapes::RepeatedShapes() : was_(t_repeated_shapes) { t_repeated_shapes = true; }
cpu::RepeatedShapes::~RepeatedShapes() { t_repeated_shapes = was_; }
bool cpu::repeated_shapes() { return t_repeated_shapes; }

namespace {
// Pieces of a product cut along a dimension of length `len`: each at least kMinSlabMnk multiply-adds and
// `min_len` long, at most max(6, the processors OpenMP sees). The shape and the machine decide, never the
// thread count (gemm.hpp).
std::int64_t slab_count(std::int64_t mnk, std::int64_t len, std::int64_t min_len) {
  static const std::int64_t most = std::max(6, omp_get_num_procs());
  return std::min({std::max<std::int64_t>(mnk / cpu::kMinSlabMnk, 1), std::max<std::int64_t>(len / min_len, 1), most});
}
}  // namespace

std::int64_t cpu::split_k_parts(std::int64_t m, std::int64_t n, std::int64_t k) {
  return slab_count(m * n * k, k, kMinSplitKLen);
}

std::int64_t cpu::gemm_chunks(std::int64_t m, std::int64_t n, std::int64_t k) {
  return slab_count(m * n * k, std::max(m, n), kMinChunkLen);
}

namespace {

using cpu::sgemm;

void gemm_plan_cpu(const Plan& p, bool ta, bool tb, float alpha, const float* a, std::int64_t lda, const float* b,
                   std::int64_t ldb, float beta, float* c) {
  if (!p.batched) return sgemm(ta, tb, p.m, p.n, p.k, alpha, a, lda, b, ldb, beta, c, p.n);
  if (p.shared_b && !ta) return sgemm(false, tb, p.batch * p.m, p.n, p.k, alpha, a, lda, b, ldb, beta, c, p.n);
  const std::int64_t sa = p.m * p.k, sb = p.shared_b ? 0 : p.k * p.n, sc = p.m * p.n;
  const bool small = p.m * p.n * p.k <= (std::int64_t{1} << 21);
  if (small && p.batch > 1 && num_threads() > 1 && !omp_in_parallel()) {
    profile::count_parallel_region();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < p.batch; ++i)
      sgemm(ta, tb, p.m, p.n, p.k, alpha, a + i * sa, lda, b + i * sb, ldb, beta, c + i * sc, p.n);
  } else {
    for (std::int64_t i = 0; i < p.batch; ++i)
      sgemm(ta, tb, p.m, p.n, p.k, alpha, a + i * sa, lda, b + i * sb, ldb, beta, c + i * sc, p.n);
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& c) {
  TOPO_PROFILE(Gemm);
  const Plan p = plan_for(a, b, trans_a, trans_b, "gemm");
  check_dtype(c, DType::F32, "gemm", "c");
  check_same_device(a, c, "gemm");
  TOPO_CHECK(c.shape() == p.c_shape, "gemm: c is {} but {}{} @ {}{} is {}", shape_str(c.shape()),
             shape_str(a.shape()), trans_a ? "^T" : "", shape_str(b.shape()), trans_b ? "^T" : "",
             shape_str(p.c_shape));
  for (std::int64_t v : {p.batch * p.m, p.n, p.k})
    TOPO_CHECK(v <= (std::int64_t{1} << 31) - 1, "gemm: dimension {} of {} @ {} exceeds the BLAS int range", v,
               shape_str(a.shape()), shape_str(b.shape()));
  if (c.numel() == 0) return;
  if (p.k == 0) {  // empty inner dim: c = beta * c (BLAS rejects a zero leading dim)
    if (beta == 0.f)
      fill_(c, 0.f);
    else
      c.copy_from(mul_scalar(c, beta));
    return;
  }
  const float *ap = a.data<float>(), *bp = b.data<float>();
  float* cp = c.data<float>();
  const std::int64_t lda = a.shape().back(), ldb = b.shape().back();
  TOPO_ON_DEVICE(a.device(), gemm_plan_cpu(p, trans_a, trans_b, alpha, ap, lda, bp, ldb, beta, cp), {
    if (p.shared_b && !trans_a)
      cuda::gemm(false, trans_b, 1, p.batch * p.m, p.n, p.k, alpha, ap, lda, 0, bp, ldb, 0, beta, cp, p.n, 0);
    else
      cuda::gemm(trans_a, trans_b, p.batch, p.m, p.n, p.k, alpha, ap, lda, p.m * p.k, bp, ldb,
                 p.shared_b ? 0 : p.k * p.n, beta, cp, p.n, p.m * p.n);
  });
}

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  TOPO_PROFILE(Gemm);
  const Plan p = plan_for(a, b, trans_a, trans_b, "matmul");
  Tensor c = Tensor::empty(p.c_shape, DType::F32, a.device());
  gemm(trans_a, trans_b, 1.f, a, b, 0.f, c);
  return c;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_dtype(bias, DType::F32, "linear", "bias");
  const Plan p = plan_for(x, weight, false, true, "linear");
  Tensor c = Tensor::empty(p.c_shape, DType::F32, x.device());
  linear_into(x, weight, bias, c);
  return c;
}

void linear_into(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& out) {
  TOPO_PROFILE(Gemm);
  TOPO_CHECK(x.ndim() == 2 && weight.ndim() == 2 && (!bias.defined() || (bias.ndim() == 1 && bias.size(0) == weight.size(0))),
             "linear: expected x [N, in], weight [out, in] and bias [out], got {}, {} and {}", x.str(), weight.str(),
             bias.defined() ? bias.str() : "none");
  const Plan p = plan_for(x, weight, false, true, "linear");
  TOPO_CHECK(out.shape() == p.c_shape, "linear: output must be {}, got {}", shape_str(p.c_shape), out.str());
  if (out.numel() == 0) return;
  if (!bias.defined()) return gemm(false, true, 1.f, x, weight, 0.f, out);
  check_dtype(bias, DType::F32, "linear", "bias");
  check_same_device(x, bias, "linear");
  const std::int64_t rows = p.m, cols = p.n;
  if (x.device().is_cpu()) {
    const float* b = bias.data<float>();
    float* cp = out.data<float>();
    parallel_for(rows, cols, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) std::copy_n(b, cols, cp + r * cols);
    });
  } else {  // the bias rows as a rank-1 product: ones [N, 1] @ bias [1, out]
    gemm(false, false, 1.f, Tensor::full({rows, 1}, 1.f, x.device()), bias.reshape({1, cols}), 0.f, out);
  }
  gemm(false, true, 1.f, x, weight, 1.f, out);
}

}  // namespace topo
