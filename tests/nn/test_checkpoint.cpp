// Checkpoints: round trip, validation by name, corrupt/truncated files, atomic writes, exact resume.
#include <doctest/doctest.h>

#include <filesystem>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "tests/support/testing.hpp"
#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "tests/nn/nn_testing.hpp"

namespace nn = topo::nn;
namespace fs = std::filesystem;
using topo::Tensor;

using topo::testing::error_of;

namespace {

// A fresh, empty directory per test case.
fs::path scratch_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("topo_ckpt_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Tiny : nn::Module {
  std::shared_ptr<nn::Linear> fc1, fc2;
  std::shared_ptr<nn::Dropout> drop;
  explicit Tiny(std::int64_t hidden = 8) {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(4, hidden));
    drop = register_module("drop", std::make_shared<nn::Dropout>(0.3f));  // default_generator
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(hidden, 2));
  }
  nn::Var forward(const nn::Var& x) const { return fc2->forward(drop->forward(nn::relu(fc1->forward(x)))); }
};

using topo::testing::contains;

}  // namespace

TEST_CASE("checkpoint: round trip of parameters, optimizer state, RNG, step and metadata") {
  const fs::path dir = scratch_dir("roundtrip");
  const std::string path = (dir / "model.ckpt").string();
  Tiny a;
  a.reset_parameters(1);
  nn::Adam opt_a(nn::split_decay_groups(a.named_parameters(), 1e-4f), {0.01f});
  for (const auto& v : a.parameters()) {
    nn::Var h = v;
    h.set_grad(topo::testing::random_uniform(v.shape(), 3));
  }
  opt_a.step();
  nn::Generator gen_a(77);
  gen_a.advance(1234);
  nn::save_checkpoint(path, a, &opt_a, &gen_a, 17, {{"model", "tiny"}, {"hidden", 8}});
  CHECK(listing(dir) == std::vector<std::string>{"model.ckpt"});

  Tiny b;
  b.reset_parameters(2);
  nn::Adam opt_b(nn::split_decay_groups(b.named_parameters(), 1e-4f), {0.5f});
  nn::Generator gen_b(1);
  const nn::CheckpointInfo info = nn::load_checkpoint(path, b, &opt_b, &gen_b);
  CHECK(info.step == 17);
  CHECK(info.metadata["model"] == "tiny");
  CHECK(info.metadata["hidden"] == 8);
  CHECK(gen_b.seed() == 77);
  CHECK(gen_b.offset() == 1234);
  CHECK(opt_b.lr() == 0.01f);
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  for (std::size_t i = 0; i < pa.size(); ++i) {
    INFO(pa[i].first);
    CHECK(pa[i].second.data().to_vector<float>() == pb[i].second.data().to_vector<float>());
  }
  for (std::size_t g = 0; g < 2; ++g)
    for (std::size_t i = 0; i < opt_a.state()[g].size(); ++i) {
      CHECK(opt_b.state()[g][i].step == 1);
      for (int k = 0; k < 2; ++k)
        CHECK(opt_a.state()[g][i].buffers[k].to_vector<float>() == opt_b.state()[g][i].buffers[k].to_vector<float>());
    }
  const auto index = nn::read_checkpoint_index(path);
  CHECK(index["step"] == 17);
  // Parameters alone load without an optimizer; a model-only file cannot fill an optimizer.
  Tiny c;
  CHECK(nn::load_checkpoint(path, c, nullptr, nullptr).step == 17);
  CHECK(c.fc2->bias.data().to_vector<float>() == a.fc2->bias.data().to_vector<float>());
  nn::save_checkpoint(path, a, nullptr, nullptr, 3);
  const std::string err = error_of([&] { nn::load_checkpoint(path, c, &opt_b, nullptr); });
  CHECK(contains(err, "optim/0/0/exp_avg"));
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: a weight average travels as average/<name> with its update count; optional when loading") {
  const fs::path dir = scratch_dir("average");
  const std::string path = (dir / "avg.ckpt").string();
  Tiny a;
  a.reset_parameters(1);
  nn::WeightAverage avg_a(a.named_parameters(), 0.99f);
  for (int step = 0; step < 3; ++step) {
    for (const auto& v : a.parameters()) {
      topo::Tensor live = v.data();
      live.copy_from(topo::testing::random_uniform(v.shape(), 10 + step));
    }
    avg_a.update();
  }
  nn::save_checkpoint(path, a, nullptr, nullptr, 3, {}, &avg_a);
  CHECK(nn::read_checkpoint_index(path)["average"]["updates"] == 3);

  Tiny b;
  b.reset_parameters(2);
  nn::WeightAverage avg_b(b.named_parameters(), 0.99f);
  nn::load_checkpoint(path, b, nullptr, nullptr, &avg_b);
  CHECK(avg_b.updates() == 3);
  for (std::size_t i = 0; i < avg_a.named_averages().size(); ++i) {
    INFO(avg_a.named_averages()[i].first);
    CHECK(avg_a.named_averages()[i].second.to_vector<float>() == avg_b.named_averages()[i].second.to_vector<float>());
  }
  // Without an average to fill, its tensors are left alone (topo-eval reads parameters only).
  Tiny c;
  CHECK(nn::load_checkpoint(path, c, nullptr, nullptr).step == 3);
  // Another decay, a file without an average, or a swapped-in average: errors naming the file.
  nn::WeightAverage other_decay(c.named_parameters(), 0.5f);
  CHECK(contains(error_of([&] { nn::load_checkpoint(path, c, nullptr, nullptr, &other_decay); }), "decay"));
  const std::string plain = (dir / "plain.ckpt").string();
  nn::save_checkpoint(plain, a, nullptr, nullptr, 3);
  const std::string err = error_of([&] { nn::load_checkpoint(plain, c, nullptr, nullptr, &avg_b); });
  CHECK(contains(err, "average/fc1.weight"));
  CHECK(contains(err, plain));
  avg_a.swap();
  CHECK(contains(error_of([&] { nn::save_checkpoint(path, a, nullptr, nullptr, 4, {}, &avg_a); }), "swapped"));
  avg_a.swap();
  CHECK(nn::read_checkpoint_index(path)["step"] == 3);  // the refused save left the file as it was
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: mismatches are reported by name before anything is modified") {
  const fs::path dir = scratch_dir("mismatch");
  const std::string path = (dir / "m.ckpt").string();
  Tiny a(8);
  nn::save_checkpoint(path, a, nullptr, nullptr, 0);
  Tiny wider(9);
  const auto before = wider.fc1->weight.data().to_vector<float>();
  const std::string err = error_of([&] { nn::load_checkpoint(path, wider, nullptr, nullptr); });
  CHECK(contains(err, "param/fc1.weight"));
  CHECK(contains(err, path));
  CHECK(wider.fc1->weight.data().to_vector<float>() == before);

  struct Other : nn::Module {
    Other() { register_module("fc1", std::make_shared<nn::Linear>(4, 8)); }
  } other;
  CHECK(contains(error_of([&] { nn::load_checkpoint(path, other, nullptr, nullptr); }),
                 "unexpected tensor 'param/fc2."));
  struct More : Tiny {
    More() { register_parameter("extra", {2}, nn::init::InitSpec::zeros()); }
  } more;
  CHECK(contains(error_of([&] { nn::load_checkpoint(path, more, nullptr, nullptr); }), "missing tensor 'param/extra'"));
  nn::SGD sgd(a.parameters(), {0.1f, 0.9f});
  nn::save_checkpoint(path, a, &sgd, nullptr, 0);
  nn::Adam adam(a.parameters(), {});
  CHECK(contains(error_of([&] { nn::load_checkpoint(path, a, &adam, nullptr); }), "exp_avg"));
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: truncated, corrupt or missing files are errors naming the file") {
  const fs::path dir = scratch_dir("corrupt");
  const std::string path = (dir / "c.ckpt").string();
  Tiny a;
  nn::Adam opt(a.parameters(), {});
  nn::save_checkpoint(path, a, &opt, nullptr, 5, {{"k", 1}});
  const auto size = fs::file_size(path);
  std::vector<char> bytes(size);
  std::ifstream(path, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(size));
  auto write = [&](const std::vector<char>& b) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
  };
  // Every truncation point: header, index, payload.
  for (std::size_t keep : {std::size_t{0}, std::size_t{5}, std::size_t{12}, std::size_t{40}, size / 2, size - 1}) {
    CAPTURE(keep);
    write(std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    const std::string err = error_of([&] { nn::load_checkpoint(path, a, &opt, nullptr); });
    CHECK(contains(err, path));
  }
  auto flipped = bytes;
  flipped[size - 3] ^= 0x10;  // a payload byte
  write(flipped);
  CHECK(contains(error_of([&] { nn::load_checkpoint(path, a, &opt, nullptr); }), "checksum"));
  flipped = bytes;
  flipped[20] = '#';  // inside the JSON index
  write(flipped);
  CHECK(contains(error_of([&] { nn::load_checkpoint(path, a, &opt, nullptr); }), path));
  // A bit flipped in the index that leaves valid JSON (metadata "k": 1 -> 3: a vocabulary word, a label) is caught
  // by the index's own checksum; it loaded as a valid file before it had one.
  const std::string text(bytes.begin(), bytes.end());
  const std::size_t k = text.find("\"k\":1");
  REQUIRE(k != std::string::npos);
  flipped = bytes;
  flipped[k + 4] ^= 0x02;
  write(flipped);
  for (const std::string& err : {error_of([&] { nn::load_checkpoint(path, a, &opt, nullptr); }),
                                 error_of([&] { nn::read_checkpoint_index(path); })})
    CHECK(contains(err, "checkpoint " + path + ": index checksum mismatch"));
  CHECK(contains(error_of([&] { nn::load_checkpoint((dir / "absent").string(), a, nullptr, nullptr); }), "absent"));
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: a failed save leaves no partial or stray file and keeps the old one") {
  const fs::path dir = scratch_dir("atomic");
  Tiny a;
  // Target directory missing: the temp file cannot even be created.
  const std::string missing = (dir / "no_such_dir" / "x.ckpt").string();
  CHECK(contains(error_of([&] { nn::save_checkpoint(missing, a, nullptr, nullptr, 0); }), missing));
  CHECK(listing(dir).empty());
  // The target is a non-empty directory: refused before any temp file is made (kernels/atomic_file.cpp), the
  // directory untouched.
  const fs::path blocker = dir / "blocker";
  fs::create_directories(blocker / "inside");
  CHECK(contains(error_of([&] { nn::save_checkpoint(blocker.string(), a, nullptr, nullptr, 0); }),
                 "it is a directory"));
  CHECK(listing(dir) == std::vector<std::string>{"blocker"});
  CHECK(listing(blocker) == std::vector<std::string>{"inside"});
  // Overwriting an existing checkpoint replaces it whole.
  const std::string path = (dir / "ok.ckpt").string();
  nn::save_checkpoint(path, a, nullptr, nullptr, 1);
  nn::save_checkpoint(path, a, nullptr, nullptr, 2);
  CHECK(nn::read_checkpoint_index(path)["step"] == 2);
  CHECK(listing(dir) == std::vector<std::string>{"blocker", "ok.ckpt"});
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: resume reproduces the uninterrupted run bitwise (Adam + dropout)") {
  const fs::path dir = scratch_dir("resume");
  const std::string path = (dir / "resume.ckpt").string();
  const nn::Var x(topo::testing::random_uniform({16, 4}, 1));
  const nn::Var y(topo::testing::random_uniform({16, 2}, 2));
  auto train = [&](Tiny& model, nn::Optimizer& opt, int steps, std::vector<float>& losses) {
    for (int s = 0; s < steps; ++s) {
      nn::Var loss = nn::mse(model.forward(x), y);
      losses.push_back(loss.item());
      opt.zero_grad();
      loss.backward();
      nn::clip_grad_norm(model.parameters(), 0.5f);
      opt.step();
    }
  };
  auto params_of = [](const Tiny& m) {
    std::vector<std::vector<float>> out;
    for (const auto& v : m.parameters()) out.push_back(v.data().to_vector<float>());
    return out;
  };

  std::vector<float> straight;
  nn::set_seed(99);
  Tiny m1;
  m1.reset_parameters(5);
  nn::AdamW o1(nn::split_decay_groups(m1.named_parameters(), 0.01f), {0.01f});
  train(m1, o1, 6, straight);

  std::vector<float> resumed;
  {
    nn::set_seed(99);
    Tiny m2;
    m2.reset_parameters(5);
    nn::AdamW o2(nn::split_decay_groups(m2.named_parameters(), 0.01f), {0.01f});
    train(m2, o2, 3, resumed);
    nn::save_checkpoint(path, m2, &o2, &nn::default_generator(), 3);
  }
  nn::set_seed(12345);  // everything fresh and different before the load
  Tiny m3;
  m3.reset_parameters(6);
  nn::AdamW o3(nn::split_decay_groups(m3.named_parameters(), 0.01f), {0.5f});
  CHECK(nn::load_checkpoint(path, m3, &o3, &nn::default_generator()).step == 3);
  train(m3, o3, 3, resumed);

  CHECK(resumed == straight);  // bitwise
  CHECK(params_of(m3) == params_of(m1));
  CHECK(straight.back() < straight.front());
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: a directory of per-step files; latest_checkpoint picks the highest step") {
  const fs::path dir = scratch_dir("latest");
  CHECK(nn::latest_checkpoint(dir.string()).empty());
  Tiny a;
  for (std::int64_t step : {3, 12, 7})
    nn::save_checkpoint(nn::checkpoint_path(dir.string(), step), a, nullptr, nullptr, step);
  std::ofstream(dir / "step_00000099.ckpt.tmp.abc123") << "partial";  // a crashed save's leftover
  std::ofstream(dir / "notes.txt") << "x";
  const std::string latest = nn::latest_checkpoint(dir.string());
  CHECK(latest == nn::checkpoint_path(dir.string(), 12));
  CHECK(nn::read_checkpoint_index(latest)["step"] == 12);
  CHECK(fs::path(nn::checkpoint_path(dir.string(), 42)).filename() == "step_00000042.ckpt");
  CHECK(contains(error_of([&] { nn::latest_checkpoint((dir / "nope").string()); }), "nope"));
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: a crafted payload size that wraps the size check is an error, not an out-of-bounds read") {
  // Header + index, cut inside the padding before the payload: the file is shorter than payload_start, so a
  // payload_bytes of 2^64 - (payload_start - size) makes payload_start + payload_bytes wrap to the file size.
  const fs::path dir = scratch_dir("wrap");
  const std::string path = (dir / "crafted.ckpt").string();
  auto index_text = [](std::uint64_t payload_bytes, const std::string& pad) {
    return fmt::format(R"({{"format":1,"step":0,"metadata":null,"tensors":[],"payload_bytes":{},"payload_fnv1a":0{}}})",
                       payload_bytes, pad);
  };
  std::string pad;
  while ((16 + index_text(~std::uint64_t{0}, pad).size()) % 64 == 0) pad += ' ';
  const std::uint64_t size = 16 + index_text(~std::uint64_t{0}, pad).size();
  const std::uint64_t payload_start = (size + 63) / 64 * 64;
  const std::string text = index_text(std::uint64_t{0} - (payload_start - size), pad);  // same 20 digits
  REQUIRE(16 + text.size() == size);
  const std::uint64_t index_bytes = text.size();
  {
    std::ofstream out(path, std::ios::binary);
    out.write("TOPOCKP1", 8);
    out.write(reinterpret_cast<const char*>(&index_bytes), 8);
    out << text;
  }
  Tiny a;
  const std::string err = error_of([&] { nn::load_checkpoint(path, a, nullptr, nullptr); });
  CHECK(contains(err, path));
  CHECK(contains(err, "truncated"));
  CHECK(contains(error_of([&] { nn::read_checkpoint_index(path); }), path));
  fs::remove_all(dir);
}

