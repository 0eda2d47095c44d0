#pragma once
// The one place a config becomes a model: adding an encoder is one branch in make_encoder.
#include <memory>

#include "apps/train/config.hpp"
#include "models/heads.hpp"
#include "models/model.hpp"

namespace topo::apps {

// Input features per token of the configured task (masked-sum: d).
std::int64_t task_input_dim(const TrainConfig& config);
// The encoder named by config.model: deepsets, star (config.variant, config.residual) or transformer.
// `gen` drives DeepSets' dropout masks (default generator when null); the attention encoders draw theirs
// from nn::default_generator(), which is what the trainer passes and checkpoints.
std::shared_ptr<models::SequenceEncoder> make_encoder(const TrainConfig& config, nn::Generator* gen = nullptr);
// Encoder + the task's head (masked-sum: a regressor to d - 1 outputs), parameters not yet reset.
std::shared_ptr<models::SequenceModel> make_task_model(const TrainConfig& config, nn::Generator* gen = nullptr);

}  // namespace topo::apps
