#pragma once
// The graph layer in one include: heterographs, builders, batching, blocks, homogeneous views, DOT export,
// structure queries and transforms (DGL parity).
#include "graph/batch.hpp"
#include "graph/block.hpp"
#include "graph/builders.hpp"
#include "graph/dot.hpp"
#include "graph/edge_list.hpp"
#include "graph/heterograph.hpp"
#include "graph/homogeneous.hpp"
#include "graph/structure.hpp"
