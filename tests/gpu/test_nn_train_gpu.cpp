// CUDA vs CPU for the training vocabulary: fused optimizer steps, seeded initialisation (bitwise: the
// counter-based RNG draws the same values on both), and checkpoints saved from a CUDA model.
#include <filesystem>

#include "kernels/dense/optim_step.hpp"
#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "tests/support/testing.hpp"

namespace nn = topo::nn;
using namespace topo;
using topo::testing::kGpu;
using topo::testing::random_uniform;

TEST_CASE("gpu: adam_step / sgd_step / scale_inplace / ema_step match the CPU") {
  for (std::int64_t n : topo::testing::kAwkwardSizes) {
    CAPTURE(n);
    for (bool decoupled : {false, true}) {
      AdamStepConfig c{0.01f, 0.9f, 0.99f, 1e-8f, 0.05f, decoupled, 0.19f, 0.0199f};
      Tensor p = random_uniform({n}, 1), g = random_uniform({n}, 2), m = random_uniform({n}, 3),
             v = random_uniform({n}, 4, 0.f, 1.f);
      Tensor pg = p.to(kGpu), gg = g.to(kGpu), mg = m.to(kGpu), vg = v.to(kGpu);
      adam_step(p, g, m, v, c);
      adam_step(pg, gg, mg, vg, c);
      TOPO_CHECK_CLOSE(pg.to_vector<float>(), p.to_vector<float>(), 1e-6, 1e-5);
      TOPO_CHECK_CLOSE(mg.to_vector<float>(), m.to_vector<float>(), 1e-6, 1e-5);
      TOPO_CHECK_CLOSE(vg.to_vector<float>(), v.to_vector<float>(), 1e-6, 1e-5);
    }
    for (bool first : {true, false}) {
      SgdStepConfig c{0.1f, 0.9f, 0.01f, first};
      Tensor p = random_uniform({n}, 5), g = random_uniform({n}, 6), b = random_uniform({n}, 7);
      Tensor pg = p.to(kGpu), gg = g.to(kGpu), bg = b.to(kGpu);
      sgd_step(p, g, b, c);
      sgd_step(pg, gg, bg, c);
      TOPO_CHECK_CLOSE(pg.to_vector<float>(), p.to_vector<float>(), 1e-6, 1e-5);
      TOPO_CHECK_CLOSE(bg.to_vector<float>(), b.to_vector<float>(), 1e-6, 1e-5);
    }
    Tensor x = random_uniform({n}, 8), xg = x.to(kGpu);
    scale_inplace(x, 0.3f);
    scale_inplace(xg, 0.3f);
    TOPO_CHECK_CLOSE(xg.to_vector<float>(), x.to_vector<float>(), 1e-7, 1e-6);
    Tensor avg = random_uniform({n}, 9), avgg = avg.to(kGpu), q = random_uniform({n}, 10), qg = q.to(kGpu);
    ema_step(avg, q, 0.01f);
    ema_step(avgg, qg, 0.01f);
    TOPO_CHECK_CLOSE(avgg.to_vector<float>(), avg.to_vector<float>(), 1e-7, 1e-6);
  }
}

