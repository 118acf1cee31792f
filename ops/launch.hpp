#pragma once
// Reading a call of a kernel (`kernel`, `grid`, `block`, `shared`, `args`), for a launch and for
// a `reference` check that applies a built-in kernel's host reference to buffers it names.
#include "runner/core/experiment.hpp"

namespace streamlab {

class MapReader;

// Reads the call into op.kernel, grid, block, shared_bytes and args, type-checked against the
// kernel's signature. `builtin_on_host`: only built-in kernels, and their buffers may be host
// memory (a check computes on host copies). `also` reads the caller's own keys, after `shared`.
// Returns whether the call is complete and valid.
bool read_kernel_call(MapReader& r, Op& op, bool builtin_on_host,
                      void (*also)(MapReader&, Op&) = nullptr);

}  // namespace streamlab
