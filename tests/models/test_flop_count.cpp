// Model FLOP counts (models/<folder>/flop_count.hpp) against hand counts for tiny configs: two sentences of
// 3 and 5 tokens (8 tokens), hidden d = 4. A product [rows, in] x [in, out] counts 2 * rows * in * out.
#include "models/big_transformer/flop_count.hpp"
#include "models/multiscale_transformer/flop_count.hpp"
#include "models/star_transformer/flop_count.hpp"
#include "models/transformer/flop_count.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::models;

namespace {
const std::vector<std::int64_t> kFlopLengths = {3, 5};
}

TEST_CASE("star_flops: projections over satellites, sources and relays plus 4d per edge, backward twice") {
  StarConfig c;
  c.encoder = {.vocab_size = 10, .hidden = 4, .heads = 2, .layers = 2, .max_length = 8};
  // One layer: satellites q, o on 8 rows: 2 x 2*8*4*4 = 512; k, v on 8 sat + 8 emb + 2 relay = 18 rows:
  // 2 x 2*18*16 = 1152. Relay q, o on 2 rows: 128; k, v on 8 sat + 2 relay = 10 rows: 640. Edges: each
  // token reads prev, self, next (closed ring), its embedding and its relay: 5 * 8 = 40; each relay reads its
  // tokens and itself: 8 + 2 = 10; 4 * d * 50 = 800. Layer: 3232 (= 16 n d^2 + 12 b d^2 + 800).
  const FlopCount f = star_flops(c, kFlopLengths);
  CHECK(f.forward == 2 * 3232.0);
  CHECK(f.backward == 2 * f.forward);
  CHECK(f.train_step() == 3 * f.forward);

  // No-ring: 2 fewer edges per token (16), 4 * 4 * 16 = 256 fewer per layer.
  c.variant = StarVariant::NoRing;
  CHECK(star_flops(c, kFlopLengths).forward == 2 * (3232.0 - 256));
  c.variant = StarVariant::Full;
  // A token table of width 6 projected to 4: 2 * 8 * 6 * 4 = 384 more.
  c.encoder.embedding_dim = 6;
  CHECK(star_flops(c, kFlopLengths).forward == 2 * 3232.0 + 384);
  CHECK_THROWS_AS(star_flops(c, {3, 0}), topo::Error);
}

TEST_CASE("transformer_flops: 8 n d^2 projections, 4 n d f feed-forward, 4 n^2 d attention per sentence") {
  TransformerConfig c;
  c.encoder = {.vocab_size = 10, .hidden = 4, .heads = 2, .layers = 1, .max_length = 8};
  // q, k, v, o: 4 x 2*8*4*4 = 1024; feed-forward 4 -> 16 -> 4: 2 x 2*8*4*16 = 2048; attention
  // 4 * (3^2 + 5^2) * 4 = 544. Total 3616 = 24 n d^2 + 4 d sum(n^2): the count at f = 4d.
  CHECK(transformer_flops(c, kFlopLengths).forward == 3616.0);
  c.ffn = 8;  // feed-forward 4 -> 8 -> 4: 1024
  c.encoder.layers = 2;
  CHECK(transformer_flops(c, kFlopLengths).forward == 2 * (1024.0 + 1024 + 544));
}

TEST_CASE("multiscale_flops: projections over positions with [CLS], 4 d_h per edge and head of each scale") {
  MultiScaleConfig c;
  c.encoder = {.vocab_size = 10, .hidden = 4, .heads = 2, .layers = 1, .max_length = 8};
  c.scales = parse_scales("1,3");
  // One layer (the top one: heads uniform, 1 per scale). Positions: 3 + 1 and 5 + 1 = 10: q, k, v, o
  // 4 x 2*10*4*4 = 1280. Scale 1: 10 self edges; scale 3, clipped at each sentence's ends: 2+3+3+2 and
  // 2+3+3+3+3+2 = 26 edges. 4 * 2 * (1 * 10 + 1 * 26) = 288.
  CHECK(multiscale_flops(c, kFlopLengths).forward == 1280.0 + 288);
  // Per scale: 4 * 2 * 10 = 80 for scale 1, 4 * 2 * 26 = 208 for scale 3.
  CHECK(multiscale_window_flops(c, kFlopLengths) == std::vector<double>{80.0, 208.0});
  // "N/2" is a fraction: ceil(3/2) = 2 -> 3 and ceil(5/2) = 3, so the same windows as constant 3 here.
  c.scales = parse_scales("1,N/2");
  CHECK(multiscale_window_flops(c, kFlopLengths) == std::vector<double>{80.0, 208.0});
}

TEST_CASE("big_flops: q, o on chars, k, v on words and sentences, W_s, feed-forward, 4d per char-block edge") {
  BigConfig c;
  c.encoder = {.vocab_size = 10, .hidden = 4, .heads = 2, .layers = 1};
  // One sentence of 3 characters with words [0, 1] and [1, 2]: char 0 reads word 0 and the sentence node,
  // char 1 both words and the sentence, char 2 word 1 and the sentence: 7 edges over 3 sources.
  const BigTopology t = big_topology({3}, {{{0, 1}, {1, 2}}}, BigVariant::Full);
  REQUIRE(t.chars.num_edges() == 7);
  // q, o: 2 x 2*3*4*4 = 192; k, v on 3 sources: 192; W_s on 1 row: 32; feed-forward 4 -> 16 -> 4:
  // 2 x 2*3*4*16 = 768; attention 4 * 4 * 7 = 112. Total 1296.
  CHECK(big_flops(c, t).forward == 1296.0);
  CHECK(big_flops(c, t).backward == 2592.0);
}
