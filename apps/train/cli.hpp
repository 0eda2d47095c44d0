#pragma once
// The command line of topo-train: every TrainConfig field and model option as a flag (--train-size for
// train_size; bool fields as switches), plus --config FILE.json. Precedence, later wins: the defaults, the
// recipe the model registers for the task (models/registry.hpp; task and model as the flags, else the file,
// else the defaults choose them), the file, then the flags in the order given. Flags override the file wherever
// they stand, and a recipe's min_steps yields to epochs the user gave. TrainConfig::sources records who set what.
// Types are checked here; the config's consistency once, by TrainConfig::validate (Trainer::run calls it).
#include <optional>
#include <ostream>
#include <string_view>

#include "apps/train/config.hpp"

namespace CLI {
class App;
}

namespace topo::apps {

// Parses argv into `app` the way every topo program does: false after --help (printed to `out`); a bad flag
// is a topo::Error "<program>: <what> (see --help)".
bool parse_command_line(CLI::App& app, int argc, const char* const* argv, std::ostream& out);

// What every topo program prints (after "<program>: error: ") when an allocation fails: a graph, batch or model
// larger than the memory the process may use, not a bug (exit 1, not the internal error's 2).
inline constexpr const char* kOutOfMemory =
    "out of memory (an allocation failed): the run needs more memory than this machine or its limit gives; "
    "a smaller --batch, --max-len, model or graph needs less";

// main() of the small tools (topo-topology, topo-graph): `run`, with a topo::Error printed as the one line
// "<program>: <what>" (exit 1; parse_command_line's own "<program>: " prefix is not repeated), std::bad_alloc as
// "<program>: error: kOutOfMemory" (exit 1) and anything else as "<program>: internal error: <what>" (exit 2).
int run_tool(std::string_view program, int (*run)(int, char**), int argc, char** argv);

// Returns nullopt when --help was requested (the help text goes to `out`). Bad flags, unreadable or
// malformed config files, values of the wrong type and another task's or model's options are topo::Errors
// naming the flag or field.
std::optional<TrainConfig> parse_train_args(int argc, const char* const* argv, std::ostream& out);

}  // namespace topo::apps
