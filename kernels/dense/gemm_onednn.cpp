// CPU GEMMs through oneDNN (gemm_onednn.hpp says the contract; gemm_backend.cpp when they run).
//
// fp32: dnnl_sgemm, oneDNN's row-major BLAS-style call (its JIT sgemm), nothing cached.
// bf16: oneDNN 2.6 has no public bf16 GEMM call, so a matmul primitive src [m, k] bf16 x weights [k, n] bf16 ->
// dst [m, n] f32. op(a) and op(b) are described with strides (a transposed operand is a column-major view of
// the compact copy), so no transpose is made here. Two kinds of primitive, chosen by the call site:
//  - by default its dimensions and strides are runtime values (DNNL_RUNTIME_DIM_VAL): one primitive per
//    (transposes, alpha, beta) and thread serves every shape. A primitive made for one shape (oneDNN's brgemm
//    kernels) costs a JIT compilation of 0.8-2.7 ms on the Xeon with AMX, and a training run meets a new shape
//    with nearly every batch length and row slab: MR's Star recipe in bf16 compiled 826 of them in one epoch,
//    1.14 s against 0.23 s of products, and ran 4x slower than in fp32. The runtime-shape primitive (oneDNN's
//    gemm:jit, AMX tiles too) costs 0.03-0.1 ms once and runs 0.7-1.4x the per-shape brgemm (one thread:
//    733x100x100 54 against 33 us, 8192x300x300 2.97 against 2.16 ms, 300x300x8192 1.99 against 2.83 ms);
//  - inside a cpu::RepeatedShapes scope (the fused attention's tiles: a few shapes, thousands of calls, where
//    the runtime-shape kernel made the dense Transformer's attention 1.5x slower) one primitive per shape,
//    kept per thread.
// Either way a product's bits are a function of its shape and its call site, not of the shapes before it (a
// cache that switched kernels after N calls of a shape would make them depend on the thread count and on
// where a resumed run started).
#include "kernels/dense/gemm_onednn.hpp"

#include "kernels/error.hpp"

#if TOPO_WITH_ONEDNN
#include <immintrin.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "kernels/dense/gemm.hpp"
#include "kernels/dense/gemm_bf16.hpp"
#include "kernels/parallel.hpp"
#endif

namespace topo::cpu {

#if TOPO_WITH_ONEDNN

namespace {

// Runs f on one OpenMP thread when called inside a parallel region (cpu::sgemm's slabs, the fused kernels'
// tiles): oneDNN sizes a primitive's work split by omp_get_max_threads() when it is created, which inside a
// region is still the outer count, while the region it would open there has one thread.
template <class F>
void on_callers_threads(F&& f) {
  const bool inner = omp_in_parallel() && omp_get_max_threads() != 1;
  const int outer = omp_get_max_threads();
  if (inner) omp_set_num_threads(1);
  try {
    f();
  } catch (const dnnl::error& e) {
    if (inner) omp_set_num_threads(outer);
    fail("oneDNN: {} (status {})", e.what(), static_cast<int>(e.status));
  }
  if (inner) omp_set_num_threads(outer);
}

// oneDNN 2.x's JIT fp32 GEMM kernels point rsp into a heap workspace while they run (oneDNN issue #4845, fixed
// in 3.12; Debian 12 ships 2.6.3): a signal handled on that thread writes its frame into the heap and malloc aborts
// later, so SIGINT / SIGTERM reaching topo-train mid-GEMM (scripts/stop_signal_test.sh), or Python's Ctrl-C,
// corrupted the process. oneDNN therefore runs with the asynchronous signals held: on the calling thread for
// the call (one that arrives then is handled as the call returns), and for good on the OpenMP workers oneDNN
// threads a call over (the process's signals go to its other threads instead). Signals raised by a fault
// (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS) and abort()'s SIGABRT are left alone. Cost: two
// sigprocmask calls per GEMM, plus a parallel region when oneDNN threads the call itself (TOPO_GEMM_SPLIT=0).
const sigset_t& async_signals() {
  static const sigset_t set = [] {
    sigset_t s;
    sigfillset(&s);
    for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&s, fault);
    return s;
  }();
  return set;
}

void hold_signals_on_openmp_workers() {
  if (omp_in_parallel() || omp_get_max_threads() == 1) return;
#pragma omp parallel
  {
    thread_local bool held = false;  // a worker OpenMP starts later holds them at its first call
    if (omp_get_thread_num() != 0 && !held) {
      pthread_sigmask(SIG_BLOCK, &async_signals(), nullptr);
      held = true;
    }
  }
}

template <class F>
void with_signals_held(F&& f) {
  hold_signals_on_openmp_workers();
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, &async_signals(), &before);
  struct Restore {
    const sigset_t& mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{before};
  f();
}

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

const char* isa_name(dnnl::cpu_isa isa) {
  using dnnl::cpu_isa;
  switch (isa) {
    case cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case cpu_isa::avx512_core: return "avx512_core";
    case cpu_isa::avx2_vnni: return "avx2_vnni";
    case cpu_isa::avx2: return "avx2";
    case cpu_isa::avx: return "avx";
    case cpu_isa::sse41: return "sse41";
    default: return "other";
  }
}

// fp32 -> bf16 bits of rows x cols elements (row stride ld) into a compact [rows][cols] buffer, round to
// nearest even (vcvtneps2bf16, the instruction cpu::sgemm_bf16 packs with). Function-level target: the file
// compiles in every build and this runs only where AVX512_BF16 is present (onednn_sgemm_bf16 checks).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void to_bf16(const float* src, std::int64_t rows,
                                                                              std::int64_t cols, std::int64_t ld,
                                                                              std::uint16_t* dst) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* s = src + i * ld;
    std::uint16_t* d = dst + i * cols;
    std::int64_t j = 0;
    for (; j + 16 <= cols; j += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + j), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(s + j)));
    if (j < cols) {
      const __mmask16 mask = static_cast<__mmask16>((1u << (cols - j)) - 1);
      _mm256_mask_storeu_epi16(d + j, mask, (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mask, s + j)));
    }
  }
}

