#include "apps/tasks/registry.hpp"

namespace topo::apps {

// Each defined in its task's folder (<folder>/registration.cpp).
TaskRegistration masked_sum_registration();
TaskRegistration mirrored_sum_registration();
TaskRegistration classify_registration();
TaskRegistration tag_registration();
TaskRegistration node_classify_registration();
TaskRegistration nli_registration();

namespace {

void check_registration(const std::deque<TaskRegistration>& known, const TaskRegistration& t) {
  TOPO_CHECK(!t.name.empty() && t.make, "task registration {} has no name or no factory", known.size());
  for (const TaskRegistration& other : known) {
    TOPO_CHECK(other.name != t.name, "task '{}' is registered twice", t.name);
    // One name is one flag: tasks may give it their own default and help, not another type.
    for (const models::Option& o : t.options)
      for (const models::Option& theirs : other.options)
        TOPO_CHECK(theirs.name != o.name || models::value_kind(theirs.default_value) == models::value_kind(o.default_value),
                   "task '{}' declares option '{}' as {}, task '{}' as {}", t.name, o.name,
                   models::value_kind(o.default_value), other.name, models::value_kind(theirs.default_value));
  }
}

// The one list of tasks: a new task adds its line here.
std::deque<TaskRegistration>& registry() {
  static std::deque<TaskRegistration> tasks = [] {
    std::deque<TaskRegistration> out;
    for (TaskRegistration t : {masked_sum_registration(), mirrored_sum_registration(), classify_registration(),
                               tag_registration(), nli_registration(), node_classify_registration()}) {
      check_registration(out, t);
      out.push_back(std::move(t));
    }
    return out;
  }();
  return tasks;
}

}  // namespace

std::string task_input_name(TaskInput input) {
  switch (input) {
    case TaskInput::TokenIds: return "token ids";
    case TaskInput::Features: return "features";
    case TaskInput::Graph: return "a graph";
  }
  return "?";
}

const std::deque<TaskRegistration>& registered_tasks() { return registry(); }

const TaskRegistration& find_task(const std::string& name) {
  for (const TaskRegistration& t : registry())
    if (t.name == name) return t;
  fail("unknown task '{}': expected one of {}", name, registered_task_names());
}

std::string registered_task_names() {
  std::string names;
  for (const TaskRegistration& t : registry()) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

void register_task(TaskRegistration task) {
  check_registration(registry(), task);
  registry().push_back(std::move(task));
}

std::string tasks_declaring(const std::string& name) {
  std::string names;
  for (const TaskRegistration& t : registry())
    for (const models::Option& o : t.options)
      if (o.name == name) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

}  // namespace topo::apps
