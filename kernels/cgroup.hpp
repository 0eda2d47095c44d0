#pragma once
// Reading this process's control groups (cgroup v2's unified hierarchy and v1's per-controller ones): the CPU
// quota (kernels/threads.cpp) and the memory limit (kernels/memory.cpp) come from the same walk.
#include <functional>
#include <string>

namespace topo {

// The first line of a file, or "" when it cannot be read (a /proc or /sys file that this kernel lacks).
std::string read_first_line(const std::string& path);

// Calls visit(dir, v2) for every cgroup directory that governs `controller` ("cpu", "memory") for this process:
// from its own cgroup up to the root, since a parent's limit binds its children too. v2: the unified hierarchy
// (/sys/fs/cgroup/...); v1: the hierarchy whose controllers list `controller`. Inside a cgroup namespace the
// path is "/".
void for_each_cgroup_dir(const std::string& controller, const std::function<void(const std::string& dir, bool v2)>& visit);

}  // namespace topo
