// SST's PTB bracket trees, one per line: "(3 (2 The) (2 (2 Rock) ...))". A single left-to-right scan
// with an explicit stack (no recursion, so a deep or hostile tree cannot overflow the call stack) records
// the nodes in pre-order as (label, first leaf, end leaf), which is all subtree mode needs.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "apps/text/dataset.hpp"
#include "apps/text/line_reader.hpp"

namespace topo::text {

namespace {

using detail::bad_line;

struct Node {
  std::string label;
  std::int64_t begin = 0, end = 0;  // leaf span [begin, end)
  bool has_children = false, has_word = false;
};

struct Tree {
  std::vector<Node> nodes;  // pre-order, root first
  std::vector<std::string> leaves;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

Tree parse_tree(std::string_view s, bool lowercase) {
  Tree t;
  std::vector<std::size_t> open;  // indices into t.nodes of the unclosed nodes
  bool closed_root = false;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const char c = s[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    const std::size_t column = i + 1;
    if (closed_root) bad_line("text after the tree's final ')' at column {}", column);
    if (c == '(') {
      ++i;
      while (i < n && is_space(s[i])) ++i;
      std::size_t j = i;
      while (j < n && !is_space(s[j]) && s[j] != '(' && s[j] != ')') ++j;
      if (j == i) bad_line("'(' at column {} is not followed by a label", column);
      const std::string_view label = s.substr(i, j - i);
      if (label.size() != 1 || label[0] < '0' || label[0] > '4')
        bad_line("node label '{}' at column {} is not an SST label 0..4", label, i + 1);
      if (!open.empty()) {
        Node& parent = t.nodes[open.back()];
        if (parent.has_word) bad_line("node at column {} mixes a word and subtrees", column);
        parent.has_children = true;
      }
      Node node;
      node.label = std::string(label);
      node.begin = static_cast<std::int64_t>(t.leaves.size());
      open.push_back(t.nodes.size());
      t.nodes.push_back(std::move(node));
      i = j;
    } else if (c == ')') {
      if (open.empty()) bad_line("unbalanced parentheses: unexpected ')' at column {}", column);
      Node& node = t.nodes[open.back()];
      if (!node.has_children && !node.has_word) bad_line("node '({}' closed at column {} has no word", node.label, column);
      node.end = static_cast<std::int64_t>(t.leaves.size());
      open.pop_back();
      closed_root = open.empty();
      ++i;
    } else {
      std::size_t j = i;
      while (j < n && !is_space(s[j]) && s[j] != '(' && s[j] != ')') ++j;
      if (open.empty()) bad_line("expected '(' at column {}, got '{}'", column, s.substr(i, j - i));
      Node& node = t.nodes[open.back()];
      if (node.has_children || node.has_word)
        bad_line("node '({}' has more than one word or mixes words and subtrees (column {})", node.label, column);
      node.has_word = true;
      std::string& leaf = t.leaves.emplace_back(s.substr(i, j - i));
      if (lowercase) ascii_lower(leaf);
      i = j;
    }
  }
  if (!open.empty()) bad_line("unbalanced parentheses: {} '(' left open at the end of the line", open.size());
  if (t.nodes.empty()) bad_line("no tree");
  return t;
}

// Folds identical token sequences into their first occurrence. A phrase such as "the" recurs in thousands of
// trees; kept once per tree, the single words alone are half the training set and its neutral share is 69%
// (51% over distinct phrases).
void keep_unique_phrases(Dataset& d) {
  std::unordered_map<std::string, std::size_t> index;  // phrase -> its example in kept
  std::vector<Example> kept;
  std::vector<std::vector<std::pair<std::string, std::int64_t>>> votes;  // per kept example: (label, count)
  for (Example& e : d.examples) {
    std::string key;  // length-prefixed tokens: no separator can collide with a token's bytes
    for (const std::string& t : e.tokens) key.append(std::to_string(t.size())).append(1, ':').append(t);
    const auto [it, fresh] = index.try_emplace(std::move(key), kept.size());
    if (fresh) votes.emplace_back();
    auto& v = votes[it->second];
    const auto vote = std::find_if(v.begin(), v.end(), [&](const auto& lv) { return lv.first == e.label; });
    if (vote == v.end())
      v.emplace_back(e.label, 1);
    else
      ++vote->second;
    if (fresh) kept.push_back(std::move(e));
  }
  for (std::size_t k = 0; k < kept.size(); ++k) {
    // max_element keeps the first of equal counts: ties go to the label seen first.
    const auto best = std::max_element(votes[k].begin(), votes[k].end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    kept[k].label = best->first;
    if (votes[k].size() > 1) ++d.stats.label_conflicts;
  }
  d.stats.merged_duplicates = static_cast<std::int64_t>(d.examples.size() - kept.size());
  d.examples = std::move(kept);
  d.stats.examples = static_cast<std::int64_t>(d.examples.size());
}

}  // namespace

Dataset read_sst_trees(const std::string& path, const ReadOptions& opts) {
  Dataset d = detail::start_dataset(path, opts);
  detail::for_each_line(d, opts, [&](std::int64_t line, const std::string& text) {
    Tree t = parse_tree(text, opts.lowercase);
    if (!opts.sst_subtrees) {
      std::string label = std::move(t.nodes.front().label);
      if (detail::apply_sst_label(label, opts))
        detail::add_example(d, std::move(t.leaves), std::move(label), line, opts);
      return;
    }
    // Map every label before adding any example, so a bad node drops the whole line under skip_bad.
    std::vector<char> keep(t.nodes.size());
    for (std::size_t k = 0; k < t.nodes.size(); ++k) keep[k] = detail::apply_sst_label(t.nodes[k].label, opts);
    for (std::size_t k = 0; k < t.nodes.size(); ++k) {
      if (!keep[k]) continue;
      Node& node = t.nodes[k];
      detail::add_example(d, std::vector<std::string>(t.leaves.begin() + node.begin, t.leaves.begin() + node.end),
                          std::move(node.label), line, opts);
    }
  });
  if (opts.sst_subtrees && opts.sst_unique_subtrees) keep_unique_phrases(d);
  return d;
}

}  // namespace topo::text
