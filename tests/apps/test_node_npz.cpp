// Graphs as NumPy archives: the .npz / .npy reader on archives written here (stored and deflated members, every
// malformed byte an error naming file and member), Planetoid's Cora as ../shared/data holds it (the counts of
// its SOURCE.txt), and GCN on Cora's public split through topo-train's trainer.
#include <doctest/doctest.h>

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "apps/graphs/npz.hpp"
#include "apps/tasks/node_classify/node_classify.hpp"
#include "apps/train/config.hpp"
#include "apps/train/trainer.hpp"
#include "models/registry.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;

namespace {

void put(std::string& out, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// One .npy (format 1.0): descr like "<i8", shape like "(2, 3)", the raw element bytes.
std::string npy(const std::string& descr, const std::string& shape, const std::string& elements,
                const std::string& fortran = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY\x01";
  out.push_back('\0');
  put(out, header.size(), 2);
  return out + header + elements;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::string deflate_raw(const std::string& data) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A zip of `members` (name, bytes), each stored or deflated, with its central directory (as numpy.savez);
// `declared` > 0: the size every member claims uncompressed, instead of its own.
std::string zip(const std::vector<std::pair<std::string, std::string>>& members, bool deflated,
                std::uint64_t declared = 0) {
  std::string out, directory;
  for (const auto& [name, bytes] : members) {
    const std::string body = deflated ? deflate_raw(bytes) : bytes;
    const auto crc = crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size()));
    const std::size_t offset = out.size();
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 2), put(out, deflated ? 8 : 0, 2), put(out, 0, 4);
    put(out, crc, 4), put(out, body.size(), 4), put(out, bytes.size(), 4), put(out, name.size(), 2), put(out, 0, 2);
    out += name + body;
    put(directory, 0x02014b50, 4), put(directory, 20, 2), put(directory, 20, 2), put(directory, 0, 2);
    put(directory, deflated ? 8 : 0, 2), put(directory, 0, 4), put(directory, crc, 4), put(directory, body.size(), 4);
    put(directory, declared > 0 ? declared : bytes.size(), 4), put(directory, name.size(), 2), put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4), put(directory, offset, 4);
    directory += name;
  }
  const std::size_t at = out.size();
  out += directory;
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2), put(out, members.size(), 2), put(out, members.size(), 2);
  put(out, directory.size(), 4), put(out, at, 4), put(out, 0, 2);
  return out;
}

// A 4-node graph in Planetoid's layout: a path 0-1-2-3 (both directions), CSR features, masks.
std::vector<std::pair<std::string, std::string>> tiny_graph() {
  return {{"edge_index.npy", npy("<i8", "(2, 6)", raw<std::int64_t>({0, 1, 1, 2, 2, 3, 1, 0, 2, 1, 3, 2}))},
          {"x_indptr.npy", npy("<i8", "(5,)", raw<std::int64_t>({0, 1, 2, 3, 5}))},
          {"x_indices.npy", npy("<i8", "(5,)", raw<std::int64_t>({0, 1, 0, 1, 2}))},
          {"x_data.npy", npy("<f4", "(5,)", raw<float>({1, 1, 1, 2, 2}))},
          {"x_shape.npy", npy("<i8", "(2,)", raw<std::int64_t>({4, 3}))},
          {"y.npy", npy("<i8", "(4,)", raw<std::int64_t>({0, 1, 0, -1}))},
          {"train_mask.npy", npy("|b1", "(4,)", std::string("\x01\x01\x00\x00", 4))},
          {"val_mask.npy", npy("|b1", "(4,)", std::string("\x00\x00\x01\x00", 4))},
          {"test_mask.npy", npy("|b1", "(4,)", std::string(4, '\0'))}};
}

std::string write(const std::string& name, const std::string& bytes) { return topo::testing::write_temp_file(name, bytes); }

}  // namespace

