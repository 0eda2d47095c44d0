#pragma once
// The one place a config becomes a task and a model: tasks come from the task registry
// (apps/tasks/registry.hpp), encoders from the model registry (models/registry.hpp); adding either changes
// nothing here.
#include <memory>
#include <string>
#include <vector>

#include "apps/tasks/registry.hpp"
#include "apps/tasks/task.hpp"
#include "apps/train/config.hpp"
#include "models/heads.hpp"
#include "models/model.hpp"

namespace topo::apps {

// The task named by config.task, its data read / generated (classify: files read, vocabulary built). The
// config is taken as validated (TrainConfig::validate, which Trainer::run calls once).
std::unique_ptr<Task> make_task(const TrainConfig& config);

// The registered encoder named by config.model, built from the config's sizes, the model's own options
// (config.options_of_model()) and the task's inputs (vocabulary or features, longest sequence, pre-trained
// vectors). `gen` drives the dropout masks of models that take a generator (DeepSets; default generator when
// null); the attention encoders draw theirs from nn::default_generator(), which is what the trainer passes
// and checkpoints.
std::shared_ptr<models::SequenceEncoder> make_encoder(const TrainConfig& config, const Task& task,
                                                      nn::Generator* gen = nullptr);
// Encoder + the task's head, parameters not yet reset.
std::shared_ptr<models::SequenceModel> make_task_model(const TrainConfig& config, const Task& task,
                                                       nn::Generator* gen = nullptr);

// μP's Adam rule across widths (Yang et al. 2021, "Tensor Programs V"), for an lr tuned at hidden =
// config.lr_base_width: Adam moves every entry of a weight by about lr a step, so a Linear whose fan-in grows
// with the width changes its output fan_in / base_fan_in times as much as at the tuned width. Such a weight
// learns at lr x base_fan_in / fan_in instead (never above lr: only wider models were measured). Which Linears
// grow, and how (fan_in = k hidden + c), is read off a second model built at hidden + heads; embedding tables,
// biases, norms and fixed-width Linears keep the lr. Empty when lr_base_width is 0 or not below hidden.
struct WidthLrScale {
  std::string name;  // the Linear's module name
  nn::Var weight;
  std::int64_t fan_in = 0, base_fan_in = 0;
  float scale() const { return static_cast<float>(base_fan_in) / static_cast<float>(fan_in); }
};
std::vector<WidthLrScale> width_lr_scales(const TrainConfig& config, const Task& task, const nn::Module& model);

}  // namespace topo::apps
