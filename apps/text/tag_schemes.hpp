#pragma once
// Chunk tag schemes for sequence labelling (NER) and the conversions between them.
//
// A tag is "O", or PREFIX-TYPE (split at the first '-', as conlleval does: "B-PER.NAM" -> B, PER.NAM), or a bare
// tag without '-' (POS tags: no chunks). Schemes:
//   IOB1  (CoNLL-2003 original): I-X inside a chunk; B-X only where a chunk follows one of the same type.
//   IOB2  (= BIO): B-X starts every chunk, I-X continues it.
//   BIOES (BMES is its spelling with M for I): B-X I-X.. E-X for a chunk of >= 2 tokens, S-X for one token.
// Chunks are read with conlleval's start/end rules (chunk_starts / chunk_ends below), extended for BIOES by
// treating E and S as ends and S as a start; every scheme converts through the chunk list, so IOB1 <-> IOB2
// <-> BIOES round-trips exactly on well-formed input.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace topo::text {

enum class TagScheme { IOB1, IOB2, BIOES, BMES, None };
// "iob1" | "iob2" (also "bio") | "bioes" | "bmes" | "none"; anything else is a topo::Error naming the value.
TagScheme parse_tag_scheme(const std::string& name);
const char* tag_scheme_name(TagScheme scheme);

// A tag's two parts as conlleval splits them: "B-PER" -> {"B", "PER"}, "O" -> {"O", ""}, "NN" -> {"NN", ""}.
struct TagParts {
  std::string_view prefix, type;
};
TagParts split_tag(std::string_view tag);

// conlleval's endOfChunk(prevTag, tag, prevType, type): does a chunk end between the previous token and this
// one? And startOfChunk: does one start at this token? The exact rules of the CoNLL script (including its
// '[', ']' and '.' tags); sentence boundaries are passed as prefix "O", type "".
bool chunk_ends(std::string_view prev_prefix, std::string_view prefix, std::string_view prev_type,
                std::string_view type);
bool chunk_starts(std::string_view prev_prefix, std::string_view prefix, std::string_view prev_type,
                  std::string_view type);

// A chunk: tokens [begin, end) of one sentence, of one type.
struct Chunk {
  std::int64_t begin = 0, end = 0;
  std::string type;
  bool operator==(const Chunk& o) const { return begin == o.begin && end == o.end && type == o.type; }
};
// The chunks of one sentence's tags: IOB1 and IOB2 alike with conlleval's rules, BIOES/BMES with E/S ends;
// None (POS tags) has no chunks.
std::vector<Chunk> tags_to_chunks(const std::vector<std::string>& tags, TagScheme scheme);
// The tags of `length` tokens holding `chunks` (non-overlapping, in order) in `scheme` (not None).
std::vector<std::string> chunks_to_tags(const std::vector<Chunk>& chunks, std::int64_t length, TagScheme scheme);
// tags_to_chunks then chunks_to_tags (None -> None: the tags unchanged), also when from == to: the result is
// always canonical in `to`, so a sequence a scheme does not allow (an annotation slip such as "O I-PER" in a
// BIO file) comes out as conlleval reads it ("O B-PER") and a valid one unchanged. The tagger trains on these,
// so a CRF's scheme constraints hold for every gold path.
std::vector<std::string> convert_tags(const std::vector<std::string>& tags, TagScheme from, TagScheme to);

// The scheme a corpus is written in: BIOES/BMES when any prefix is E, S or M (BMES when M occurs and I does
// not), None when a tag other than "O" has no '-', IOB1 when some chunk starts with I- (conlleval's
// rules) and no B- follows anything but a chunk of its own type (IOB1 writes B- only there), else IOB2 (a
// BIO file with a few "O I-X" slips, as Weibo's training file has, is IOB2).
TagScheme detect_tag_scheme(const std::vector<std::vector<std::string>>& sentences);

// Whether `tag` belongs to `scheme`: "O", or a typed tag with one of the scheme's prefixes (IOB1, IOB2: B, I;
// BIOES: B, I, E, S, and M, which it reads as I; BMES: B, M, E, S). Every tag belongs to None (free-form tags).
bool tag_in_scheme(std::string_view tag, TagScheme scheme);
// The prefixes `scheme` has, for messages: "B, I" / "B, I, M, E, S" / "B, M, E, S" ("" for None).
const char* scheme_prefixes(TagScheme scheme);

// Whether tag `next` may follow tag `prev` in a well-formed sequence of `scheme` (the CRF's constraints):
//   IOB2   I-X only after B-X or I-X;           IOB1  B-X only after B-X or I-X (a chunk of the same type);
//   BIOES  inside a chunk (after B-X, I-X/M-X) only I-X/M-X or E-X follow; outside it (after O, E, S) only O,
//          B or S;                              None  anything.
bool allowed_transition(std::string_view prev, std::string_view next, TagScheme scheme);

// Capitalisation class of a word (the feature beside uncased word vectors): 0 lower (no uppercase ASCII letter,
// also punctuation and non-ASCII), 1 Upper (only the first letter upper), 2 ALLCAPS (>= 2 letters, all upper),
// 3 mixed (any other use of capitals), 4 digits (contains an ASCII digit; checked first).
inline constexpr std::int64_t kCaseClasses = 5;
std::int64_t case_class(std::string_view word);

}  // namespace topo::text