TEST_CASE("npz: stored and deflated archives read back; a graph in Planetoid's layout becomes a node dataset") {
  for (const bool deflated : {false, true}) {
    CAPTURE(deflated);
    const std::string path = write(deflated ? "tiny_deflated.npz" : "tiny.npz", zip(tiny_graph(), deflated));
    const auto arrays = read_npz(path);
    REQUIRE(arrays.size() == 9);
    CHECK(arrays.at("edge_index").shape == std::vector<std::int64_t>{2, 6});
    CHECK(arrays.at("x_data").as_float("x_data") == std::vector<float>{1, 1, 1, 2, 2});
    CHECK(arrays.at("y").as_int64("y") == std::vector<std::int64_t>{0, 1, 0, -1});
    const NodeDataset d = read_node_dataset(path);
    CHECK(d.num_nodes == 4);
    CHECK(d.num_classes == 2);
    CHECK(d.directed);
    CHECK(d.edges.size() == 6);
    CHECK(d.splits.train == std::vector<std::int64_t>{0, 1});
    CHECK(d.splits.dev == std::vector<std::int64_t>{2});
    CHECK(d.splits.test.empty());
    REQUIRE(d.features.shape() == Shape{4, 3});
    CHECK(d.features.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 2, 2});
    const HeteroGraph g = node_classify_graph(d);
    CHECK(g.num_edges(0) == 6 + 4);  // as listed, plus a self loop each
    // Row normalisation (the default): node 3's features 2, 2 become 0.5, 0.5.
    NodeClassification task(d, path, {});
    CHECK(task.input_dim() == 3);
  }
  // Small integer and float dtypes widen; f8 narrows to float.
  const NpyArray a = parse_npy(npy("<i2", "(3,)", raw<std::int16_t>({-2, 7, 300})), "i2");
  CHECK(a.as_int64("i2") == std::vector<std::int64_t>{-2, 7, 300});
  CHECK(parse_npy(npy("<f8", "(2,)", raw<double>({0.5, -3})), "f8").as_float("f8") == std::vector<float>{0.5f, -3.f});
  CHECK(parse_npy(npy("<i8", "()", raw<std::int64_t>({9})), "scalar").numel() == 1);
}

TEST_CASE("npz: every malformed archive, array or graph is an error naming the file and the member") {
  auto reading = [](const std::string& name, const std::string& bytes) {
    const std::string path = write(name, bytes);
    return error_of([&] { (void)read_node_dataset(path); });
  };
  const std::string good = zip(tiny_graph(), true);
  CHECK(reading("notzip.npz", "hello").find("notzip.npz: not a zip archive") != std::string::npos);
  CHECK(reading("cut.npz", good.substr(0, good.size() / 2)).find("cut.npz") != std::string::npos);
  std::string flipped = zip(tiny_graph(), false);
  flipped[200] ^= 0x40;  // inside the first member's elements
  CHECK(reading("flipped.npz", flipped).find("CRC mismatch") != std::string::npos);
  // A member that claims 4 GiB in a few bytes (fuzz_npz's finding: the reader allocated the claim up front).
  CHECK(reading("claims.npz", zip(tiny_graph(), true, 0xFFFFFFF0u))
            .find("the deflate stream is corrupt or truncated") != std::string::npos);
  auto with = [&](const std::string& member, const std::string& bytes) {
    auto members = tiny_graph();
    for (auto& [name, b] : members)
      if (name == member) b = bytes;
    return zip(members, false);
  };
  CHECK(reading("be.npz", with("x_data.npy", npy(">f4", "(5,)", raw<float>({1, 1, 1, 2, 2}))))
            .find("be.npz: x_data.npy: dtype '>f4' is not supported") != std::string::npos);
  CHECK(reading("obj.npz", with("y.npy", npy("|O", "(4,)", std::string(32, '\0'))))
            .find("y.npy: dtype '|O' is not supported") != std::string::npos);
  CHECK(reading("fortran.npz", with("y.npy", npy("<i8", "(4,)", raw<std::int64_t>({0, 1, 0, 1}), "True")))
            .find("Fortran-order arrays are not supported") != std::string::npos);
  CHECK(reading("short.npz", with("y.npy", npy("<i8", "(5,)", raw<std::int64_t>({0, 1, 0, 1}))))
            .find("short.npz: y.npy: shape (5,) of <i8 needs 40 bytes, the array has 32") != std::string::npos);
  CHECK(reading("magic.npz", with("y.npy", "not an array")).find("y.npy: not a .npy array") != std::string::npos);
  CHECK(reading("edge.npz", with("edge_index.npy", npy("<i8", "(2, 1)", raw<std::int64_t>({0, 9}))))
            .find("edge.npz: edge 0 (0 -> 9) has a node outside [0, 4)") != std::string::npos);
  CHECK(reading("feat.npz", with("x_indices.npy", npy("<i8", "(5,)", raw<std::int64_t>({0, 1, 0, 1, 7}))))
            .find("x_indices[4] = 7 is outside [0, 3)") != std::string::npos);
  auto members = tiny_graph();
  members.erase(members.begin());  // no edge_index
  CHECK(reading("noedges.npz", zip(members, false)).find("noedges.npz has no array 'edge_index'") != std::string::npos);
  // Node 3 has no label: it may not be in a split.
  const std::string path = write("tiny_split.npz", good);
  CHECK(error_of([&] { NodeClassification t(read_node_dataset(path), path, {{0}, {}, {3}}); })
            .find("node 3 of --test-nodes has no label") != std::string::npos);
}

