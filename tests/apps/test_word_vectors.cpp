// Word-vector loading (apps/text/word_vectors): GloVe and word2vec text, plain and gzip, on small files made
// here (bad lines under both policies, duplicate words, \r\n, a line across the reader's chunks, the
// lowercase fallback), coverage counts, and the real GloVe 6B 50-d subset looked up for MR and SST.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <zlib.h>

#include <cstdio>
#include <ctime>
#include <string>

#include "apps/text/dataset.hpp"
#include "apps/text/vocab.hpp"
#include "apps/text/word_vectors.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;

namespace {

using testing::write_temp_file;

Vocabulary vocab_of(const std::string& text) {
  Dataset d;
  d.examples.push_back(Example{tokenize(text, false), "0", 1});
  return Vocabulary::build({&d});
}

// The [dim] row of a token.
std::vector<float> row(const WordVectors& w, const Vocabulary& v, const std::string& token) {
  const auto first = w.values.begin() + v.id(token) * w.dim;
  return std::vector<float>(first, first + w.dim);
}

// CPU seconds this thread has used (the loader is single-threaded).
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

std::string write_temp_gz(const std::string& name, const std::string& bytes) {
  const std::string path = (testing::fresh_temp_dir("word_vectors_gz") / name).string();
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
  return path;
}

}  // namespace

TEST_CASE("word vectors: GloVe text, plain and gzip alike; first occurrence wins; \\r\\n; blank lines") {
  const Vocabulary v = vocab_of("the rock good");  // <pad> <unk> good rock the
  const std::string text = "the 0.5 -1 2e-1\n\nunseen 1 1 1\nrock 3 4 5\r\nthe 9 9 9\ngood 7 8 9";  // no final \n
  for (const std::string& path : {write_temp_file("glove.txt", text), write_temp_gz("glove.txt.gz", text)}) {
    INFO(path);
    const WordVectors g = load_word_vectors(path, v);
    CHECK(g.dim == 3);
    CHECK(g.vectors == 5);
    CHECK(g.found == 3);
    CHECK(g.duplicates == 1);  // the second "the"
    CHECK(g.bad_lines == 0);
    REQUIRE(g.values.size() == static_cast<std::size_t>(v.size() * 3));
    CHECK(row(g, v, "the") == std::vector<float>{0.5f, -1.f, 0.2f});
    CHECK(row(g, v, "rock") == std::vector<float>{3.f, 4.f, 5.f});  // '\r' is not part of the last value
    CHECK(row(g, v, "good") == std::vector<float>{7.f, 8.f, 9.f});
    CHECK(row(g, v, "<pad>") == std::vector<float>{0.f, 0.f, 0.f});
    CHECK(g.covered == std::vector<std::uint8_t>{0, 0, 1, 1, 1});
  }
}

TEST_CASE("word vectors: a UTF-8 byte order mark opening the file is dropped") {
  // Kept, GloVe's first word matched nothing and a word2vec header was read as a 1-d vector of the word "\uFEFF2".
  const Vocabulary v = vocab_of("the rock");
  const std::string bom = "\xEF\xBB\xBF";
  for (const std::string& text : {bom + "the 1 2\nrock 3 4\n", bom + "2 2\nthe 1 2\nrock 3 4\n"}) {
    const WordVectors g = load_word_vectors(write_temp_file("bom.vec", text), v);
    CHECK(g.dim == 2);
    CHECK(g.found == 2);
    CHECK(g.bad_lines == 0);
    CHECK(row(g, v, "the") == std::vector<float>{1.f, 2.f});
  }
}

TEST_CASE("word vectors: a line longer than the reader's chunk and a file of many chunks") {
  std::string text;
  for (int i = 0; i < 70000; ++i) text += fmt::format("w{} {} 0.25\n", i, i);  // ~1.1 MB
  const Vocabulary v = vocab_of("w0 w31337 w69999");
  for (const std::string& path : {write_temp_file("many.txt", text), write_temp_gz("many.txt.gz", text)}) {
    const WordVectors g = load_word_vectors(path, v);
    CHECK(g.vectors == 70000);
    CHECK(g.found == 3);
    CHECK(row(g, v, "w31337") == std::vector<float>{31337.f, 0.25f});
    CHECK(row(g, v, "w69999") == std::vector<float>{69999.f, 0.25f});
  }
  std::string wide = "wide";
  for (int i = 0; i < 300000; ++i) wide += " 0.125";  // 1.8 MB on one line
  const Vocabulary w = vocab_of("wide");
  const WordVectors g = load_word_vectors(write_temp_gz("wide.txt.gz", wide + "\n"), w);
  CHECK(g.dim == 300000);
  CHECK(g.found == 1);
  CHECK(g.values[static_cast<std::size_t>(w.id("wide") * g.dim + g.dim - 1)] == 0.125f);
}

