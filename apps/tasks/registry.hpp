#pragma once
// The tasks topo-train and topo-eval know, by name, as models/registry.hpp names the models. A task is one
// folder under apps/tasks/ (its reader, batching, loss, metric and evaluation behind task.hpp's Task) whose
// registration.cpp declares its options with their defaults, checks them, and builds the task; registry.cpp
// lists the registrations. The trainer, the evaluator and the command line know tasks only through this table,
// so adding a task touches its folder and that list (apps/README.md walks through one).
//
// An explicit list for the reason models/registry.hpp gives (the linker drops unreferenced objects of a static
// library); register_task() adds one at run time for programs and tests built on the library.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tasks/task.hpp"
#include "kernels/device.hpp"
#include "models/option.hpp"

namespace topo::apps {

// What the task feeds the model: the model must read it (ModelRegistration::reads_*).
enum class TaskInput { TokenIds, Features, Graph };
std::string task_input_name(TaskInput input);  // "token ids", "features", "a graph"

// What a task is built from: its own options (every one it declares, defaults filled in) and the run's
// settings every task may use.
struct TaskSettings {
  nlohmann::json options = nlohmann::json::object();
  std::int64_t batch = 64;       // training batch (a default evaluation batch may follow it)
  std::int64_t eval_batch = 0;   // sequences per evaluation batch; 0: the task's default
  std::uint64_t seed = 1;        // data generation and splits

  // One of `options`, typed; a missing or mistyped one is a topo::Error naming it.
  template <class T>
  T option(const std::string& name) const {
    return models::option_value<T>(options, name, "task");
  }
};

// topo-eval's request: score a saved model of this task on one file. The checkpoint's metadata rebuilds the
// task's inputs (vocabulary, labels, reading options) so the file is read as training read its files.
struct FileEvaluation {
  std::string checkpoint;          // the .ckpt file (for messages)
  nlohmann::json config;           // the training run's config (flat, TrainConfig::to_json)
  nlohmann::json metadata;         // the task's Task::metadata() as saved
  std::string test, format;        // the file to score; its format (empty: the training format)
  std::int64_t batch = 128;
  bool skip_bad = false;
  std::string predictions;         // where to write per-token predictions (tasks that have them; empty: none)
  Device device = Device::cpu();
  // Builds the checkpoint's model for `task` (encoder + head), on `device`, its parameters loaded.
  std::function<std::shared_ptr<models::SequenceModel>(const Task& task)> load_model;
};

struct TaskRegistration {
  std::string name;     // --task NAME
  std::string summary;  // one line for --help
  TaskInput input = TaskInput::TokenIds;
  std::vector<models::Option> options;
  // Checks the options against each other (their types and choices are checked already); a topo::Error
  // models::fail_invalid_field(...) naming the field and value otherwise. May be empty.
  std::function<void(const TaskSettings&)> validate;
  // Reads or generates the data.
  std::function<std::unique_ptr<Task>(const TaskSettings&)> make;
  // topo-eval: the result JSON of scoring `request.test`; its "report" is the text topo-eval prints. Empty:
  // topo-eval refuses checkpoints of this task.
  std::function<nlohmann::json(const FileEvaluation& request)> evaluate_file;
};

// In the order of registry.cpp's list, then those added by register_task. A deque: adding one keeps references.
const std::deque<TaskRegistration>& registered_tasks();
// The task registered as `name`; a topo::Error listing the registered names otherwise.
const TaskRegistration& find_task(const std::string& name);
// "masked-sum, mirrored-sum, classify, tag, node-classify".
std::string registered_task_names();
// Adds a task (a test's toy task, a program's own): the same checks as the list's (a name, a factory, no name
// twice, option types agreeing with other tasks'). Not thread-safe: call before training starts.
void register_task(TaskRegistration task);
// The registered tasks declaring option `name`, comma-separated ("classify, tag").
std::string tasks_declaring(const std::string& name);

}  // namespace topo::apps
