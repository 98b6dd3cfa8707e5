// What `dpc compile` prints about the program it compiled, read off the planned program: the
// steps' kernel counts, the layout of the job (devices, processes, replicas), the allreduce
// buckets, the products' FLOPs and the memory per device.
#pragma once

#include "dialect/Plan/IR/PlanDialect.h"
#include "llvm/Support/raw_ostream.h"

namespace dp::reports {

/// Prints the report of `program`; `lrFactor` is the factor the compile multiplied the
/// learning rate by for the replicas (1: none), `ms` the compile time.
void printCompileReport(plan::ProgramOp program, double lrFactor, double ms,
                        llvm::raw_ostream &os);

/// Prints the FLOPs of the products of the train and eval steps (runtime/format/Flops.h: what
/// dprun's MFU counts), per process and per sample, and each kind's share of the train step.
void printFlops(plan::ProgramOp program, llvm::raw_ostream &os);

/// Prints how many convolution kernels of each step read their weights as stored and how many
/// through a blocked copy (plan-assign-layouts), with the bytes of those copies (their live
/// taps: the library may pad its blocks); nothing for a CUDA program, whose library picks its
/// own layouts.
void printWeightLayouts(plan::ProgramOp program, llvm::raw_ostream &os);

/// The servers' programs beside a parameter-server workers' program, by server index.
llvm::SmallVector<plan::ProgramOp> serverPrograms(plan::ProgramOp workers);
/// Prints which server holds which parameters, with their bytes and their optimizer state's.
void printParameterPlacement(plan::ProgramOp workers, llvm::raw_ostream &os);

} // namespace dp::reports
