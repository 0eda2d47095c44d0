// Label sets, vocabularies (ordering, min_freq/max_size, JSON and checkpoint round trips) and batching
// (word-vector loading: test_word_vectors.cpp).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "apps/text/batching.hpp"
#include "apps/text/vocab.hpp"
#include "nn/checkpoint.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;
namespace fs = std::filesystem;
using V = std::vector<std::string>;

namespace {

using testing::write_temp_file;

Dataset make_dataset(const std::vector<std::pair<std::string, std::string>>& rows) {
  Dataset d;
  for (const auto& [label, text] : rows) d.examples.push_back(Example{tokenize(text, false), label, 0});
  return d;
}

struct Tiny : nn::Module {
  nn::Var w;
  Tiny() { w = register_parameter("w", {2, 3}, nn::init::InitSpec::constant(0.5f)); }
};

}  // namespace

TEST_CASE("text labels: integer labels in numeric order, others in byte order; unknown is an error") {
  const Dataset a = make_dataset({{"10", "x"}, {"2", "y"}}), b = make_dataset({{"0", "z"}, {"2", "w"}});
  const LabelSet numeric = LabelSet::build({&a, &b});
  CHECK(numeric.names() == V{"0", "2", "10"});
  CHECK(numeric.id("10") == 2);
  CHECK(numeric.name(1) == "2");
  CHECK(LabelSet::build({&b, &a}).names() == numeric.names());  // independent of data set order
  const LabelSet words(V{"pos", "neg", "neutral", "neg"});
  CHECK(words.names() == V{"neg", "neutral", "pos"});
  CHECK(words.size() == 3);
  const std::string e = testing::error_of([&] { words.id("positive"); });
  CHECK(e.find("positive") != std::string::npos);
  CHECK_FALSE(testing::error_of([&] { words.name(3); }).empty());
  // JSON keeps the stored order (ids must not move), and rejects duplicates and non-strings.
  const LabelSet back = LabelSet::from_json(nlohmann::json{{"labels", {"b", "a"}}});
  CHECK(back.id("b") == 0);
  CHECK(LabelSet::from_json(numeric.to_json()).names() == numeric.names());
  CHECK_FALSE(testing::error_of([] { LabelSet::from_json(nlohmann::json{{"labels", {"a", "a"}}}); }).empty());
  CHECK_FALSE(testing::error_of([] { LabelSet::from_json(nlohmann::json{{"labels", {1}}}); }).empty());
  CHECK_FALSE(testing::error_of([] { LabelSet::from_json(nlohmann::json::array()); }).empty());
}

TEST_CASE("text vocab: <pad>=0, <unk>=1, then by descending count with ties in byte order") {
  // counts: the 4, a 2, b 2, cat 1, Dog 1
  const Dataset d = make_dataset({{"1", "the cat the b"}, {"0", "the a Dog the"}, {"1", "a b"}});
  const Vocabulary v = Vocabulary::build({&d});
  CHECK(v.tokens() == V{"<pad>", "<unk>", "the", "a", "b", "Dog", "cat"});
  CHECK(v.id("the") == 2);
  CHECK(v.id("zebra") == Vocabulary::kUnk);
  CHECK(v.token(Vocabulary::kPad) == "<pad>");
  CHECK(v.contains("Dog"));
  CHECK_FALSE(v.contains("dog"));
  CHECK(v.encode(V{"the", "zebra", "cat"}) == std::vector<std::int64_t>{2, 1, 6});
  CHECK_FALSE(testing::error_of([&] { v.token(v.size()); }).empty());

  const Vocabulary frequent = Vocabulary::build({&d}, 2);
  CHECK(frequent.tokens() == V{"<pad>", "<unk>", "the", "a", "b"});
  CHECK(frequent.id("cat") == Vocabulary::kUnk);
  CHECK(Vocabulary::build({&d}, 1, 4).tokens() == V{"<pad>", "<unk>", "the", "a"});
  CHECK_FALSE(testing::error_of([&] { Vocabulary::build({&d}, 0); }).empty());

  // Literal "<unk>" in the text does not create a second entry.
  const Dataset special = make_dataset({{"0", "<unk> <unk> x"}});
  CHECK(Vocabulary::build({&special}).tokens() == V{"<pad>", "<unk>", "x"});
}

