// SST's PTB bracket trees, one per line: "(3 (2 The) (2 (2 Rock) ...))". A single left-to-right scan
// with an explicit stack (no recursion, so a deep or hostile tree cannot overflow the call stack) records
// the nodes in pre-order as (label, first leaf, end leaf), which is all subtree mode needs.
#include <string_view>

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
  return d;
}

}  // namespace topo::text
