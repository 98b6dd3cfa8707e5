// The collectives engine of the CUDA backend: NCCL. Every replica of every process is one NCCL
// rank (rank = process * R + replica), on its own GPU; each gradient bucket is averaged in
// place by one ncclAllReduce (ncclAvg), and each broadcast bucket (sharded optimizer state)
// sent from its owner's rank by one in-place ncclBroadcast, which the executor captures into
// the train step on the device's collectives stream, ordered against the compute stream by
// events. The unique id
// goes from rank 0 to the others over MPI (HostGroup::broadcast); the R communicators of a
// process are created in one NCCL group.
//
// Nothing waits without a deadline: a watchdog thread bounds the communicators' setup by the
// collective timeout, polls each communicator's asynchronous error, and watches every train
// step through an event recorded after it; a step that has not finished within the timeout, or
// an NCCL error, aborts the communicators and ends the job (exit 6) with a message naming the
// step, its buckets and where they come from, and what the other ranks say.
//
// NEVER RUN ON A GPU: compiled and linked here; its watchdog bookkeeping (StepWatch.h) is tested
// on the host and the library it loads is checked (docs/cuda.md).
#pragma once

#include "runtime/device/Collectives.h"

#include <memory>

namespace dp::rt::cuda {

/// The engine of `setup`'s buckets (the plan's manifest, in order) on its devices (CUDA
/// devices of this backend) over the processes of its group: CudaBackend::makeCollectives.
/// Throws Error(Launch) when NCCL cannot be loaded or set up.
std::unique_ptr<CollectiveEngine> makeNcclEngine(const CollectivesSetup &setup);

} // namespace dp::rt::cuda
