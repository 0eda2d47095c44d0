// The readers on the real data sets in ../shared/data. Expected counts and label distributions are the
// ones stated (and verified independently) in sst/SOURCE.txt and mtl16/SOURCE.txt.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "apps/text/dataset.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;
using testing::shared_data_path;
using V = std::vector<std::string>;

namespace {

std::map<std::string, std::int64_t> label_counts(const Dataset& d) {
  std::map<std::string, std::int64_t> counts;
  for (const Example& e : d.examples) ++counts[e.label];
  return counts;
}

using Counts = std::map<std::string, std::int64_t>;

}  // namespace

TEST_CASE("text data: SST trees, counts and root label distributions per split (SOURCE.txt)") {
  const std::string dir = shared_data_path("sst/trees");
  const std::vector<std::tuple<std::string, std::size_t, Counts, std::size_t, Counts>> splits = {
      {"train", 8544, {{"0", 1092}, {"1", 2218}, {"2", 1624}, {"3", 2322}, {"4", 1288}}, 6920, {{"0", 3310}, {"1", 3610}}},
      {"dev", 1101, {{"0", 139}, {"1", 289}, {"2", 229}, {"3", 279}, {"4", 165}}, 872, {{"0", 428}, {"1", 444}}},
      {"test", 2210, {{"0", 279}, {"1", 633}, {"2", 389}, {"3", 510}, {"4", 399}}, 1821, {{"0", 912}, {"1", 909}}}};
  for (const auto& [split, count, labels, binary_count, binary_labels] : splits) {
    TOPO_CAPTURE(split);
    const Dataset d = read_dataset("sst", dir + "/" + split + ".txt", {});
    CHECK(d.examples.size() == count);
    CHECK(d.stats.invalid_utf8_lines == 0);
    CHECK(label_counts(d) == labels);
    ReadOptions bin;
    bin.sst_binary = true;
    const Dataset b = read_dataset("sst", dir + "/" + split + ".txt", bin);
    CHECK(b.examples.size() == binary_count);
    CHECK(label_counts(b) == binary_labels);
  }
}

TEST_CASE("text data: the first SST train tree's leaves, and subtree mode (root first, 2n-1 nodes)") {
  const std::string p = shared_data_path("sst/trees/train.txt");
  const Dataset d = read_sst_trees(p, {});
  const V first = {"The", "Rock", "is", "destined", "to", "be", "the", "21st", "Century", "'s", "new", "``",
                   "Conan", "''", "and", "that", "he", "'s", "going", "to", "make", "a", "splash", "even",
                   "greater", "than", "Arnold", "Schwarzenegger", ",", "Jean-Claud", "Van", "Damme", "or",
                   "Steven", "Segal", "."};
  REQUIRE(!d.examples.empty());
  CHECK(d.examples[0].tokens == first);
  CHECK(d.examples[0].label == "3");

  ReadOptions sub;
  sub.sst_subtrees = true;
  const auto t0 = std::chrono::steady_clock::now();
  const Dataset s = read_sst_trees(p, sub);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("SST train with subtrees: " << s.examples.size() << " examples read in " << seconds << " s");
  CHECK(s.examples.size() > d.examples.size());
  // The trees are binary, so a sentence of n leaves has 2n-1 labelled nodes; the root comes first.
  std::size_t at = 0;
  for (const Example& root : d.examples) {
    REQUIRE(at < s.examples.size());
    CHECK(s.examples[at].tokens == root.tokens);
    CHECK(s.examples[at].label == root.label);
    CHECK(s.examples[at].line == root.line);
    std::size_t nodes = 0;
    while (at < s.examples.size() && s.examples[at].line == root.line) ++at, ++nodes;
    if (nodes != 2 * root.tokens.size() - 1) {
      CHECK(nodes == 2 * root.tokens.size() - 1);
      break;
    }
  }
  CHECK(at == s.examples.size());

  // Unique subtrees: the same phrases, each once, labelled by the majority of its occurrences (a map here).
  ReadOptions unique = sub;
  unique.sst_unique_subtrees = true;
  const Dataset u = read_sst_trees(p, unique);
  MESSAGE("SST train, unique subtrees: " << u.examples.size() << " phrases, " << u.stats.label_conflicts
                                         << " with more than one label");
  std::map<V, std::map<std::string, std::int64_t>> votes;
  for (const Example& e : s.examples) ++votes[e.tokens][e.label];
  CHECK(u.examples.size() == votes.size());
  CHECK(u.stats.merged_duplicates == static_cast<std::int64_t>(s.examples.size() - votes.size()));
  std::int64_t off_majority = 0;
  for (const Example& e : u.examples) {
    const auto& v = votes.at(e.tokens);
    const auto most = std::max_element(v.begin(), v.end(), [](auto& a, auto& b) { return a.second < b.second; });
    off_majority += v.at(e.label) != most->second;
  }
  CHECK(off_majority == 0);
  CHECK(u.examples.front().tokens == first);
}

