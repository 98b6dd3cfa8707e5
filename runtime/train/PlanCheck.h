// The one check of a plan that every path of dprun makes before it runs anything: `--inspect`
// (so that a plan it accepts is one dprun runs), `--check-gradients` and a training run. Each
// check a run made of the plan on its way to the first step (loading the program, building its
// kernels, constructing the training loop, launching a parameter-server job) is here, made
// without opening a device or allocating an arena; those places call the same functions.
#pragma once

#include "runtime/format/Plan.h"

#include <string>

namespace dp::rt {

/// Throws Error(Plan), naming `path`, for a plan that a run would refuse. Over what Plan::read
/// verified (structure, buffers inside the arena, ids, the collectives' protocol):
///  - every compute kernel of both steps, and of each server's plan, against the kernel
///    contract (contract::checkPlanKernels);
///  - the parameters, as Program::load takes them: f32, an initialiser that can be drawn for
///    the parameter's size, and a gradient buffer (where one is named) of the parameter's size;
///  - what the training loop feeds and reads (checkTrainingInterface);
///  - the classes a classifier predicts: 1 to 256, what byte labels allow (a regression has
///    float targets);
///  - the strategy's limits: a parameter-server plan has a constant learning rate, a CUDA
///    plan's buckets cross the processes as f32.
/// Left to the run, because they are the machine's or the data's: a backend and a device for
/// the plan's device kind, the memory its arenas need, and a data set of its image size.
void checkRunnable(const Plan &plan, const std::string &path);

/// The inputs and outputs the training loop uses, on every replica, found by role: a samples
/// input f32 or i32 (token ids) [shard rows, ...] and a targets input i32[shard rows] (class
/// labels) or f32[shard rows, K] (a regression's) (the global batch split evenly over R x P
/// replicas), f32 scalar loss outputs of both steps and a classifier's correct output of the
/// eval step (of the train step too, where it has one). The Trainer calls it on the plan it
/// runs.
void checkTrainingInterface(const Plan &plan, const std::string &path);

} // namespace dp::rt