TEST_CASE("text vocab: JSON round trip is exact; malformed JSON is an error") {
  const Dataset d = make_dataset({{"1", "b a c a"}, {"0", "\xC3\xA9t\xC3\xA9 a"}});
  const Vocabulary v = Vocabulary::build({&d});
  const Vocabulary back = Vocabulary::from_json(nlohmann::json::parse(v.to_json().dump()));
  CHECK(back.tokens() == v.tokens());
  CHECK(back.id("\xC3\xA9t\xC3\xA9") == v.id("\xC3\xA9t\xC3\xA9"));
  for (const nlohmann::json& bad :
       {nlohmann::json::array(), nlohmann::json{{"tokens", "a"}}, nlohmann::json{{"tokens", {"<pad>", "<unk>", 3}}},
        nlohmann::json{{"tokens", {"<unk>", "<pad>"}}}, nlohmann::json{{"tokens", {"<pad>", "<unk>", "a", "a"}}},
        nlohmann::json{{"words", {"<pad>", "<unk>"}}}}) {
    CAPTURE(bad.dump());
    CHECK_FALSE(testing::error_of([&] { Vocabulary::from_json(bad); }).empty());
  }
}

TEST_CASE("text vocab: vocabulary and labels survive a round trip through checkpoint metadata") {
  const Dataset d = make_dataset({{"pos", "good fine good"}, {"neg", "bad awful bad bad"}});
  const Vocabulary v = Vocabulary::build({&d});
  const LabelSet labels = LabelSet::build({&d});
  const fs::path path = fs::temp_directory_path() / ("topo_text_ckpt_" + std::to_string(::getpid()) + ".ckpt");
  Tiny model;
  nn::save_checkpoint(path.string(), model, nullptr, nullptr, 5,
                      {{"vocab", v.to_json()}, {"labels", labels.to_json()}});
  const nlohmann::json index = nn::read_checkpoint_index(path.string());
  CHECK(Vocabulary::from_json(index.at("metadata").at("vocab")).tokens() == v.tokens());
  Tiny restored;
  const nn::CheckpointInfo info = nn::load_checkpoint(path.string(), restored, nullptr, nullptr);
  const LabelSet back = LabelSet::from_json(info.metadata.at("labels"));
  CHECK(back.names() == labels.names());
  CHECK(back.id("pos") == labels.id("pos"));
  fs::remove(path);
}

TEST_CASE("text batching: every index once, deterministic in (seed, epoch), batches length-sorted") {
  for (const std::int64_t n : testing::kAwkwardSizes) {
    for (const std::int64_t batch : {1, 4, 32}) {
      std::vector<std::int64_t> lengths(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) lengths[static_cast<std::size_t>(i)] = (i * 37) % 23 + 1;
      const auto batches = length_bucketed_batches(lengths, batch, 7, 0, 3);
      std::vector<std::int64_t> all;
      for (const auto& b : batches) {
        CHECK(!b.empty());
        CHECK(static_cast<std::int64_t>(b.size()) <= batch);
        for (std::size_t k = 1; k < b.size(); ++k)
          CHECK(lengths[static_cast<std::size_t>(b[k - 1])] <= lengths[static_cast<std::size_t>(b[k])]);
        all.insert(all.end(), b.begin(), b.end());
      }
      std::sort(all.begin(), all.end());
      std::vector<std::int64_t> expected(static_cast<std::size_t>(n));
      std::iota(expected.begin(), expected.end(), std::int64_t{0});
      CHECK(all == expected);
      CHECK(length_bucketed_batches(lengths, batch, 7, 0, 3) == batches);
    }
  }
  std::vector<std::int64_t> lengths(1000);
  for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<std::int64_t>((i * 7919) % 97 + 1);
  const auto e0 = length_bucketed_batches(lengths, 16, 1, 0), e1 = length_bucketed_batches(lengths, 16, 1, 1);
  CHECK(e0 != e1);
  CHECK(length_bucketed_batches(lengths, 16, 2, 0) != e0);
  // Bucketing pays for much less padding than batching in file order: sum over batches of size * (max - min).
  auto padding = [&](const std::vector<std::vector<std::int64_t>>& batches) {
    std::int64_t total = 0;
    for (const auto& b : batches) {
      std::int64_t lo = 1 << 30, hi = 0;
      for (std::int64_t i : b) lo = std::min(lo, lengths[static_cast<std::size_t>(i)]), hi = std::max(hi, lengths[static_cast<std::size_t>(i)]);
      total += static_cast<std::int64_t>(b.size()) * (hi - lo);
    }
    return total;
  };
  CHECK(padding(e0) * 5 < padding(sequential_batches(1000, 16)));
  CHECK_FALSE(testing::error_of([&] { length_bucketed_batches(lengths, 0, 1, 0); }).empty());
}

TEST_CASE("text batching: sequential batches cover 0..count-1 in order") {
  using B = std::vector<std::vector<std::int64_t>>;
  CHECK(sequential_batches(10, 4) == B{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
  CHECK(sequential_batches(0, 4).empty());
  CHECK(sequential_batches(3, 3) == B{{0, 1, 2}});
}
