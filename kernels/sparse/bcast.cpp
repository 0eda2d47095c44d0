#include "kernels/sparse/bcast.hpp"

#include <algorithm>

namespace topo {

Shape row_shape(const Tensor& t) {
  TOPO_CHECK(t.ndim() >= 1, "feature tensor {} needs a leading row dimension", t.str());
  return Shape(t.shape().begin() + 1, t.shape().end());
}

void feature_bcast(const Shape& lhs_in, const Shape& rhs_in, bool dot, const char* what, FeatureBcast& out) {
  Shape lhs = lhs_in, rhs = rhs_in;
  std::int64_t k = 1;
  if (dot) {
    TOPO_CHECK(!lhs.empty() && !rhs.empty() && lhs.back() == rhs.back(),
               "{}: dot needs equal last feature dims, got {} and {}", what, shape_str(lhs_in), shape_str(rhs_in));
    k = lhs.back();
    lhs.pop_back();
    rhs.pop_back();
  }
  const std::size_t nd = std::max(lhs.size(), rhs.size());
  Shape l(nd, 1), r(nd, 1), o(nd, 1);
  std::copy(lhs.begin(), lhs.end(), l.begin() + (nd - lhs.size()));
  std::copy(rhs.begin(), rhs.end(), r.begin() + (nd - rhs.size()));
  bool broadcast = lhs != rhs;
  for (std::size_t i = 0; i < nd; ++i) {
    TOPO_CHECK(l[i] == r[i] || l[i] == 1 || r[i] == 1, "{}: feature shapes {} and {} do not broadcast", what,
               shape_str(lhs_in), shape_str(rhs_in));
    o[i] = std::max(l[i], r[i]);
  }
  out.out_shape = o;
  if (dot) out.out_shape.push_back(1);
  const std::int64_t out_len = shape_numel(o);
  out.view = BcastView{};
  out.view.out_len = out_len;
  out.view.lhs_len = shape_numel(lhs) * k;
  out.view.rhs_len = shape_numel(rhs) * k;
  out.view.reduce_len = k;
  out.lhs_off.clear();
  out.rhs_off.clear();
  if (!broadcast) return;
  // Walk the output index in row-major order and map it into each operand (stride 0 on broadcast dims).
  out.lhs_off.resize(out_len);
  out.rhs_off.resize(out_len);
  std::vector<std::int64_t> idx(nd, 0);
  for (std::int64_t f = 0; f < out_len; ++f) {
    std::int64_t lo = 0, ro = 0;
    for (std::size_t i = 0; i < nd; ++i) {
      lo = lo * l[i] + (l[i] == 1 ? 0 : idx[i]);
      ro = ro * r[i] + (r[i] == 1 ? 0 : idx[i]);
    }
    out.lhs_off[f] = lo * k;
    out.rhs_off[f] = ro * k;
    for (std::size_t i = nd; i-- > 0;) {
      if (++idx[i] < o[i]) break;
      idx[i] = 0;
    }
  }
  out.view.lhs_off = out.lhs_off.data();
  out.view.rhs_off = out.rhs_off.data();
}

BcastView bcast_view_on(const FeatureBcast& bcast, Device device, Tensor& holder) {
  BcastView view = bcast.view;
  if (device.is_cpu() || bcast.lhs_off.empty()) return view;
  std::vector<std::int64_t> both(bcast.lhs_off);
  both.insert(both.end(), bcast.rhs_off.begin(), bcast.rhs_off.end());
  holder = Tensor::from_vector(both, {static_cast<std::int64_t>(both.size())}, device);
  view.lhs_off = holder.data<std::int64_t>();
  view.rhs_off = view.lhs_off + bcast.lhs_off.size();
  return view;
}

}  // namespace topo
