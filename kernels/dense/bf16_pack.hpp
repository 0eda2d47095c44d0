#pragma once
// The fp32 -> bf16 conversions both bf16 GEMM kernels pack with (gemm_bf16.cpp on AVX512_BF16, gemm_amx.cpp on AMX
// tiles): round to nearest even (vcvtne2ps2bf16), into "pair words" (bf16(x[2p]) low, bf16(x[2p+1]) high).
// Function-level targets, as those files have, so every build compiles them; only code that runs where the CPU
// reports AVX512_BF16 may call them (a caller's target must include these features to inline them).
#include <immintrin.h>

#include <cstdint>

#define TOPO_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

namespace topo::cpu::bf16_pack {

// Lanes [0, count) of 16, count clamped to [0, 16].
TOPO_BF16_TARGET inline __mmask16 first_lanes(std::int64_t count) {
  return count >= 16 ? __mmask16(0xffff) : count <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << count) - 1);
}

// The first `count` (clamped to [0, 32]) of 32 consecutive floats as 32 bf16 in order, zero past count: 16 pair
// words of one row whose k is contiguous. Reads nothing past count.
TOPO_BF16_TARGET inline __m512i run32(const float* src, std::int64_t count) {
  const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(count), src);
  const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(count - 16), src + 16);
  return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

// Two k rows of 16 lanes as 16 pair words, lane j = bf16(x0[j]) | bf16(x1[j]) << 16 (the maskz form of the
// permute: GCC 12's unmasked one starts from _mm512_undefined, which -Wmaybe-uninitialized reports once inlined).
TOPO_BF16_TARGET inline __m512i pair_words(__m512 x0, __m512 x1) {
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                                              6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_maskz_permutexvar_epi16(~__mmask32(0), interleave, (__m512i)_mm512_cvtne2ps_pbh(x1, x0));
}

}  // namespace topo::cpu::bf16_pack