TEST_CASE("gpu: a model reset with one seed is identical on CPU and CUDA; checkpoints cross devices") {
  nn::MLP cpu(7, {33}, 5), gpu(7, {33}, 5);
  gpu.to(kGpu);
  cpu.reset_parameters(11);
  gpu.reset_parameters(11);
  const auto pc = cpu.named_parameters(), pg = gpu.named_parameters();
  for (std::size_t i = 0; i < pc.size(); ++i) {
    INFO(pc[i].first);
    CHECK(pg[i].second.device() == kGpu);
    TOPO_CHECK_CLOSE(pg[i].second.data().to_vector<float>(), pc[i].second.data().to_vector<float>(), 1e-6, 1e-6);
  }
  // A CUDA model + Adam step, saved, loaded into a CPU model.
  nn::Adam opt(gpu.parameters(), {0.01f});
  nn::Var loss = nn::sum_all(gpu(nn::Var(random_uniform({4, 7}, 1, -1.f, 1.f, kGpu))));
  loss.backward();
  opt.step();
  const auto dir = std::filesystem::temp_directory_path() / ("topo_gpu_ckpt_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "g.ckpt").string();
  nn::save_checkpoint(path, gpu, &opt, nullptr, 1);
  nn::Adam opt_cpu(cpu.parameters(), {0.01f});
  nn::load_checkpoint(path, cpu, &opt_cpu, nullptr);
  for (std::size_t i = 0; i < pc.size(); ++i)
    CHECK(pc[i].second.data().to_vector<float>() == pg[i].second.data().to_vector<float>());
  CHECK(opt_cpu.state()[0][0].step == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("gpu: the MLP head's forward and backward match the CPU (every activation, awkward widths)") {
  for (const nn::Activation act : {nn::Activation::Relu, nn::Activation::Gelu, nn::Activation::Tanh})
    for (const std::int64_t rows : {std::int64_t{1}, std::int64_t{33}, std::int64_t{257}}) {
      CAPTURE(static_cast<int>(act));
      CAPTURE(rows);
      nn::MLP cpu(31, {64, 33}, 7, act), gpu(31, {64, 33}, 7, act);
      cpu.reset_parameters(5);
      gpu.reset_parameters(5);
      gpu.to(kGpu);
      const Tensor x = random_uniform({rows, 31}, 6);
      nn::Var xc(x, true), xg(x.to(kGpu), true);
      const nn::Var yc = cpu(xc), yg = gpu(xg);
      REQUIRE(yg.device().is_cuda());
      TOPO_CHECK_CLOSE(yg.data().to_vector<float>(), yc.data().to_vector<float>(), 1e-5, 1e-4);
      const Tensor seed_grad = random_uniform(yc.shape(), 7);
      yc.backward(seed_grad);
      yg.backward(seed_grad.to(kGpu));
      TOPO_CHECK_CLOSE(xg.grad().to_vector<float>(), xc.grad().to_vector<float>(), 1e-5, 1e-4);
      const auto pc = cpu.named_parameters(), pg = gpu.named_parameters();
      for (std::size_t i = 0; i < pc.size(); ++i) {
        INFO(pc[i].first);
        TOPO_CHECK_CLOSE(pg[i].second.grad().to_vector<float>(), pc[i].second.grad().to_vector<float>(), 1e-4, 1e-4);
      }
    }
}

TEST_CASE("gpu: linear and matmul over a dropped-out CUDA leaf (made again in backward, not kept) match the CPU") {
  // 10,000 x 257: three slabs of the weight gradient's recompute, the last one short.
  const Tensor x = random_uniform({10000, 257}, 31), g = random_uniform({10000, 5}, 32);
  for (const int op : {0, 1}) {
    CAPTURE(op);
    std::vector<std::vector<float>> grads;
    for (const Device device : {Device::cpu(), kGpu}) {
      nn::Var xv(x.to(device), true);
      nn::Var w(random_uniform(op == 0 ? Shape{5, 257} : Shape{257, 5}, 33).to(device), true);
      nn::Var b(random_uniform({5}, 34).to(device), true);
      nn::Generator gen(41);
      const nn::Var h = nn::dropout(xv, 0.3f, true, gen);
      const nn::Var y = op == 0 ? nn::linear(h, w, b) : nn::matmul(h, w);
      y.backward(g.to(device));
      grads.push_back(w.grad().to_vector<float>());
      grads.push_back(xv.grad().to_vector<float>());
    }
    TOPO_CHECK_CLOSE(grads[2], grads[0], 1e-4, 1e-4);
    TOPO_CHECK_CLOSE(grads[3], grads[1], 1e-5, 1e-4);
  }
}