// A primitive's key: transposes, alpha, beta and, for a per-shape one, the shape and ldc (all zero for the
// runtime-shape primitive of those transposes, alpha and beta).
struct Key {
  bool ta, tb;
  std::int64_t m, n, k, ldc;
  float alpha, beta;
  bool operator==(const Key& o) const {
    return ta == o.ta && tb == o.tb && m == o.m && n == o.n && k == o.k && ldc == o.ldc &&
           std::memcmp(&alpha, &o.alpha, 4) == 0 && std::memcmp(&beta, &o.beta, 4) == 0;
  }
};
struct KeyHash {
  std::size_t operator()(const Key& key) const {
    std::uint32_t ab[2];
    std::memcpy(ab, &key.alpha, 4);
    std::memcpy(ab + 1, &key.beta, 4);
    std::size_t h = static_cast<std::size_t>(key.ta) * 2 + static_cast<std::size_t>(key.tb);
    for (std::uint64_t v : {std::uint64_t(key.m), std::uint64_t(key.n), std::uint64_t(key.k), std::uint64_t(key.ldc),
                            std::uint64_t(ab[0]) << 32 | ab[1]})
      h = (h ^ v) * 0x100000001b3ull;
    return h;
  }
};

// A primitive and, for a per-shape one, its three memory objects, made once (a call sets their data handles);
// a runtime-shape primitive's are made per call, with that call's shape.
struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory a, b, c;
};

// Per thread: its primitives, its stream (a stream is not thread-safe) and its conversion buffers.
struct ThreadState {
  std::unordered_map<Key, Matmul, KeyHash> primitives;
  dnnl::stream stream{cpu_engine()};
  std::vector<std::uint16_t> a, b;
};
// A thread past this many primitives drops them all (a site that claims repeated shapes but meets ever-new ones
// then pays the compile per call instead of growing without bound).
constexpr std::size_t kMaxPrimitivesPerThread = 512;

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// op(a) [m, k] as stored: [m, k] row-major, or [k, m] row-major (transposed); likewise op(b) [k, n]; c [m, n]
// with row stride ldc. The primitive's descriptors have every dimension and stride a runtime value, a call's
// memory objects the concrete ones.
struct MatmulDescs {
  dnnl::memory::desc a, b, c;
};
MatmulDescs matmul_descs(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t ldc) {
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  return {dnnl::memory::desc(dims{m, k}, dt::bf16, ta ? dims{1, m} : dims{k, 1}),
          dnnl::memory::desc(dims{k, n}, dt::bf16, tb ? dims{1, k} : dims{n, 1}),
          dnnl::memory::desc(dims{m, n}, dt::f32, dims{ldc, 1})};
}

// key.m == 0: every dimension and stride a runtime value.
Matmul make_matmul(const Key& key) {
  constexpr std::int64_t R = DNNL_RUNTIME_DIM_VAL;
  const bool any = key.m == 0;
  const MatmulDescs d = matmul_descs(key.ta, key.tb, any ? R : key.m, any ? R : key.n, any ? R : key.k, any ? R : key.ldc);
  dnnl::primitive_attr attr;
  if (key.alpha != 1.f) attr.set_output_scales(0, {key.alpha});
  if (key.beta != 0.f) {
    dnnl::post_ops ops;
    ops.append_sum(key.beta);
    attr.set_post_ops(ops);
  }
  Matmul mm{dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(d.a, d.b, d.c), attr, cpu_engine())), {}, {}, {}};
  if (!any) {
    mm.a = dnnl::memory(d.a, cpu_engine(), DNNL_MEMORY_NONE);
    mm.b = dnnl::memory(d.b, cpu_engine(), DNNL_MEMORY_NONE);
    mm.c = dnnl::memory(d.c, cpu_engine(), DNNL_MEMORY_NONE);
  }
  return mm;
}

}  // namespace

