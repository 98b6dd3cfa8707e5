// The process's work counter: every kernel run, step enqueued, chunk of a file written and
// chunk of a data set read, hashed or resized adds one. A rank whose wait for the others passed
// its deadline asks them for their counts, twice: a rank whose count grew is slow (a long step,
// a loaded machine, a long data load, a checkpoint being written), one whose count stands
// still is hung (see comm::StallWatch). A parameter server asks its silent workers the same.
#pragma once

#include <atomic>
#include <cstdint>

namespace dp::rt::heartbeat {

inline std::atomic<uint64_t> counter{0};

/// Counts one piece of work done by this process.
inline void beat() { counter.fetch_add(1, std::memory_order_relaxed); }

/// The work done by this process so far.
inline uint64_t count() { return counter.load(std::memory_order_relaxed); }

} // namespace dp::rt::heartbeat
