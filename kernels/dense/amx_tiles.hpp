#pragma once
// The AMX tile pieces the own bf16 GEMM (gemm_amx.cpp) is made of, shared with the bf16 attention on AMX
// (flash_attention_amx.cpp). Internal to kernels/dense; call only where cpu::amx_gemm_supported(), and between
// configure_tiles() and release_tiles() on the calling thread. Defined in gemm_amx.cpp (x86-64 builds).
//
// Layouts. A tile is 16 rows of 64 bytes (kTileElems bf16). op(a) is packed 32 rows at a time into tiles
// [2][tiles_k] (tile (h, t) row r: op(a)[m0 + 16 h + r][32 t .. 32 t + 31]); op(b) into tiles [tiles_n][tiles_k]
// in AMX's VNNI layout (tile (n, t) row r: for each of its 16 columns the pair op(b)[32 t + 2r][.],
// op(b)[32 t + 2r + 1][.]). Both are rounded fp32 -> bf16 (nearest even) while packed, and zero past the
// operand's edges (rows, columns and k), so a padded block adds exact zeros.
#include <cstdint>

// Function-level targets: the files compile in every x86-64 build and run only where amx_gemm_supported().
#define TOPO_AMX_TARGET __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

namespace topo::cpu::amx_tiles {

inline constexpr std::int64_t kTileElems = 512;  // one tile: 16 rows x 64 bytes = 16 x 32 bf16
inline constexpr std::int64_t kBlock = 32;       // rows and columns of c per 2 x 2 block of tiles

// Tiles 0-7 as 16 x 64 bytes (palette 1); release_tiles() frees the thread's tile state.
TOPO_AMX_TARGET void configure_tiles();
TOPO_AMX_TARGET void release_tiles();

// Columns [n0, n0 + 16 tiles_n) of op(b) [k, n] (b stored [k, n], or [n, k] when tb) -> out [tiles_n][tiles_k].
TOPO_AMX_TARGET void pack_b(bool tb, const float* b, std::int64_t ldb, std::int64_t k, std::int64_t n,
                            std::int64_t n0, std::int64_t tiles_n, std::int64_t tiles_k, std::uint16_t* out);

// Rows [m0, m0 + 32) of op(a) [m, k] (a stored [m, k], or [k, m] when ta) -> out [2][tiles_k].
TOPO_AMX_TARGET void pack_a(bool ta, const float* a, std::int64_t lda, std::int64_t m, std::int64_t k,
                            std::int64_t m0, std::int64_t tiles_k, std::uint16_t* out);

// c[rows, cols] (rows, cols <= 32; row stride ldc) = (accumulate ? c : 0) + the packed block of op(a) (2 tiles
// per k tile) times a pair of packed op(b) column tiles (b_pair: tile n then n + 1, each tiles_k long) over
// tiles_k k tiles: a 2 x 2 block of accumulator tiles, stored once.
TOPO_AMX_TARGET void multiply_block(const std::uint16_t* a_block, const std::uint16_t* b_pair, std::int64_t tiles_k,
                                    bool accumulate, float* c, std::int64_t ldc, std::int64_t rows, std::int64_t cols);

}  // namespace topo::cpu::amx_tiles