TEST_CASE("npz: a class id past the node count and a non-finite feature name the array and the index") {
  auto reading = [](const std::string& name, const std::vector<std::pair<std::string, std::string>>& members) {
    const std::string path = write(name, zip(members, false));
    return error_of([&] { (void)read_node_dataset(path); });
  };
  auto with = [](const std::string& member, const std::string& bytes) {
    auto members = tiny_graph();
    for (auto& [name, b] : members)
      if (name == member) b = bytes;
    return members;
  };
  // y[0] = 1000000 on Cora ended in "a full-graph training step ... needs about 121.3 GiB", naming no array.
  CHECK(reading("class.npz", with("y.npy", npy("<i8", "(4,)", raw<std::int64_t>({0, 1000000, 0, -1}))))
            .find("class.npz: y[1] = 1000000 is not a class id: expected -1 (no label) or 0 .. 3") !=
        std::string::npos);
  CHECK(reading("class4.npz", with("y.npy", npy("<i8", "(4,)", raw<std::int64_t>({0, 1, 4, -1}))))
            .find("class4.npz: y[2] = 4 is not a class id") != std::string::npos);
  // NaN or inf features trained silently to uniform predictions.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  CHECK(reading("nan.npz", with("x_data.npy", npy("<f4", "(5,)", raw<float>({1, 1, 1, nan, 2}))))
            .find("nan.npz: x_data[3] = nan (node 3, feature 1) is not a finite float32 feature") != std::string::npos);
  auto dense = tiny_graph();
  std::erase_if(dense, [](const auto& m) { return m.first.rfind("x_", 0) == 0; });
  dense.emplace_back("x.npy", npy("<f4", "(4, 2)", raw<float>({1, 0, 0, 1, 1, -inf, 0, 1})));
  CHECK(reading("dense_inf.npz", dense).find("dense_inf.npz: x[2, 1] = -inf is not a finite float32 feature") !=
        std::string::npos);
  dense.back().second = npy("<f8", "(4, 2)", raw<double>({1, 0, 0, 1e300, 1, 0, 0, 1}));  // past float32: inf
  CHECK(reading("dense_f8.npz", dense).find("dense_f8.npz: x[1, 1] = inf is not a finite float32 feature") !=
        std::string::npos);
  dense.back().second = npy("<f4", "(4, 2)", raw<float>({1, 0, 0, 1, 1, 0, 0, 1}));
  CHECK(read_node_dataset(write("dense_ok.npz", zip(dense, false))).features.shape() == Shape{4, 2});
}

TEST_CASE("Planetoid's Cora as shipped: the counts of its SOURCE.txt; GCN learns its public split") {
  const std::string cora = topo::testing::shared_data_path("planetoid/cora.npz");
  const NodeDataset d = read_node_dataset(cora);
  CHECK(d.num_nodes == 2708);
  CHECK(d.edges.size() == 10556);
  CHECK(d.num_classes == 7);
  CHECK(d.features.shape() == Shape{2708, 1433});
  CHECK(d.splits.train.size() == 140);
  CHECK(d.splits.dev.size() == 500);
  CHECK(d.splits.test.size() == 1000);
  const auto dir = topo::testing::fresh_temp_dir("cora_gcn");
  TrainConfig c;
  c.set("task", "node-classify").set("model", "gcn");
  apply_config_json(c, models::model_recipe("gcn", "node-classify"), "recipe");
  c.set("data", cora);
  c.progress = "none";
  c.out = dir.string();
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.has_test);
  // One seed of the recipe (docs/results.md: 81.2 mean over 10, the paper 81.5); the majority class: 13%.
  CHECK(r.test_metric >= 0.78);
  std::filesystem::remove_all(dir);
}
