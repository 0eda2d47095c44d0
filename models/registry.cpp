#include "models/registry.hpp"


namespace topo::models {

// Each defined in its model's folder (<folder>/registration.cpp).
ModelRegistration deepsets_registration();
ModelRegistration star_transformer_registration();
ModelRegistration transformer_registration();
ModelRegistration multiscale_transformer_registration();
ModelRegistration big_transformer_registration();
ModelRegistration gcn_registration();
ModelRegistration gat_registration();
ModelRegistration sage_registration();
ModelRegistration topology_transformer_registration();

namespace {

// The one list of models (see registry.hpp for why a list): a new model adds its line here.
std::vector<ModelRegistration> build_registry() {
  std::vector<ModelRegistration> models = {deepsets_registration(), star_transformer_registration(),
                                           transformer_registration(), multiscale_transformer_registration(),
                                           big_transformer_registration(),  topology_transformer_registration(),
                                           gcn_registration(), gat_registration(), sage_registration()};
  for (std::size_t i = 0; i < models.size(); ++i) {
    const ModelRegistration& m = models[i];
    TOPO_CHECK(!m.name.empty() && m.make, "model registration {} has no name or no factory", i);
    for (std::size_t j = 0; j < i; ++j)
      TOPO_CHECK(models[j].name != m.name, "model '{}' is registered twice", m.name);
    // One name is one flag: models may give it their own default and choices, not another type.
    for (const ModelOption& o : m.options)
      for (std::size_t j = 0; j < i; ++j)
        for (const ModelOption& other : models[j].options)
          TOPO_CHECK(other.name != o.name || value_kind(other.default_value) == value_kind(o.default_value),
                     "model '{}' declares option '{}' as {}, model '{}' as {}", m.name, o.name,
                     value_kind(o.default_value), models[j].name, value_kind(other.default_value));
    for (const auto& [task, recipe] : m.recipes)
      TOPO_CHECK(recipe.is_object() && !recipe.contains("model") && !recipe.contains("task"),
                 "model '{}': the recipe for task '{}' must be an object of config fields other than model and "
                 "task, got {}",
                 m.name, task, recipe.dump());
  }
  return models;
}

}  // namespace

const std::vector<ModelRegistration>& registered_models() {
  static const std::vector<ModelRegistration> models = build_registry();
  return models;
}

const ModelRegistration& find_model(const std::string& name) {
  for (const ModelRegistration& m : registered_models())
    if (m.name == name) return m;
  fail("unknown model '{}': expected one of {}", name, registered_model_names());
}

std::string registered_model_names() {
  std::string names;
  for (const ModelRegistration& m : registered_models()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

std::string models_declaring(const std::string& name) {
  std::string names;
  for (const ModelRegistration& m : registered_models())
    for (const ModelOption& o : m.options)
      if (o.name == name) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

nlohmann::json model_recipe(const std::string& model, const std::string& task) {
  for (const ModelRegistration& m : registered_models())
    if (m.name == model) {
      const auto recipe = m.recipes.find(task);
      return recipe == m.recipes.end() ? nlohmann::json::object() : recipe->second;
    }
  return nlohmann::json::object();
}

}  // namespace topo::models
