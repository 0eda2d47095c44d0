// Checkpoint files: a JSON index and a raw little-endian payload; atomic writes via temp + fsync + rename.
#include "nn/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "kernels/atomic_file.hpp"
#include "nn/json_number.hpp"
#include "nn/json_input.hpp"

namespace topo::nn {
namespace {

constexpr char kMagic[8] = {'T', 'O', 'P', 'O', 'C', 'K', 'P', '1'};
constexpr std::uint64_t kAlign = 64;
// 2: the index carries a checksum of its own. The payload's covers only the tensors, and a flipped bit in the
// index's metadata (a vocabulary word, a label) loaded as a valid file that mapped tokens to other rows. 1: files
// written before it, read as they were.
constexpr std::int64_t kFormat = 2;

std::uint64_t align_up(std::uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

std::uint64_t fnv1a(const unsigned char* p, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

// The index's checksum: of its JSON without the "index_fnv1a" field. A loader re-dumps the parsed index, which
// gives the text that was summed: nlohmann's dump is canonical (sorted keys, no spaces, shortest round-trip
// numbers), so a parsed dump dumps to itself.
std::uint64_t index_checksum(const nlohmann::json& index_without_sum) {
  const std::string text = index_without_sum.dump();
  return fnv1a(reinterpret_cast<const unsigned char*>(text.data()), text.size());
}

DType parse_dtype(const std::string& path, const std::string& name, const std::string& s) {
  if (s == "float32") return DType::F32;
  if (s == "int32") return DType::I32;
  if (s == "int64") return DType::I64;
  fail("checkpoint {}: tensor '{}' has unknown dtype '{}'", path, name, s);
}


// The tensors a model (+ optimizer, + weight average) owns, by checkpoint name, in a fixed order.
std::vector<std::pair<std::string, Tensor>> live_tensors(const Module& model, const Optimizer* optimizer,
                                                         const WeightAverage* average) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, v] : model.named_parameters()) out.emplace_back("param/" + name, v.data());
  if (optimizer) {
    const auto names = optimizer->buffer_names();
    const auto& state = optimizer->state();
    for (std::size_t g = 0; g < state.size(); ++g)
      for (std::size_t i = 0; i < state[g].size(); ++i)
        for (std::size_t b = 0; b < names.size(); ++b)
          out.emplace_back(fmt::format("optim/{}/{}/{}", g, i, names[b]), state[g][i].buffers.at(b));
  }
  if (average)
    for (const auto& [name, t] : average->named_averages()) out.emplace_back("average/" + name, t);
  return out;
}

struct FileBytes {
  std::vector<unsigned char> bytes;
};

FileBytes read_file(const std::string& path) {
  // A directory opens as an ifstream on Linux and reports a size of 2^63 - 1, which became a bad_alloc.
  std::error_code ec;
  TOPO_CHECK(!std::filesystem::exists(path, ec) || std::filesystem::is_regular_file(path, ec),
             "checkpoint {}: not a regular file (a directory?)", path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  TOPO_CHECK(in.good(), "checkpoint {}: cannot open for reading", path);
  const std::streamoff size = in.tellg();
  TOPO_CHECK(size >= 0, "checkpoint {}: cannot determine its size", path);
  FileBytes f;
  f.bytes.resize(static_cast<std::size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(f.bytes.data()), size);
  TOPO_CHECK(in.good() || size == 0, "checkpoint {}: read failed", path);
  return f;
}

struct Parsed {
  nlohmann::json index;
  std::size_t payload_start = 0;
};

// Validates the header, index and payload size/checksum; every failure names the file.
Parsed parse(const std::string& path, const FileBytes& f) {
  const auto& b = f.bytes;
  TOPO_CHECK(b.size() >= 16 && std::memcmp(b.data(), kMagic, 8) == 0,
             "checkpoint {}: not a topograph checkpoint (bad magic or shorter than its header, {} bytes)", path,
             b.size());
  std::uint64_t index_bytes = 0;
  std::memcpy(&index_bytes, b.data() + 8, 8);
  TOPO_CHECK(index_bytes <= b.size() - 16, "checkpoint {}: truncated (index of {} bytes, file of {})", path,
             index_bytes, b.size());
  Parsed p;
  try {
    p.index = parse_json_input(std::string_view(reinterpret_cast<const char*>(b.data()) + 16, index_bytes));
  } catch (const nlohmann::json::exception& e) {
    fail("checkpoint {}: corrupt index: {}", path, e.what());
  }
  p.payload_start = align_up(16 + index_bytes);
  try {
    const auto format = json_number<std::int64_t>(p.index.at("format"));
    TOPO_CHECK(format == 1 || format == kFormat, "checkpoint {}: unsupported format {}", path,
               p.index.at("format").dump());
    if (format >= 2) {  // checked first: a flipped size or offset is then named as the corruption it is
      const auto sum = json_number<std::uint64_t>(p.index.at("index_fnv1a"));
      p.index.erase("index_fnv1a");
      TOPO_CHECK(index_checksum(p.index) == sum, "checkpoint {}: index checksum mismatch (corrupt file)", path);
    }
    const auto payload_bytes = json_number<std::uint64_t>(p.index.at("payload_bytes"));
    // Compared as a difference of sizes known to fit: payload_start + payload_bytes wraps for a crafted
    // payload_bytes near 2^64, and the checksum below would then read past the end of the file.
    TOPO_CHECK(p.payload_start <= b.size() && payload_bytes == b.size() - p.payload_start,
               "checkpoint {}: truncated or padded: the index declares a payload of {} bytes at offset {}, the "
               "file has {} bytes",
               path, payload_bytes, p.payload_start, b.size());
    const auto sum = json_number<std::uint64_t>(p.index.at("payload_fnv1a"));
    TOPO_CHECK(fnv1a(b.data() + p.payload_start, payload_bytes) == sum,
               "checkpoint {}: payload checksum mismatch (corrupt file)", path);
    // Each tensor within the payload, under a name of its own, its bytes its own: two index entries over the
    // same bytes (a crafted file with a valid checksum) loaded one tensor's values into another.
    std::map<std::uint64_t, std::pair<std::uint64_t, std::string>> by_offset;  // offset -> (nbytes, name)
    std::set<std::string> names;
    for (const auto& t : p.index.at("tensors")) {
      const auto off = json_number<std::uint64_t>(t.at("offset")), n = json_number<std::uint64_t>(t.at("nbytes"));
      const std::string name = t.at("name").get<std::string>();
      TOPO_CHECK(off <= payload_bytes && n <= payload_bytes - off, "checkpoint {}: tensor '{}' lies outside the payload",
                 path, name);
      TOPO_CHECK(names.insert(name).second, "checkpoint {}: tensor '{}' is listed twice", path, name);
      if (n == 0) continue;
      const auto [it, fresh] = by_offset.emplace(off, std::make_pair(n, name));
      TOPO_CHECK(fresh, "checkpoint {}: tensors '{}' and '{}' share their bytes", path, it->second.second, name);
    }
    for (auto it = by_offset.begin(); it != by_offset.end() && std::next(it) != by_offset.end(); ++it)
      TOPO_CHECK(it->first + it->second.first <= std::next(it)->first, "checkpoint {}: tensors '{}' and '{}' share "
                 "their bytes", path, it->second.second, std::next(it)->second.second);
  } catch (const nlohmann::json::exception& e) {
    fail("checkpoint {}: malformed index: {}", path, e.what());
  }
  return p;
}

}  // namespace

void save_checkpoint(const std::string& path, const Module& model, const Optimizer* optimizer,
                     const Generator* generator, std::int64_t step, const nlohmann::json& metadata,
                     const WeightAverage* average) {
  TOPO_CHECK(!path.empty(), "save_checkpoint: empty path");
  TOPO_CHECK(!average || !average->swapped(),
             "save_checkpoint {}: the weight average is swapped into the parameters (swap it back first)", path);
  // Index and payload layout.
  nlohmann::json index;
  index["format"] = kFormat;
  index["step"] = step;
  index["metadata"] = metadata;
  if (generator) index["rng"] = {{"seed", generator->seed()}, {"offset", generator->offset()}};
  if (optimizer) {
    nlohmann::json groups = nlohmann::json::array();
    for (std::size_t g = 0; g < optimizer->state().size(); ++g) {
      std::vector<std::int64_t> steps;
      for (const ParamState& s : optimizer->state()[g]) steps.push_back(s.step);
      groups.push_back({{"name", optimizer->groups()[g].name}, {"steps", steps}});
    }
    index["optimizer"] = {{"kind", optimizer->kind()}, {"lr", optimizer->lr()}, {"groups", groups}};
  }
  if (average) index["average"] = {{"decay", average->decay()}, {"updates", average->updates()}};
  std::vector<Tensor> host;
  nlohmann::json tensors = nlohmann::json::array();
  std::uint64_t offset = 0;
  for (const auto& [name, t] : live_tensors(model, optimizer, average)) {
    host.push_back(t.to(Device::cpu()));
    tensors.push_back({{"name", name},
                       {"dtype", std::string(dtype_name(t.dtype()))},
                       {"shape", t.shape()},
                       {"offset", offset},
                       {"nbytes", t.nbytes()}});
    offset = align_up(offset + t.nbytes());
  }
  const std::uint64_t payload_bytes = offset;
  std::vector<unsigned char> payload(payload_bytes, 0);
  for (std::size_t i = 0; i < host.size(); ++i)
    if (host[i].nbytes() > 0)
      std::memcpy(payload.data() + tensors[i]["offset"].get<std::uint64_t>(), host[i].raw_data(), host[i].nbytes());
  index["tensors"] = tensors;
  index["payload_bytes"] = payload_bytes;
  index["payload_fnv1a"] = fnv1a(payload.data(), payload.size());
  index["index_fnv1a"] = index_checksum(index);
  const std::string text = index.dump();
  const std::uint64_t index_bytes = text.size();
  const std::vector<unsigned char> pad(align_up(16 + index_bytes) - (16 + index_bytes), 0);

  try {
    write_file_atomically(path, {{kMagic, 8}, {&index_bytes, 8}, {text.data(), text.size()}, {pad.data(), pad.size()},
                                 {payload.data(), payload.size()}});
  } catch (const Error& e) {
    fail("save_checkpoint: {}", e.what());
  }
}

std::string checkpoint_path(const std::string& dir, std::int64_t step) {
  TOPO_CHECK(step >= 0, "checkpoint_path: step must be >= 0, got {}", step);
  return (std::filesystem::path(dir) / fmt::format("step_{:08d}.ckpt", step)).string();
}

std::string latest_checkpoint(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  TOPO_CHECK(fs::is_directory(dir, ec), "latest_checkpoint: {} is not a directory", dir);
  std::string best;
  std::int64_t best_step = -1;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // Exactly "step_<digits>.ckpt"; "step_..ckpt.tmp.XXXXXX" leftovers do not match.
    if (name.size() <= 10 || name.rfind("step_", 0) != 0 || name.substr(name.size() - 5) != ".ckpt") continue;
    const std::string digits = name.substr(5, name.size() - 10);
    if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::int64_t step = std::stoll(digits);
    if (step > best_step) {
      best_step = step;
      best = entry.path().string();
    }
  }
  TOPO_CHECK(!ec, "latest_checkpoint: cannot list {}: {}", dir, ec.message());
  return best;
}

