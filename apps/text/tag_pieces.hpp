#pragma once
// How a tagging file's sentences become the model's input sequences ("pieces"). A piece is one or more spans,
// each a run of one sentence's tokens; the model tags the piece's tokens in order and the predictions go back
// to their sentences, so packing changes what a token sees, never what is scored.
#include <cstdint>
#include <vector>

namespace topo::text {

struct PieceSpan {
  std::int64_t sentence = 0;  // index into the file's sentences
  std::int64_t offset = 0;    // first token of the sentence in this span
  std::int64_t size = 0;      // tokens
};
using Piece = std::vector<PieceSpan>;

// lengths[s]: sentence s's tokens (> 0); documents[s]: its document (-1: none marked), in file order.
// context == 0: each sentence is its own piece, cut into consecutive pieces of at most max_length tokens.
// context > 0: consecutive sentences of one marked document are packed greedily, in order, into pieces of at
// most min(context, max_length) tokens, each sentence whole in one piece, so a sentence is tagged in its
// neighbours' context; a sentence outside a marked document, or too long for the limit, is a piece of its own
// (cut at max_length as above). Every token of every sentence is in exactly one span.
std::vector<Piece> plan_tag_pieces(const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& documents,
                                   std::int64_t max_length, std::int64_t context);

}  // namespace topo::text
