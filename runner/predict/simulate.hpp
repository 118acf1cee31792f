#pragma once
// The timeline model: a discrete-event simulation of one repetition of an experiment on the
// device a profile describes (docs/prediction.md). The host issues the ops in order, paying each
// call's cost and blocking where the call waits; the device runs each stream in order, behind
// its events, the legacy stream's barriers and the hardware queue its stream maps onto; copies
// share their direction's link, kernels the SMs block by block (higher priority first at
// dispatch, no preemption), and everything the device memory's bandwidth.
#include <cmath>
#include <string>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/profile.hpp"

namespace streamlab {

struct ModelOptions {
  bool gate = true;      // the start gate holds the streams while the repetition is issued
  int connections = 0;   // hardware queues; 0: connections_of(exp, profile)
  bool host_costs = true;  // false for a graph's body: its launch issues every node at once
};

struct ModelOp {
  double issue_ms = 0, return_ms = 0;  // the host's call
  double start_ms = NAN, end_ms = NAN; // its device work (NaN: none)
};

struct ModelRun {
  std::vector<ModelOp> ops;       // by op index; times from the repetition's first issue
  double gate_open_ms = NAN;      // when the gate opened (NaN: no gate)
  double end_ms = 0;              // the final device synchronize's return
  int connections = 0;            // the hardware queues it was modelled with
  // Ops the model could not time (their cost is unknown), with why: the prediction leaves them
  // their least cost and says so.
  std::vector<std::pair<int, std::string>> unknown;
};

ModelRun simulate(const Experiment& exp, const DeviceProfile& profile, const ModelOptions& options);

// The hardware queues the experiment runs with: its env's CUDA_DEVICE_MAX_CONNECTIONS, else the
// profile's default.
int connections_of(const Experiment& exp, const DeviceProfile& profile);

}  // namespace streamlab