TEST_CASE("word vectors: malformed lines are reported with path:line and skipped, or rejected by policy") {
  const Vocabulary v = vocab_of("the rock good");
  const std::string text =
      "the 1 2 3\n"
      "rock 1 2\n"              // 2: too few values
      ". . . 7 7 7\n"           // 3: a word containing spaces (GloVe 840B)
      "good 1 x2 3\n"           // 4: not a number
      "rock 1 nan 3\n"          // 5: not finite
      "good 1 2 3 4\n"          // 6: one value too many
      "rock 4 5 6\n";
  for (const std::string& path : {write_temp_file("bad.txt", text), write_temp_gz("bad.txt.gz", text)}) {
    INFO(path);
    const WordVectors g = load_word_vectors(path, v);  // Skip is the default
    CHECK(g.bad_lines == 5);
    CHECK(g.vectors == 2);
    CHECK(g.found == 2);
    CHECK(row(g, v, "rock") == std::vector<float>{4.f, 5.f, 6.f});  // line 7, after its malformed lines
    REQUIRE(g.bad_examples.size() == 5u);
    for (int i = 0; i < 5; ++i)
      CHECK_MESSAGE(g.bad_examples[static_cast<std::size_t>(i)].rfind(path + ":" + std::to_string(i + 2) + ": ", 0) == 0,
                    g.bad_examples[static_cast<std::size_t>(i)]);
    CHECK(g.bad_examples[0].find("expected 3") != std::string::npos);
    CHECK(g.bad_examples[1].find("spaces") != std::string::npos);
    CHECK(g.bad_examples[2].find("'x2'") != std::string::npos);
    CHECK(g.bad_examples[3].find("not finite") != std::string::npos);

    const std::string e = testing::error_of([&] { load_word_vectors(path, v, {false, BadVectorLines::Reject}); });
    INFO(e);
    CHECK(e.find(path + ":2:") != std::string::npos);
    CHECK(e.find("expected 3") != std::string::npos);
  }
  CHECK(parse_bad_vector_lines("reject") == BadVectorLines::Reject);
  CHECK(testing::error_of([] { parse_bad_vector_lines("abort"); }).find("'abort'") != std::string::npos);

  // Many bad lines: all counted, the first few kept.
  std::string many = "the 1 2\n";
  for (int i = 0; i < 25; ++i) many += "x 1 y\n";  // not numbers: 25 lines of one other width would be an error
  const WordVectors m = load_word_vectors(write_temp_file("many_bad.txt", many), v);
  CHECK(m.bad_lines == 25);
  CHECK(m.bad_examples.size() == WordVectors::kMaxBadExamples);
}