TEST_CASE("text data: stsa has the tree counts and, for dev, the same (label, lowercased tokens) multiset") {
  const std::string stsa = shared_data_path("sst/stsa");
  const std::string trees = shared_data_path("sst/trees");
  for (const auto& [split, fine, binary] : std::vector<std::tuple<std::string, std::size_t, std::size_t>>{
           {"train", 8544, 6920}, {"dev", 1101, 872}, {"test", 2210, 1821}}) {
    TOPO_CAPTURE(split);
    CHECK(read_dataset("sst-stsa", stsa + "/stsa.fine." + split, {}).examples.size() == fine);
    CHECK(read_dataset("sst-stsa", stsa + "/stsa.binary." + split, {}).examples.size() == binary);
  }
  ReadOptions lower;
  lower.lowercase = true;
  auto multiset = [](const Dataset& d) {
    std::vector<std::pair<std::string, V>> items;
    for (const Example& e : d.examples) items.emplace_back(e.label, e.tokens);
    std::sort(items.begin(), items.end());
    return items;
  };
  const Dataset from_trees = read_sst_trees(trees + "/dev.txt", lower);
  const Dataset from_stsa = read_label_tokens(stsa + "/stsa.fine.dev", {});
  CHECK(multiset(from_trees) == multiset(from_stsa));
  // The binary stsa file equals the binarised trees too.
  lower.sst_binary = true;
  CHECK(multiset(read_sst_trees(trees + "/dev.txt", lower)) ==
        multiset(read_label_tokens(stsa + "/stsa.binary.dev", {})));
}

TEST_CASE("text data: MTL-16 counts, label balance and the last-200 dev split (SOURCE.txt)") {
  const std::string dir = shared_data_path("mtl16");
  for (const auto& [domain, lines, train, zeros, ones] :
       std::vector<std::tuple<std::string, std::int64_t, std::size_t, std::int64_t, std::int64_t>>{
           {"baby", 1500, 1300, 700, 800},
           {"camera_photo", 1597, 1397, 792, 805},
           {"magazines", 1570, 1370, 787, 783},
           {"software", 1515, 1315, 727, 788},
           {"books", 1600, 1400, 802, 798}}) {
    TOPO_CAPTURE(domain);
    Dataset d = read_dataset("mtl", dir + "/" + domain + ".task.train", {});
    CHECK(d.stats.lines == lines);
    CHECK(label_counts(d) == Counts{{"0", zeros}, {"1", ones}});
    auto [head, dev] = split_last(std::move(d), 200);
    CHECK(head.examples.size() == train);
    CHECK(dev.examples.size() == 200);
    CHECK(dev.examples.front().line == lines - 199);
  }
}

TEST_CASE("text data: MR is Latin-1 (31 non-UTF-8 lines); dvd line 905 is broken UTF-8") {
  const std::string mr = shared_data_path("mtl16/MR.task.train");
  const std::string dvd = shared_data_path("mtl16/dvd.task.train");
  ReadOptions latin1;
  latin1.encoding = TextEncoding::Latin1;
  const Dataset m = read_mtl(mr, latin1);
  CHECK(m.examples.size() == 1600);
  CHECK(m.stats.invalid_utf8_lines == 0);
  const std::string cliche = "clich\xC3\xA9";  // "cliché" in UTF-8
  const auto has_cliche = std::count_if(m.examples.begin(), m.examples.end(), [&](const Example& e) {
    return std::any_of(e.tokens.begin(), e.tokens.end(),
                       [&](const std::string& t) { return t.rfind(cliche, 0) == 0; });
  });
  CHECK(has_cliche > 0);

  const Dataset u = read_mtl(mr, {});  // read as UTF-8: never fails, flags exactly the non-UTF-8 lines
  CHECK(u.examples.size() == 1600);
  CHECK(u.stats.invalid_utf8_lines == 31);

  const Dataset d = read_mtl(dvd, {});
  CHECK(d.examples.size() == 1600);
  CHECK(d.stats.invalid_utf8_lines == 1);
  const std::string fffd = "\xEF\xBF\xBD";
  std::vector<std::int64_t> flagged;
  for (const Example& e : d.examples)
    for (const std::string& t : e.tokens)
      if (t.find(fffd) != std::string::npos) {
        flagged.push_back(e.line);
        break;
      }
  CHECK(flagged == std::vector<std::int64_t>{905});
}

TEST_CASE("text data: sports_outdoors line 1121 has a label and no text: an error naming it, or skipped and counted") {
  const std::string path = shared_data_path("mtl16/sports_outdoors.task.train");
  const std::string message = testing::error_of([&] { read_mtl(path, {}); });
  CHECK(message.find("sports_outdoors.task.train:1121") != std::string::npos);
  ReadOptions skip;
  skip.skip_bad = true;
  const Dataset d = read_mtl(path, skip);
  CHECK(d.stats.skipped_bad == 1);
  CHECK(d.examples.size() == 1599);
  CHECK(d.examples[1119].line == 1120);
  CHECK(d.examples[1120].line == 1122);
}

TEST_CASE("shared data: a missing data set fails the test that needs it (never a silent pass)") {
  const std::string message = testing::error_of([] { shared_data_path("no_such_set/train.txt"); });
  CHECK(message.find("no_such_set/train.txt") != std::string::npos);
}