bool onednn_built() { return true; }

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch, isa_name(dnnl::get_effective_cpu_isa()));
}

bool onednn_amx() { return dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx; }

void onednn_sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                  std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  dnnl_status_t status = dnnl_success;
  with_signals_held([&] {
    status = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, std::max<std::int64_t>(lda, 1), b,
                        std::max<std::int64_t>(ldb, 1), beta, c, std::max<std::int64_t>(ldc, 1));
  });
  TOPO_CHECK(status == dnnl_success, "oneDNN sgemm {}x{}x{}: status {}", m, n, k, static_cast<int>(status));
}

void onednn_sgemm_bf16(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                       std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.f) return sgemm_bf16(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  // c = beta c
  TOPO_CHECK(bf16_gemm_cpu_supported(), "oneDNN bf16 GEMM: this CPU does not report AVX512_BF16");
  ThreadState& state = thread_state();
  // a as stored: [m, k] (lda) or [k, m] transposed; b: [k, n] or [n, k] transposed.
  const std::int64_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
  state.a.resize(static_cast<std::size_t>(m * k));
  state.b.resize(static_cast<std::size_t>(k * n));
  // The copies over rows on every thread (serial inside a parallel region, e.g. the fused attention's tiles, and
  // for small operands): converted by one thread, they left the other idle (tn 300x300x2048 at 2 threads: 1.15 ->
  // 1.03 ms, best of four alternated topo-bench gemm_bf16 runs). A wrapper, not a pragma in to_bf16: an OpenMP
  // region's outlined body would not inherit to_bf16's avx512bf16 target.
  const auto convert = [](const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint16_t* dst) {
    parallel_for(rows, cols, [&](std::int64_t begin, std::int64_t end) {
      to_bf16(src + begin * ld, end - begin, cols, ld, dst + begin * cols);
    });
  };
  convert(a, a_rows, a_cols, lda, state.a.data());
  convert(b, b_rows, b_cols, ldb, state.b.data());
  onednn_gemm_bf16_bits(ta, tb, m, n, k, alpha, state.a.data(), state.b.data(), beta, c, ldc);
}

void onednn_gemm_bf16_bits(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                           const std::uint16_t* a, const std::uint16_t* b, float beta, float* c, std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  TOPO_CHECK(k > 0, "oneDNN bf16 GEMM {}x{}x{}: k must be positive", m, n, k);
  on_callers_threads([&] {
    ThreadState& state = thread_state();
    const bool per_shape = repeated_shapes();
    const Key key{ta, tb, per_shape ? m : 0, per_shape ? n : 0, per_shape ? k : 0, per_shape ? ldc : 0, alpha, beta};
    auto it = state.primitives.find(key);
    if (it == state.primitives.end()) {
      if (state.primitives.size() >= kMaxPrimitivesPerThread) state.primitives.clear();
      it = state.primitives.emplace(key, make_matmul(key)).first;
    }
    Matmul& mm = it->second;
    dnnl::memory am = mm.a, bm = mm.b, cm = mm.c;  // handles: the per-shape primitive's own objects
    if (!per_shape) {
      const MatmulDescs d = matmul_descs(ta, tb, m, n, k, ldc);
      am = dnnl::memory(d.a, cpu_engine(), DNNL_MEMORY_NONE);
      bm = dnnl::memory(d.b, cpu_engine(), DNNL_MEMORY_NONE);
      cm = dnnl::memory(d.c, cpu_engine(), DNNL_MEMORY_NONE);
    }
    am.set_data_handle(const_cast<std::uint16_t*>(a));
    bm.set_data_handle(const_cast<std::uint16_t*>(b));
    cm.set_data_handle(c);
    with_signals_held([&] {  // its brgemm or gemm kernels: held as the fp32 ones are
      mm.primitive.execute(state.stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      state.stream.wait();
    });
  });
}

#else  // built without oneDNN

namespace {
[[noreturn]] void absent() { fail("this build has no oneDNN (configured with TOPO_ONEDNN=OFF, or not found)"); }
}  // namespace

bool onednn_built() { return false; }
std::string onednn_version() { return "none"; }
bool onednn_amx() { return false; }
void onednn_sgemm(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t, const float*,
                  std::int64_t, float, float*, std::int64_t) {
  absent();
}
void onednn_sgemm_bf16(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                       const float*, std::int64_t, float, float*, std::int64_t) {
  absent();
}
void onednn_gemm_bf16_bits(bool, bool, std::int64_t, std::int64_t, std::int64_t, float, const std::uint16_t*,
                           const std::uint16_t*, float, float*, std::int64_t) {
  absent();
}

#endif

}  // namespace topo::cpu