TEST_CASE("word vectors: lowercase fallback for cased tokens; an exact match wins whatever the order") {
  const Vocabulary v = vocab_of("The the Rock IBM");
  const std::string path = write_temp_file("lower.txt", "the 1 1\nrock 2 2\nThe 3 3\nibm 4 4\nrock 5 5\n");
  const WordVectors exact = load_word_vectors(path, v);
  CHECK(exact.found == 2);  // the, The
  CHECK(exact.found_lowercase == 0);
  CHECK(row(exact, v, "Rock") == std::vector<float>{0.f, 0.f});
  const WordVectors folded = load_word_vectors(path, v, {true, BadVectorLines::Skip});
  CHECK(folded.found == 4);
  CHECK(folded.found_lowercase == 2);  // Rock, IBM
  CHECK(folded.duplicates == 1);       // the second "rock"
  CHECK(row(folded, v, "the") == std::vector<float>{1.f, 1.f});
  CHECK(row(folded, v, "The") == std::vector<float>{3.f, 3.f});  // its own line, though "the" came first
  CHECK(row(folded, v, "Rock") == std::vector<float>{2.f, 2.f});
  CHECK(row(folded, v, "IBM") == std::vector<float>{4.f, 4.f});

  CHECK_FALSE(exact.uncased);  // "The" has a capital

  // An uncased file (no word with a capital) is looked up lowercased without being asked.
  const std::string uncased_path = write_temp_file("uncased.txt", "the 1 1\nrock 2 2\nrock 5 5\n");
  const WordVectors auto_folded = load_word_vectors(uncased_path, v);
  CHECK(auto_folded.uncased);
  CHECK(auto_folded.found == 3);  // the, The, Rock
  CHECK(auto_folded.found_lowercase == 2);
  CHECK(auto_folded.duplicates == 1);
  CHECK(row(auto_folded, v, "The") == std::vector<float>{1.f, 1.f});
  CHECK(row(auto_folded, v, "Rock") == std::vector<float>{2.f, 2.f});
  // A cased file without the option keeps only exact matches: the folded rows are undone, and so is the
  // duplicate that only a folded row saw.
  const std::string cased_path = write_temp_file("cased.txt", "rock 2 2\nThe 3 3\nrock 5 5\n");
  const WordVectors kept_exact = load_word_vectors(cased_path, v);
  CHECK(kept_exact.found == 1);
  CHECK(kept_exact.found_lowercase == 0);
  CHECK(kept_exact.duplicates == 0);
  CHECK(row(kept_exact, v, "Rock") == std::vector<float>{0.f, 0.f});

  // Coverage: types without <pad>/<unk>; tokens of the sentences, <unk> never covered.
  const VectorCoverage c = vector_coverage(folded, {{v.id("The"), v.id("Rock"), Vocabulary::kUnk}, {v.id("the")}});
  CHECK(c.types == 4);
  CHECK(c.types_found == 4);
  CHECK(c.tokens == 4);
  CHECK(c.tokens_found == 3);
  CHECK(c.to_json().at("tokens_pct").get<double>() == doctest::Approx(75.0));
}

TEST_CASE("word vectors: one load re-indexed for a smaller vocabulary equals a load for it") {
  // The tagger loads once for its vocabulary plus every candidate token, then keeps the covered candidates.
  const Vocabulary all = vocab_of("The the Rock IBM zebra Qwerty");
  const std::string path = write_temp_file("sub.txt", "the 1 1\nrock 2 2\nThe 3 3\nibm 4 4\nrock 5 5\n");
  const WordVectorOptions folded{true, BadVectorLines::Skip};
  const WordVectors loaded = load_word_vectors(path, all, folded);
  const Vocabulary kept = vocab_of("IBM Rock the The");  // another order, zebra and Qwerty (no vector) left out
  const WordVectors direct = load_word_vectors(path, kept, folded);
  const WordVectors sub = vectors_for(loaded, all, kept);
  CHECK(sub.values == direct.values);
  CHECK(sub.covered == direct.covered);
  CHECK(sub.found == direct.found);
  CHECK(sub.found_lowercase == direct.found_lowercase);
  CHECK(sub.duplicates == direct.duplicates);
  CHECK(sub.dim == direct.dim);
  // Dropping a covered token would make the counts lie; a token the load never saw has no row.
  CHECK_THROWS_WITH_AS(vectors_for(loaded, all, vocab_of("IBM Rock the")), doctest::Contains("drops 1 covered"),
                       Error);
  CHECK_THROWS_WITH_AS(vectors_for(loaded, all, vocab_of("IBM Rock the The new")),
                       doctest::Contains("token 'new' is not in the vocabulary"), Error);
}

