#include "graph/edge_list.hpp"

namespace topo {

std::vector<std::pair<std::int64_t, std::int64_t>> EdgeList::pairs() const {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  if (!src.defined()) return out;
  auto to_i64 = [](const Tensor& t) {
    if (t.dtype() == DType::I64) return t.to_vector<std::int64_t>();
    const auto v = t.to_vector<std::int32_t>();
    return std::vector<std::int64_t>(v.begin(), v.end());
  };
  const auto s = to_i64(src), d = to_i64(dst);
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) out.emplace_back(s[i], d[i]);
  return out;
}

EdgeList EdgeList::from_pairs(const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs, DType dtype) {
  TOPO_CHECK(dtype == DType::I32 || dtype == DType::I64, "EdgeList::from_pairs: ids must be int32 or int64, not {}",
             dtype_name(dtype));
  const auto n = static_cast<std::int64_t>(pairs.size());
  EdgeList out;
  out.src = Tensor::empty({n}, dtype);
  out.dst = Tensor::empty({n}, dtype);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto [s, d] = pairs[i];
    if (dtype == DType::I32) {
      TOPO_CHECK(s >= INT32_MIN && s <= INT32_MAX && d >= INT32_MIN && d <= INT32_MAX,
                 "EdgeList::from_pairs: edge {} = ({}, {}) does not fit int32", i, s, d);
      out.src.data<std::int32_t>()[i] = static_cast<std::int32_t>(s);
      out.dst.data<std::int32_t>()[i] = static_cast<std::int32_t>(d);
    } else {
      out.src.data<std::int64_t>()[i] = s;
      out.dst.data<std::int64_t>()[i] = d;
    }
  }
  return out;
}

}  // namespace topo
