#include "apps/text/tag_schemes.hpp"

#include "kernels/error.hpp"

namespace topo::text {

TagScheme parse_tag_scheme(const std::string& name) {
  if (name == "iob1") return TagScheme::IOB1;
  if (name == "iob2" || name == "bio") return TagScheme::IOB2;
  if (name == "bioes") return TagScheme::BIOES;
  if (name == "bmes") return TagScheme::BMES;
  if (name == "none") return TagScheme::None;
  fail("unknown tag scheme '{}' (expected iob1, iob2 (bio), bioes, bmes or none)", name);
}

const char* tag_scheme_name(TagScheme scheme) {
  switch (scheme) {
    case TagScheme::IOB1: return "iob1";
    case TagScheme::IOB2: return "iob2";
    case TagScheme::BIOES: return "bioes";
    case TagScheme::BMES: return "bmes";
    case TagScheme::None: return "none";
  }
  return "?";
}

TagParts split_tag(std::string_view tag) {
  const std::size_t dash = tag.find('-');
  if (dash == std::string_view::npos) return {tag, {}};
  return {tag.substr(0, dash), tag.substr(dash + 1)};
}

// Transcribed rule by rule from conlleval.pl (endOfChunk / startOfChunk), duplicates included, so a reader can
// check them against the script line by line.
bool chunk_ends(std::string_view prev, std::string_view tag, std::string_view prev_type, std::string_view type) {
  bool end = false;
  if (prev == "B" && tag == "B") end = true;
  if (prev == "B" && tag == "O") end = true;
  if (prev == "I" && tag == "B") end = true;
  if (prev == "I" && tag == "O") end = true;
  if (prev == "E" && tag == "E") end = true;
  if (prev == "E" && tag == "I") end = true;
  if (prev == "E" && tag == "O") end = true;
  if (prev == "I" && tag == "O") end = true;
  if (prev != "O" && prev != "." && prev_type != type) end = true;
  if (prev == "]") end = true;  // conlleval: '[' and ']' chunks have length 1
  if (prev == "[") end = true;
  return end;
}

bool chunk_starts(std::string_view prev, std::string_view tag, std::string_view prev_type, std::string_view type) {
  bool start = false;
  if (prev == "B" && tag == "B") start = true;
  if (prev == "I" && tag == "B") start = true;
  if (prev == "O" && tag == "B") start = true;
  if (prev == "O" && tag == "I") start = true;
  if (prev == "E" && tag == "E") start = true;
  if (prev == "E" && tag == "I") start = true;
  if (prev == "O" && tag == "E") start = true;
  if (prev == "O" && tag == "I") start = true;
  if (tag != "O" && tag != "." && prev_type != type) start = true;
  if (tag == "[") start = true;
  if (tag == "]") start = true;
  return start;
}

namespace {

bool is_end_prefix(std::string_view p) { return p == "E" || p == "S"; }
bool is_start_prefix(std::string_view p) { return p == "B" || p == "S"; }

// BIOES / BMES: a chunk starts at B or S, after O / E / S, or where the type changes; it ends at E or S, before
// O / B / S, or where the type changes (lenient on ill-formed model output: every non-O token is in a chunk).
bool bioes_ends(std::string_view prev, std::string_view tag, std::string_view prev_type, std::string_view type) {
  return prev != "O" && (is_end_prefix(prev) || tag == "O" || is_start_prefix(tag) || prev_type != type);
}
bool bioes_starts(std::string_view prev, std::string_view tag, std::string_view prev_type, std::string_view type) {
  return tag != "O" && (is_start_prefix(tag) || prev == "O" || is_end_prefix(prev) || prev_type != type);
}

}  // namespace

std::vector<Chunk> tags_to_chunks(const std::vector<std::string>& tags, TagScheme scheme) {
  std::vector<Chunk> chunks;
  if (scheme == TagScheme::None) return chunks;
  const bool bioes = scheme == TagScheme::BIOES || scheme == TagScheme::BMES;
  std::string_view prev = "O", prev_type;
  bool open = false;
  const auto n = static_cast<std::int64_t>(tags.size());
  for (std::int64_t i = 0; i <= n; ++i) {
    // i == n is the sentence boundary, which conlleval reads as an "O" token.
    const TagParts cur = i < n ? split_tag(tags[static_cast<std::size_t>(i)]) : TagParts{"O", {}};
    const bool ends = bioes ? bioes_ends(prev, cur.prefix, prev_type, cur.type)
                            : chunk_ends(prev, cur.prefix, prev_type, cur.type);
    const bool starts = i < n && (bioes ? bioes_starts(prev, cur.prefix, prev_type, cur.type)
                                        : chunk_starts(prev, cur.prefix, prev_type, cur.type));
    if (open && (ends || starts)) {
      chunks.back().end = i;
      open = false;
    }
    if (starts) {
      chunks.push_back({i, i + 1, std::string(cur.type)});
      open = true;
    }
    prev = cur.prefix;
    prev_type = cur.type;
  }
  if (open) chunks.back().end = n;  // conlleval closes whatever is open at the boundary
  return chunks;
}

std::vector<std::string> chunks_to_tags(const std::vector<Chunk>& chunks, std::int64_t length, TagScheme scheme) {
  TOPO_CHECK(scheme != TagScheme::None, "chunks_to_tags: scheme 'none' has no chunks");
  std::vector<std::string> tags(static_cast<std::size_t>(length), "O");
  const char* inside = scheme == TagScheme::BMES ? "M-" : "I-";
  std::int64_t last_end = -1;
  std::string last_type;
  for (const Chunk& c : chunks) {
    TOPO_CHECK(c.begin >= 0 && c.begin < c.end && c.end <= length && c.begin >= last_end,
               "chunks_to_tags: chunk [{}, {}) of '{}' is out of order or outside a sentence of {} tokens", c.begin,
               c.end, c.type, length);
    for (std::int64_t i = c.begin; i < c.end; ++i) tags[static_cast<std::size_t>(i)] = "I-" + c.type;
    switch (scheme) {
      case TagScheme::IOB1:  // B- only where the previous chunk of the same type ends right here
        if (last_end == c.begin && last_type == c.type) tags[static_cast<std::size_t>(c.begin)] = "B-" + c.type;
        break;
      case TagScheme::IOB2:
        tags[static_cast<std::size_t>(c.begin)] = "B-" + c.type;
        break;
      default:  // BIOES / BMES
        if (c.end - c.begin == 1) {
          tags[static_cast<std::size_t>(c.begin)] = "S-" + c.type;
        } else {
          for (std::int64_t i = c.begin + 1; i + 1 < c.end; ++i) tags[static_cast<std::size_t>(i)] = inside + c.type;
          tags[static_cast<std::size_t>(c.begin)] = "B-" + c.type;
          tags[static_cast<std::size_t>(c.end - 1)] = "E-" + c.type;
        }
    }
    last_end = c.end;
    last_type = c.type;
  }
  return tags;
}

std::vector<std::string> convert_tags(const std::vector<std::string>& tags, TagScheme from, TagScheme to) {
  if (from == TagScheme::None && to == TagScheme::None) return tags;
  TOPO_CHECK(from != TagScheme::None && to != TagScheme::None, "cannot convert tags between scheme '{}' and '{}'",
             tag_scheme_name(from), tag_scheme_name(to));
  return chunks_to_tags(tags_to_chunks(tags, from), static_cast<std::int64_t>(tags.size()), to);
}

TagScheme detect_tag_scheme(const std::vector<std::vector<std::string>>& sentences) {
  bool has_m = false, has_i = false, has_es = false, iob1 = false, b_after_other = false;
  for (const auto& tags : sentences) {
    std::string_view prev = "O", prev_type;
    for (const std::string& tag : tags) {
      const TagParts p = split_tag(tag);
      if (tag != "O" && p.type.empty()) return TagScheme::None;
      has_m |= p.prefix == "M";
      has_i |= p.prefix == "I";
      has_es |= p.prefix == "E" || p.prefix == "S";
      if (p.prefix == "I" && chunk_starts(prev, p.prefix, prev_type, p.type)) iob1 = true;
      if (p.prefix == "B" && (prev == "O" || prev_type != p.type)) b_after_other = true;
      prev = p.prefix;
      prev_type = p.type;
    }
  }
  if (has_m && !has_i) return TagScheme::BMES;
  if (has_m || has_es) return TagScheme::BIOES;
  return iob1 && !b_after_other ? TagScheme::IOB1 : TagScheme::IOB2;
}

bool tag_in_scheme(std::string_view tag, TagScheme scheme) {
  if (scheme == TagScheme::None || tag == "O") return true;
  const TagParts p = split_tag(tag);
  if (p.type.empty()) return false;
  switch (scheme) {
    case TagScheme::IOB1:
    case TagScheme::IOB2: return p.prefix == "B" || p.prefix == "I";
    case TagScheme::BIOES: return p.prefix == "B" || p.prefix == "I" || p.prefix == "M" || p.prefix == "E" || p.prefix == "S";
    case TagScheme::BMES: return p.prefix == "B" || p.prefix == "M" || p.prefix == "E" || p.prefix == "S";
    case TagScheme::None: return true;
  }
  return false;
}

const char* scheme_prefixes(TagScheme scheme) {
  switch (scheme) {
    case TagScheme::IOB1:
    case TagScheme::IOB2: return "B, I";
    case TagScheme::BIOES: return "B, I, M, E, S";
    case TagScheme::BMES: return "B, M, E, S";
    case TagScheme::None: return "";
  }
  return "";
}

bool allowed_transition(std::string_view prev, std::string_view next, TagScheme scheme) {
  const TagParts p = split_tag(prev), n = split_tag(next);
  const bool same_type = p.prefix != "O" && p.type == n.type;
  switch (scheme) {
    case TagScheme::IOB2: return n.prefix != "I" || ((p.prefix == "B" || p.prefix == "I") && same_type);
    case TagScheme::IOB1: return n.prefix != "B" || ((p.prefix == "B" || p.prefix == "I") && same_type);
    case TagScheme::BIOES:
    case TagScheme::BMES: {
      const bool inside = p.prefix == "B" || p.prefix == "I" || p.prefix == "M";
      const bool continues = n.prefix == "I" || n.prefix == "M" || n.prefix == "E";
      return inside ? continues && same_type : !continues;
    }
    case TagScheme::None: return true;
  }
  return true;
}

std::int64_t case_class(std::string_view word) {
  int letters = 0, upper = 0;
  bool first_upper = false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const char c = word[i];
    if (c >= '0' && c <= '9') return 4;
    const bool is_upper = c >= 'A' && c <= 'Z';
    if (is_upper || (c >= 'a' && c <= 'z')) {
      if (letters == 0) first_upper = is_upper;
      ++letters;
      upper += is_upper;
    }
  }
  if (upper == 0) return 0;
  if (upper == letters && letters >= 2) return 2;
  if (upper == 1 && first_upper) return 1;
  return 3;
}

}  // namespace topo::text
