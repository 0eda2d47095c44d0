#pragma once
// Checkpoints: named parameters + optimizer state + RNG state + weight averages + step + a JSON metadata blob
// in one file.
//
// Layout (little-endian):
//   "TOPOCKP1" (8 bytes) | u64 index_bytes | JSON index | zero padding to a 64-byte boundary | payload
// The JSON index holds {"format", "step", "rng": {seed, offset}, "metadata", "optimizer": {kind, lr,
// groups: [{name, steps: [...]}]}, "tensors": [{name, dtype, shape, offset, nbytes}], "payload_bytes",
// "payload_fnv1a", "index_fnv1a"} with offsets relative to the payload start. index_fnv1a (format 2) is the
// checksum of the index's JSON without it; format 1 files, written before it, have none and load as before.
// Parameters are stored as "param/<name>", optimizer buffers as "optim/<group>/<index>/<buffer>".
//
// Writing is atomic: a temp file in the target's directory is written, fsynced and renamed over the
// target (then the directory is fsynced), so a crash leaves either the old file or the new one, never a
// partial one; on any failure the temp file is removed. Loading checks the magic, sizes and the index's and
// the payload's checksums (a truncated or corrupt file is a topo::Error naming the file) and validates names,
// shapes and dtypes against the live model and optimizer before touching them, reporting the first mismatch by name.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "nn/module.hpp"
#include "nn/ops.hpp"
#include "nn/optim.hpp"
#include "nn/weight_average.hpp"

namespace topo::nn {

struct CheckpointInfo {
  std::int64_t step = 0;
  nlohmann::json metadata;  // null when none was saved
};

// `optimizer`, `generator` and `average` may be null (not saved); an average must not be swapped in. Tensors on
// CUDA are copied to the host.
void save_checkpoint(const std::string& path, const Module& model, const Optimizer* optimizer,
                     const Generator* generator, std::int64_t step, const nlohmann::json& metadata = {},
                     const WeightAverage* average = nullptr);

// Restores into live objects (parameters keep their device; data is copied into them). A null
// optimizer / generator / average skips that part; a non-null one requires it in the file.
CheckpointInfo load_checkpoint(const std::string& path, Module& model, Optimizer* optimizer,
                               Generator* generator, WeightAverage* average = nullptr);

// A directory of checkpoints, one file per step: "<dir>/step_00000042.ckpt" (zero-padded so names sort by
// step). latest_checkpoint returns the path with the highest step, or "" when there is none (temp files
// from interrupted saves are ignored); a missing directory is an error naming it.
std::string checkpoint_path(const std::string& dir, std::int64_t step);
std::string latest_checkpoint(const std::string& dir);

// Only the index (for tools: inspect a checkpoint's step, metadata, tensor list). Validates the header.
nlohmann::json read_checkpoint_index(const std::string& path);

}  // namespace topo::nn