TEST_CASE("word vectors: word2vec header; unreadable, corrupt and empty files are errors naming the path") {
  const Vocabulary v = vocab_of("good");
  const WordVectors w = load_word_vectors(write_temp_file("w2v.txt", "2 2\ngood 1 2\nzzz 3 4\n"), v);
  CHECK(w.dim == 2);
  CHECK(w.found == 1);
  CHECK(row(w, v, "good") == std::vector<float>{1.f, 2.f});

  auto check_error = [&](const std::string& path, const std::string& what) {
    const std::string e = testing::error_of([&] { load_word_vectors(path, v); });
    INFO("error: " << e);
    CHECK(e.find(path) != std::string::npos);
    CHECK(e.find(what) != std::string::npos);
  };
  check_error(write_temp_file("short.txt", "3 2\na 1 2\n"), "declares 3");
  check_error("/nonexistent/vectors.txt", "cannot open");
  check_error(write_temp_file("empty.txt", "\n\n"), "no word vectors");
  check_error(write_temp_file("words.txt", "a\nb\n"), "no word vectors");  // two bad lines, nothing else
  // A header's dimension alone allocates nothing: this one asked for 10^12 bytes before its first line.
  check_error(write_temp_file("huge_dim.txt", "1 38000000000\ngood 1 2\n"), "no word vectors (1 bad lines)");
  // A first line cut short fixed the width, and the good lines after it were skipped: a run trained on 1 vector.
  check_error(write_temp_file("cut_first.txt", "good 1\na 1 2\nb 1 2\n"),
              "2 lines have 2 values, more than the 1 read with the 1 that line 1 set (is line 1 malformed?)");
  check_error(write_temp_file("wrong_header.txt", "4 3\ngood 1 2 3\na 1 2\nb 1 2\nc 1 2\n"), "line 1 set");
  // One line longer than the read buffer (sized to the 100-byte compressed file): the buffer grows.
  {
    std::string line = "good";
    for (int i = 0; i < 5000; ++i) line += i == 4999 ? " 2.5" : " 0.5";
    const WordVectors wide = load_word_vectors(write_temp_gz("wide.txt.gz", line + "\n"), v);
    CHECK(wide.dim == 5000);
    CHECK(wide.found == 1);
    CHECK(row(wide, v, "good").back() == 2.5f);
  }
  // A gzip stream cut short is a read error, not a silently shorter file.
  std::string text;
  for (int i = 0; i < 5000; ++i) text += fmt::format("w{} 0.5 1.5\n", i);  // not "w" + ...: GCC 12's -Wrestrict
  const std::string gz = write_temp_gz("cut.txt.gz", text);
  std::string bytes;
  {
    std::FILE* f = std::fopen(gz.c_str(), "rb");
    REQUIRE(f != nullptr);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.append(buf, n);
    std::fclose(f);
  }
  check_error(write_temp_file("cut.txt.gz", bytes.substr(0, bytes.size() / 2)), "cannot read");
}

TEST_CASE("word vectors: the GloVe 6B 50-d subset (71k x 50, gzip) for the MR and SST vocabularies") {
  const std::string glove = testing::shared_data_path("glove6b50d/glove.6B.50d.subset.txt.gz");
  struct Case {
    std::string name, format;
    std::string path;
    ReadOptions read;
  };
  ReadOptions latin1;
  latin1.encoding = TextEncoding::Latin1;
  const Case cases[] = {{"MR", "mtl", testing::shared_data_path("mtl16/MR.task.train"), latin1},
                        {"SST", "sst", testing::shared_data_path("sst/trees/train.txt"), ReadOptions{}}};
  for (const Case& c : cases) {
    const Dataset d = read_dataset(c.format, c.path, c.read);
    const Vocabulary v = Vocabulary::build({&d});
    std::vector<std::vector<std::int64_t>> ids;
    for (const Example& e : d.examples) ids.push_back(v.encode(e.tokens));
    std::int64_t found_by_default = -1;
    for (const bool lower : {false, true}) {
      const double cpu0 = thread_cpu_seconds();
      const WordVectors g = load_word_vectors(glove, v, {lower, BadVectorLines::Reject});
      const double cpu = thread_cpu_seconds() - cpu0;
      const VectorCoverage cov = vector_coverage(g, ids);
      const std::string line = c.name + (lower ? " lowercase fallback asked: " : " default: ") + cov.to_json().dump() +
                               ", loaded in " + std::to_string(g.seconds * 1e3) + " ms wall, " +
                               std::to_string(cpu * 1e3) + " ms CPU";
      MESSAGE(line);
      CHECK(g.dim == 50);
      CHECK(g.vectors == 71144);
      CHECK(g.bad_lines == 0);
      CHECK(g.uncased);  // so the lowercased look-up is on either way: asking for it changes nothing
      if (lower) {
        CHECK(g.found == found_by_default);
      } else {
        found_by_default = g.found;
      }
      if (c.name == "SST") CHECK(g.found_lowercase > 0);  // MR's text is lowercase already
      CHECK(cov.types_found > cov.types / 2);
      CHECK(cov.tokens_found > cov.tokens * 8 / 10);
    }
  }
}
