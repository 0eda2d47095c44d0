#pragma once
// The BiG-Transformer's topology (Shu et al.; ../shared/docs/models.md §3): a bipartite heterograph per
// sentence with node types
//   char  (n per sentence)  the character states H
//   word  (m per sentence)  lexicon words, each a span [s_j, e_j] of characters
//   sent  (1 per sentence)  the sentence node
// and relations
//   in        char -> word  c -> j for every c in [s_j, e_j]: the word representation o_j = sum_c h_c
//                           (a copy_u / sum gspmm over `word_sum`)
//   contains  word -> char  j -> c, the same pairs reversed: a character attends over the words containing it
//   from_sent sent -> char  the sentence node -> every character of its sentence
// so each character attends over U_i = [words containing i; s] in one softmax (`chars`). The sentence node's
// own state, mean(H) W_s, is a per-sentence readout (nn::readout_nodes), not an edge set.
//
// Ablations (paper Table VI): no-global drops the sentence node (a character in no word attends over nothing
// and keeps its state through the residual); no-local drops the words (sentence node only); radical replaces
// the lexicon words by adjacent-character edges: every pair [i, i+1] of the sentence is a "word".
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace topo::models {

enum class BigVariant { Full, NoGlobal, NoLocal, Radical };
BigVariant parse_big_variant(const std::string& name);  // "full", "no-global", "no-local", "radical"
std::string big_variant_name(BigVariant variant);
bool uses_lexicon(BigVariant variant);  // full and no-global read lexicon words

// Every adjacent pair [i, i+1] of each sentence (the radical ablation's words; none for a 1-char sentence).
std::vector<std::vector<builders::Span>> adjacent_pairs(const std::vector<std::int64_t>& lengths);

struct BigTopology {
  std::vector<std::int64_t> lengths;      // characters per sentence
  std::vector<std::int64_t> word_counts;  // words per sentence (all 0 under no-local)
  HeteroGraph graph;
  bool has_words = false, has_sentence = false;
  Block word_sum;  // dst word, sources [char]: relation in (only when has_words)
  Block chars;     // dst char, sources [word; sent] (each only when used)
};

// One batched topology for sentences of `lengths` characters (each >= 1) with words at `spans` (one list per
// sentence, 0 <= s <= e < n; ignored under no-local and radical), built in one pass and moved to `device`.
BigTopology big_topology(const std::vector<std::int64_t>& lengths, const std::vector<std::vector<builders::Span>>& spans,
                         BigVariant variant, Device device = Device::cpu());

}  // namespace topo::models
