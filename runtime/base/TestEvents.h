// Events a test can wait for, and a stop it can ask for at an exact place: the hooks that make
// the fault tests deterministic (they trigger on what the job itself reports, never on wall
// time, CPU time or a line a launcher may forward late). Both are off unless the environment
// names them, which only tests do:
//
//   DPRUN_TEST_EVENTS=DIR    each process appends one line per event to DIR/rank<R>.events
//                            (R: its rank in the job), written unbuffered as it happens:
//                              start pid=<pid>        the process joined the job
//                              epoch <e>              a training epoch begins
//                              checkpoint <step>      a checkpoint of that step is in place
//                              stopped <n> pid=<pid>  the stop below, just before it happens
//                              resumed <k> of <n> bytes  of rank 0's checkpoint, the bytes
//                                                     this rank kept (state sharded over the
//                                                     processes: not the others' shares)
//   DPRUN_TEST_STOP=R:N      the process of rank R stops itself (SIGSTOP, every thread) just
//                            before its training step N (a parameter server: before its update
//                            N), so that a test's signal lands at step N however late it comes
//                            (SIGKILL: a rank dead at step N; SIGCONT later: a slow one).
//                            Once per folder: a resumed run that passes step N again runs on.
//   DPRUN_TEST_GATHER_ROUND_BYTES=N
//                            a checkpoint's gather of the optimizer state sharded over the
//                            processes goes in rounds of at most N bytes a rank (normally half
//                            of 1/P of an MPI count), and a resume's checkpoint goes from rank
//                            0 in rounds of N bytes (normally 64 MiB), so that a test of small
//                            models takes the path of many rounds.
#pragma once

#include <cstdint>
#include <string>

namespace dp::rt::testEvents {

/// Reads the environment (once per process; later calls only set the rank). Until then, and
/// when DPRUN_TEST_EVENTS is unset, the functions below do nothing.
void init(int jobRank);

/// Appends "<text>\n" to this rank's events file.
void note(const std::string &text);

/// Before this process's step (or server update) `n`: the stop DPRUN_TEST_STOP asks for.
void beforeStep(int64_t n);

/// The bytes a rank sends in one round of a gather: `normal`, or DPRUN_TEST_GATHER_ROUND_BYTES
/// where a test asks for fewer (read at each call; needs no init). The rounds are collective:
/// a test sets the variable alike on every rank.
uint64_t gatherRoundBytes(uint64_t normal);

} // namespace dp::rt::testEvents
