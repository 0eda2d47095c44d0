#pragma once
// The one place a config becomes a task and a model: encoders come from the model registry
// (models/registry.hpp: adding one changes nothing here), adding a task is one branch in make_task.
#include <memory>

#include "apps/tasks/task.hpp"
#include "apps/train/config.hpp"
#include "models/heads.hpp"
#include "models/model.hpp"

namespace topo::apps {

// The classify task's options from a config (defaults: mtl dev = last 200 training lines, truncation 256).
struct ClassifyOptions;
ClassifyOptions classify_options(const TrainConfig& config);
// The tag task's options from a config (pieces of at most max_len tokens, 256 by default).
struct TagOptions;
TagOptions tag_options(const TrainConfig& config);

// The task named by config.task, its data read / generated (classify: files read, vocabulary built).
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

}  // namespace topo::apps
