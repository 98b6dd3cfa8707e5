// The backends this build has.
#pragma once

namespace dp::rt {

/// Registers every backend this build has (the CPU; CUDA where built with it). Idempotent.
void registerBuiltinBackends();

} // namespace dp::rt
