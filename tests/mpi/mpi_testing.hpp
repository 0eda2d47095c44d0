#pragma once
// The data-parallel suite's world (tests/mpi/main.cpp creates it before doctest runs).
#include <memory>

#include "dist/communicator.hpp"

namespace topo::testing {
dist::Communicator& world();
}
