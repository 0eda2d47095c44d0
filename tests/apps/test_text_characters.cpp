// The character pipeline (Chinese text, BiG-Transformer): text split into Unicode code points, not bytes;
// invalid UTF-8 counted and reported with path:line; reachable from the classify task as `tokenize: char`.
#include <doctest/doctest.h>

#include <fstream>

#include "apps/tasks/classify/classify.hpp"
#include "apps/train/config.hpp"
#include "apps/train/evaluate.hpp"
#include "apps/train/model_factory.hpp"
#include "apps/train/trainer.hpp"
#include "kernels/error.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::text;
using V = std::vector<std::string>;

TEST_CASE("split_characters: one token per code point, whitespace dropped, non-BMP kept whole") {
  CHECK(split_characters("酒店 很好", false) == V{"酒", "店", "很", "好"});
  CHECK(split_characters("A\xE3\x80\x80" "b\t\xF0\xA0\x80\x80!", true) == V{"a", "b", "\xF0\xA0\x80\x80", "!"});
  CHECK(split_characters("  ", false).empty());
  CHECK(tokenize("酒店 很好", Tokenization::Whitespace, false) == V{"酒店", "很好"});
  CHECK(parse_tokenization("char") == Tokenization::Characters);
  CHECK_THROWS_WITH_AS(parse_tokenization("bytes"), doctest::Contains("'bytes'"), Error);
}

TEST_CASE("character reading: TSV and stsa lines as characters; invalid UTF-8 is U+FFFD, reported at path:line") {
  ReadOptions o;
  o.tokenize = Tokenization::Characters;
  const std::string tsv = testing::write_temp_file("chars.tsv", "label\ttext_a\n1\t房间 不错\n0\t很\xE5\xAD差\n");
  o.text_field = "text_a";
  const Dataset d = read_tsv(tsv, o);
  REQUIRE(d.examples.size() == 2);
  CHECK(d.examples[0].tokens == V{"房", "间", "不", "错"});
  CHECK(d.examples[1].tokens == V{"很", "\xEF\xBF\xBD", "差"});
  CHECK(d.stats.invalid_utf8_lines == 1);
  CHECK(d.stats.first_invalid_utf8 == tsv + ":3");
  CHECK(apps::read_stats_json(d.stats).at("first_invalid_utf8") == tsv + ":3");

  const Dataset s = read_label_tokens(testing::write_temp_file("chars.stsa", "3 好 书\n"), o);
  CHECK(s.examples[0].label == "3");
  CHECK(s.examples[0].tokens == V{"好", "书"});
  CHECK_THROWS_WITH_AS(read_dataset("sst", tsv, o), doctest::Contains("use sst-stsa"), Error);
}

TEST_CASE("classify: tokenize char builds a character vocabulary and keeps it for evaluation") {
  const std::string train = testing::write_temp_file("zh_train.tsv", "label\ttext_a\n1\t房间很好\n0\t房间很差\n1\t好\n");
  apps::TrainConfig c;
  c.set("task", "classify");
  c.set("model", "star");
  c.set("format", "tsv");
  c.set("train", train);
  c.set("dev", train);
  apps::set_config_field(c, "text_field", "text_a");
  apps::set_config_field(c, "tokenize", "char");
  const std::unique_ptr<apps::Task> made = apps::make_task(c);
  const auto& task = dynamic_cast<const apps::TextClassification&>(*made);
  CHECK(task.vocabulary().contains("房"));
  CHECK_FALSE(task.vocabulary().contains("房间"));
  CHECK(task.vocabulary().size() == 2 + 5);  // <pad>, <unk>, 房 间 很 好 差
  CHECK(task.metadata().at("read").at("tokenize") == "char");

  CHECK_THROWS_WITH_AS(apps::set_config_field(c, "tokenize", "bytes"), doctest::Contains("'tokenize' = 'bytes'"), Error);
}

TEST_CASE("classify: BiG on 1,000 ChnSentiCorp reviews (characters, jieba words) beats the majority class; "
          "topo-eval rebuilds the words from the checkpoint") {
  const std::string train_all = testing::shared_data_path("chnsenticorp/train.tsv");
  const std::string dev_all = testing::shared_data_path("chnsenticorp/dev.tsv");
  if (train_all.empty() || dev_all.empty()) return;
  const auto dir = testing::fresh_temp_dir("big_chnsenticorp");
  auto head = [&](const std::string& from, const std::string& name, std::size_t lines) {
    std::ifstream in(from, std::ios::binary);
    std::ofstream out(dir / name, std::ios::binary);
    std::string line;
    for (std::size_t i = 0; i < lines && std::getline(in, line); ++i) out << line << '\n';
    return (dir / name).string();
  };
  apps::TrainConfig c;
  c.set("task", "classify");
  c.set("model", "big");
  c.set("format", "tsv");
  c.set("train", head(train_all, "train.tsv", 1001));  // header + 1,000 reviews
  c.set("dev", head(dev_all, "dev.tsv", 301));
  apps::set_config_field(c, "text_field", "text_a");
  apps::set_config_field(c, "tokenize", "char");
  c.set("max_len", 96);
  c.layers = 1;
  c.hidden = 32;
  c.heads = 4;
  c.head_hidden = 32;
  c.epochs = 4;
  c.batch = 32;
  c.lr = 2e-3;
  c.warmup = 20;
  c.dropout = 0.1;
  c.progress = "none";
  c.out = (dir / "run").string();
  const apps::TrainResult r = apps::Trainer(c).run();
  REQUIRE(r.completed);
  const double majority = r.result.at("majority_acc").get<double>();
  INFO("dev acc " << r.best_dev_metric << " majority " << majority);
  CHECK(r.best_dev_metric > majority + 0.05);

  apps::EvalOptions e;
  e.checkpoint = c.out;
  e.test = c.option<std::string>("dev");
  e.format = "tsv";
  CHECK(apps::evaluate_checkpoint(e).at("acc").get<double>() == r.best_dev_metric);
}