nlohmann::json read_checkpoint_index(const std::string& path) { return parse(path, read_file(path)).index; }

CheckpointInfo load_checkpoint(const std::string& path, Module& model, Optimizer* optimizer, Generator* generator,
                               WeightAverage* average) {
  TOPO_CHECK(!average || !average->swapped(),
             "load_checkpoint {}: the weight average is swapped into the parameters (swap it back first)", path);
  const FileBytes f = read_file(path);
  const Parsed p = parse(path, f);
  const nlohmann::json& index = p.index;
  CheckpointInfo info;
  std::map<std::string, nlohmann::json> stored;
  std::vector<std::pair<std::string, Tensor>> live;
  try {
    for (const auto& t : index.at("tensors")) stored[t.at("name").get<std::string>()] = t;
    live = live_tensors(model, optimizer, average);
    // Validate everything before modifying anything.
    for (const auto& [name, t] : live) {
      const auto it = stored.find(name);
      TOPO_CHECK(it != stored.end(), "checkpoint {}: missing tensor '{}' (the model, optimizer or weight average has it)",
                 path, name);
      const DType dt = parse_dtype(path, name, it->second.at("dtype").get<std::string>());
      const Shape shape = it->second.at("shape").get<Shape>();
      TOPO_CHECK(dt == t.dtype() && shape == t.shape(), "checkpoint {}: tensor '{}' is {}{} in the file but {}{} live",
                 path, name, dtype_name(dt), shape_str(shape), dtype_name(t.dtype()), shape_str(t.shape()));
      TOPO_CHECK(json_number<std::uint64_t>(it->second.at("nbytes")) == t.nbytes(),
                 "checkpoint {}: tensor '{}' has a wrong byte count", path, name);
      if (dt == DType::F32) {  // weights and optimizer state are finite in any run that trains; NaN evaluates to nan
        const unsigned char* bytes = f.bytes.data() + p.payload_start + json_number<std::uint64_t>(it->second.at("offset"));
        for (std::int64_t i = 0; i < t.numel(); ++i) {
          std::uint32_t bits = 0;
          std::memcpy(&bits, bytes + 4 * i, 4);
          TOPO_CHECK((bits & 0x7f800000u) != 0x7f800000u,
                     "checkpoint {}: tensor '{}' holds {} at element {}: the run that wrote it had diverged, or the "
                     "file was altered", path, name, (bits & 0x007fffffu) != 0 ? "NaN" : "an infinity", i);
        }
      }
    }
    for (const auto& [name, t] : stored) {
      if (name.rfind("optim/", 0) == 0 && !optimizer) continue;     // optimizer state not requested
      if (name.rfind("average/", 0) == 0 && !average) continue;    // weight average not requested
      bool found = false;
      for (const auto& l : live) found = found || l.first == name;
      TOPO_CHECK(found, "checkpoint {}: unexpected tensor '{}' (not in the live model/optimizer)", path, name);
    }
    if (optimizer) {
      TOPO_CHECK(index.contains("optimizer"), "checkpoint {}: holds no optimizer state", path);
      const auto& o = index.at("optimizer");
      TOPO_CHECK(o.at("kind").get<std::string>() == optimizer->kind(),
                 "checkpoint {}: optimizer is '{}' in the file but '{}' live", path, o.at("kind").get<std::string>(),
                 optimizer->kind());
      TOPO_CHECK(o.at("groups").size() == optimizer->state().size(),
                 "checkpoint {}: {} optimizer groups in the file but {} live", path, o.at("groups").size(),
                 optimizer->state().size());
      for (std::size_t g = 0; g < optimizer->state().size(); ++g)
        TOPO_CHECK(o.at("groups")[g].at("steps").size() == optimizer->state()[g].size(),
                   "checkpoint {}: optimizer group {} has {} params in the file but {} live", path, g,
                   o.at("groups")[g].at("steps").size(), optimizer->state()[g].size());
    }
    if (generator) TOPO_CHECK(index.contains("rng"), "checkpoint {}: holds no RNG state", path);
    if (average) {
      TOPO_CHECK(index.contains("average"), "checkpoint {}: holds no weight average", path);
      const float decay = json_number<float>(index.at("average").at("decay"));
      TOPO_CHECK(decay == average->decay(), "checkpoint {}: weight average decay is {} in the file but {} live", path,
                 decay, average->decay());
      TOPO_CHECK(json_number<std::int64_t>(index.at("average").at("updates")) >= 0,
                 "checkpoint {}: negative weight average update count", path);
    }

    // Apply.
    for (auto& [name, t] : live) {
      const auto off = json_number<std::uint64_t>(stored[name].at("offset"));
      Tensor src = Tensor::empty(t.shape(), t.dtype(), Device::cpu());
      if (t.nbytes() > 0) std::memcpy(src.raw_data(), f.bytes.data() + p.payload_start + off, t.nbytes());
      t.copy_from(src);  // into the live storage, on its device
    }
    if (optimizer) {
      const auto& o = index.at("optimizer");
      for (std::size_t g = 0; g < optimizer->state().size(); ++g)
        for (std::size_t i = 0; i < optimizer->state()[g].size(); ++i)
          optimizer->state()[g][i].step = json_number<std::int64_t>(o.at("groups")[g].at("steps")[i]);
      optimizer->set_lr(json_number<float>(o.at("lr")));
    }
    if (average) average->set_updates(json_number<std::int64_t>(index.at("average").at("updates")));
    if (generator) {
      generator->set_seed(json_number<std::uint64_t>(index.at("rng").at("seed")));
      generator->advance(json_number<std::uint64_t>(index.at("rng").at("offset")));
    }
    info.step = json_number<std::int64_t>(index.at("step"));
    info.metadata = index.value("metadata", nlohmann::json());
  } catch (const nlohmann::json::exception& e) {
    fail("checkpoint {}: malformed index: {}", path, e.what());
  }
  // Gradients from before the load belong to other parameter values.
  model.zero_grad();
  return info;
}

}  // namespace topo::nn
