#pragma once
// Byte-level text decoding and whitespace tokenization for the text pipeline (issue #6).
//
// Data files are read as raw bytes and decoded line by line, so a broken UTF-8 sequence (MTL-16 dvd line 905)
// or a Latin-1 file (MTL-16 MR) never aborts a run: the result is always valid UTF-8.
#include <string>
#include <string_view>
#include <vector>

namespace topo::text {

enum class TextEncoding { Utf8, Latin1 };

// "utf8" | "latin1"; anything else is a topo::Error naming the value and the valid ones.
TextEncoding parse_text_encoding(const std::string& name);
// The inverse: "utf8" | "latin1".
const char* text_encoding_name(TextEncoding encoding);

// One line of bytes -> valid UTF-8, with one trailing '\r' stripped (CRLF files).
// Utf8: well-formed sequences are kept; each maximal invalid subpart (Unicode "substitution of maximal
// subparts", as WHATWG/ICU do) becomes U+FFFD and sets *had_invalid (when non-null).
// Latin1: each byte maps to the code point of the same value (never invalid).
std::string decode_line(std::string_view bytes, TextEncoding encoding, bool* had_invalid = nullptr);

// `bytes` without a leading UTF-8 byte order mark (EF BB BF), which Windows editors write at a file's start. Kept,
// it glued an invisible U+FEFF to the first field: CoNLL's first "-DOCSTART-" became a word, a vector file's first
// word matched nothing, MTL-16's first label '1' was "not a label". The readers drop it from a file's first line.
std::string_view without_utf8_bom(std::string_view bytes);

// How text becomes tokens: words between ASCII whitespace, or Unicode characters (code points; Chinese text,
// BiG-Transformer's char nodes).
enum class Tokenization { Whitespace, Characters };
// "whitespace" | "char"; anything else is a topo::Error naming the value and the valid ones.
Tokenization parse_tokenization(const std::string& name);
const char* tokenization_name(Tokenization tokenization);

// Splits on ASCII whitespace (space, \t, \n, \v, \f, \r); runs count once, no empty tokens. `lowercase`
// folds ASCII A-Z only (non-ASCII bytes are left alone, so UTF-8 stays valid).
std::vector<std::string> tokenize(std::string_view text, bool lowercase);
// One token per code point of valid UTF-8 (decode_line's output), whitespace dropped (ASCII whitespace and
// U+3000 IDEOGRAPHIC SPACE); a U+FFFD that decoding substituted stays a token. `lowercase` as tokenize.
std::vector<std::string> split_characters(std::string_view text, bool lowercase);
// tokenize or split_characters.
std::vector<std::string> tokenize(std::string_view text, Tokenization tokenization, bool lowercase);

// Folds ASCII A-Z to a-z in place (the `lowercase` reading option and the word-vector look-up share it).
void ascii_lower(std::string& s);

}  // namespace topo::text
