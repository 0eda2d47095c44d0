#include "apps/text/tag_pieces.hpp"

#include <algorithm>

#include "kernels/error.hpp"

namespace topo::text {

std::vector<Piece> plan_tag_pieces(const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& documents,
                                   std::int64_t max_length, std::int64_t context) {
  TOPO_CHECK(max_length > 0, "tag pieces: max_length must be > 0, got {}", max_length);
  TOPO_CHECK(context >= 0, "tag pieces: document context must be >= 0, got {}", context);
  TOPO_CHECK(documents.size() == lengths.size(), "tag pieces: {} document ids for {} sentences", documents.size(),
             lengths.size());
  const std::int64_t limit = std::min(context, max_length);
  std::vector<Piece> pieces;
  Piece open;  // the packed piece being filled (context > 0)
  std::int64_t open_tokens = 0;
  const auto close = [&] {
    if (!open.empty()) pieces.push_back(std::move(open));
    open = Piece{};
    open_tokens = 0;
  };
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    const std::int64_t n = lengths[s];
    TOPO_CHECK(n > 0, "tag pieces: sentence {} has {} tokens", s, n);
    const bool packable = context > 0 && documents[s] >= 0 && n <= limit;
    if (packable && !open.empty() &&
        (documents[s] != documents[static_cast<std::size_t>(open.back().sentence)] || open_tokens + n > limit))
      close();
    if (packable) {
      open.push_back({static_cast<std::int64_t>(s), 0, n});
      open_tokens += n;
      continue;
    }
    close();
    for (std::int64_t begin = 0; begin < n; begin += max_length)
      pieces.push_back({{static_cast<std::int64_t>(s), begin, std::min(n - begin, max_length)}});
  }
  close();
  return pieces;
}

}  // namespace topo::text