TEST_CASE("checkpoint: non-finite values, overlapping or repeated index entries and a directory are errors") {
  const fs::path dir = scratch_dir("crafted_index");
  const std::string path = (dir / "c.ckpt").string();
  Tiny a;
  // A NaN or an infinity in a weight: saved with a valid checksum (the run that wrote it had diverged).
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
    Tiny broken;
    Tensor w = broken.fc2->weight.data();  // shares the parameter's storage
    w.data<float>()[3] = bad;
    nn::save_checkpoint(path, broken, nullptr, nullptr, 1, {});
    const std::string err = error_of([&] { nn::load_checkpoint(path, a, nullptr, nullptr); });
    CHECK(contains(err, path));
    CHECK(contains(err, std::string("tensor 'param/fc2.weight' holds ") + (std::isnan(bad) ? "NaN" : "an infinity") +
                            " at element 3"));
  }
  // The index rewritten with the payload (and so its checksum) untouched: padded to its old length with spaces,
  // so the payload stays where it was.
  nn::save_checkpoint(path, a, nullptr, nullptr, 1, {});
  std::vector<char> bytes(fs::file_size(path));
  std::ifstream(path, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::uint64_t index_bytes = 0;
  std::memcpy(&index_bytes, bytes.data() + 8, 8);
  const nlohmann::json index = nlohmann::json::parse(bytes.begin() + 16, bytes.begin() + 16 + index_bytes);
  auto load_with = [&](nlohmann::json edited) {
    // Written as a format-1 file (no index checksum, as before format 2), so the checks after it are reached.
    edited["format"] = 1;
    edited.erase("index_fnv1a");
    std::string text = edited.dump();
    REQUIRE(text.size() <= index_bytes);
    text.resize(index_bytes, ' ');
    std::vector<char> out = bytes;
    std::copy(text.begin(), text.end(), out.begin() + 16);
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(out.data(), static_cast<std::streamsize>(out.size()));
    return error_of([&] { nn::load_checkpoint(path, a, nullptr, nullptr); });
  };
  REQUIRE(load_with(index).empty());  // the rewrite itself changes nothing
  nlohmann::json overlap = index;
  overlap["tensors"][1]["offset"] = overlap["tensors"][0]["offset"];
  CHECK(contains(load_with(overlap), "share their bytes"));
  overlap = index;
  overlap["tensors"][1]["offset"] = overlap["tensors"][0]["offset"].get<std::uint64_t>() + 4;  // inside tensor 0
  CHECK(contains(load_with(overlap), "share their bytes"));
  nlohmann::json twice = index;
  const auto& ts = index["tensors"];
  const std::size_t longer = ts[0]["name"].get<std::string>().size() >= ts[1]["name"].get<std::string>().size() ? 0 : 1;
  twice["tensors"][longer]["name"] = ts[1 - longer]["name"];
  CHECK(contains(load_with(twice), "is listed twice"));
  // A directory where the file should be.
  fs::create_directories(dir / "d.ckpt");
  CHECK(contains(error_of([&] { nn::load_checkpoint((dir / "d.ckpt").string(), a, nullptr, nullptr); }),
                 "not a regular file"));
  fs::remove_all(dir);
}
