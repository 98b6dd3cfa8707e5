// Questions about a plan that the training loop and `dprun --inspect` ask: how many classes the
// model predicts, how many trainable weights it has, and a human-readable summary.
#pragma once

#include "runtime/base/Text.h"
#include "runtime/format/Plan.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace dp::rt {

/// Sum of the element counts of the parameters of kind Weight (optimizer state excluded).
int64_t countWeights(const Plan &plan);

/// The number of classes: the last dimension of the logits fed to the loss (softmax_xent) or
/// accuracy (count_correct) kernel of either step; `fallback` when the plan has neither.
int64_t numClasses(const Plan &plan, int64_t fallback = 10);

/// Floats of targets per sample: K where the plan's targets input is a regression's f32
/// [rows, K]; 0 where it takes class labels (i32), or has no targets input.
int64_t targetWidth(const Plan &plan);
/// Whether the plan's float targets are yes/no answers (its loss the binary cross-entropy, with
/// a binary accuracy) rather than a regression's values.
bool binaryTargets(const Plan &plan);
/// What a plan's float targets are, for messages: "K yes/no target(s)" or "K regression
/// target(s)".
std::string targetsText(const Plan &plan);

/// The rows of the smallest table a gather (an embedding) looks token ids up in; 0 when the
/// plan has none.
int64_t tokenVocabulary(const Plan &plan);

/// The optimizer's learning rate before any schedule: the first update kernel's of the train
/// step (0 for a plan without one).
double learningRate(const Plan &plan);

/// Writes a summary of `plan` read from `path`: producer, model, batch, arena and persistent
/// bytes, inputs, parameters with shapes and initialisers, buffers, and each step's kernels.
void describePlan(const Plan &plan, const std::string &path, std::ostream &out);

/// Throws Error(Plan) for a plan that --check-gradients cannot check: a parameter-server plan
/// (the check runs one process's plan, and a parameter-server job's updates run on other
/// processes), a data-parallel plan (its train step averages the gradients of replicas that
/// the check does not run), or a mixed-precision plan (bf16 products round the loss more
/// coarsely than finite differences can resolve).
void refuseUncheckablePlan(const Plan &plan, const std::string &path);

} // namespace dp::rt
