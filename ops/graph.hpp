#pragma once
// What the cuda backend asks of graph ops after a run (ops/graph.cpp).
#include "runner/backend.hpp"
#include "runner/cuda_state.hpp"

namespace streamlab {

// Turns CUPTI's records of the graph's nodes (sample.graph_nodes) into the device time of each
// captured op in one replay (sample.body_ms). Leaves body_ms empty when the nodes cannot be told
// apart.
void assign_graph_body_times(const CudaState& s, const Op& graph, OpSample& sample);

}  // namespace streamlab
