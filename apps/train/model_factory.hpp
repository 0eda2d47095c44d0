#pragma once
// The one place a config becomes a task and a model: tasks come from the task registry
// (apps/tasks/registry.hpp), encoders from the model registry (models/registry.hpp); adding either changes
// nothing here.
#include <memory>

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

}  // namespace topo::apps
