// RUN: dp-opt %s -split-input-file -graph-expand-optimizer -verify-diagnostics
// RUN: not dp-opt %s -split-input-file -graph-expand-optimizer=lr-scale=-1 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not dp-opt %s -split-input-file -graph-expand-optimizer=lr-schedule=cosine 2>&1 | FileCheck %s --check-prefix=SCHED

// The preconditions of graph-expand-optimizer, on hand-written steps.

// Tests that the pass needs a train step.
// expected-error @+1 {{no train step (run graph-derive-steps first)}}
module {
  func.func @eval() attributes {graph.step = "eval"} {
    return
  }
}

// -----

// Tests that the train step needs a valid optimizer.
// expected-error @+1 {{the train step has no valid 'graph.optimizer'}}
func.func @train(%g: tensor<4xf32>) attributes {graph.step = "train", graph.optimizer = #graph.zeros} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.apply_gradient %w, %g : tensor<4xf32>
  return
}

// -----

// Tests that lr-scale must be positive (checked by the second RUN line; with the default scale
// the step expands).
// SCALE: error: lr-scale must be positive, found -1.000000e+00
// SCHED: error: lr-schedule 'cosine': 'cosine' needs epochs=...
func.func @train(%g: tensor<4xf32>) attributes {graph.step = "train", graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.apply_gradient %w, %g : tensor<4xf32>
  return
}
