"""The events a dprun job reports to a test (runtime/base/TestEvents.h): a folder the job's
processes append their events to (DPRUN_TEST_EVENTS), and an optional stop of one rank at an
exact step (DPRUN_TEST_STOP). Fault tests wait for these, never for wall time, CPU time or a
line that a launcher may forward late."""
import os
import shutil
import signal as _signal
import sys
import tempfile
import time


class Events:
    def __init__(self, stop_rank=None, stop_step=None):
        self.dir = tempfile.mkdtemp(prefix="dprun-events-")
        self.stop = (stop_rank, stop_step) if stop_step is not None else None

    def env(self, base=None):
        """The environment a job's command runs with (a launcher passes it to its ranks)."""
        env = dict(os.environ if base is None else base)
        env["DPRUN_TEST_EVENTS"] = self.dir
        env.pop("DPRUN_TEST_STOP", None)
        if self.stop:
            env["DPRUN_TEST_STOP"] = "%d:%d" % self.stop
        return env

    def lines(self, rank):
        try:
            with open(os.path.join(self.dir, "rank%d.events" % rank)) as f:
                return [line.rstrip("\n") for line in f if line.endswith("\n")]
        except OSError:
            return []

    def wait(self, rank, prefix, alive, limit=300):
        """The first event of `rank` that starts with `prefix`; None when `alive()` turns false
        (the job ended) or `limit` seconds pass first."""
        deadline = time.monotonic() + limit
        while True:
            for line in self.lines(rank):
                if line == prefix or line.startswith(prefix + " "):
                    return line
            if not alive() or time.monotonic() > deadline:
                # (One more look: the event may have come with the end.)
                for line in self.lines(rank):
                    if line == prefix or line.startswith(prefix + " "):
                        return line
                return None
            time.sleep(0.01)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def pid_of(event):
    """The pid=N of an event line."""
    for word in event.split():
        if word.startswith("pid="):
            return int(word[4:])
    raise ValueError("no pid in event %r" % event)


def wait_stopped(pid, limit=60):
    """Waits until process `pid` is stopped (its every thread: state T). False if it is gone."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        if state in ("T", "t"):
            return True
        time.sleep(0.005)
    return False


class HeldJob:
    """A command started with the test events on, whose rank `rank` stops itself just before
    its step `step`: `held()` waits for that and returns the stopped process's pid, or ends the
    whole job with `give_up()` (its output printed, exit 1) when it never comes."""

    def __init__(self, command, rank, step):
        from job_output import JobOutput  # (job_output has no dependency on this module)
        self.rank, self.step = rank, step
        self.events = Events(rank, step)
        self.output = JobOutput(command, None, env=self.events.env())
        self.proc = self.output.proc

    def alive(self):
        return self.proc.poll() is None

    def give_up(self, why):
        from job_output import signal_group
        signal_group(self.proc, _signal.SIGKILL)
        code = self.proc.wait()
        self.events.close()
        sys.stdout.write(self.output.text())
        sys.exit("%s (the job ended with exit %s)" % (why, code))

    def held(self):
        stopped = self.events.wait(self.rank, "stopped %d" % self.step, self.alive)
        if stopped is None:
            self.give_up(f"rank {self.rank} never reached step {self.step}")
        pid = pid_of(stopped)
        if not wait_stopped(pid):
            self.give_up(f"the dprun process of rank {self.rank} (pid {pid}) did not stay "
                         f"stopped at step {self.step}")
        return pid


def wait_pending(pid, signum, limit=60):
    """Waits until signal `signum` is pending for process `pid` (a stopped process keeps it until
    it is continued). False if it is gone or the limit passes."""
    deadline = time.monotonic() + limit
    bit = 1 << (signum - 1)
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/status" % pid) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            return False
        if (int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)) & bit:
            return True
        time.sleep(0.01)
    return False


if __name__ == "__main__":
    # For shell tests:  events.py wait DIR RANK EVENT [LIMIT]   prints the event line
    #                   events.py pending PID SIGNAL [LIMIT]     waits for a pending signal
    if len(sys.argv) >= 5 and sys.argv[1] == "wait":
        e = Events()
        shutil.rmtree(e.dir)
        e.dir = sys.argv[2]
        line = e.wait(int(sys.argv[3]), sys.argv[4], lambda: True,
                      float(sys.argv[5]) if len(sys.argv) > 5 else 300)
        if line is None:
            sys.exit("no event %r of rank %s in %s" % (sys.argv[4], sys.argv[3], sys.argv[2]))
        print(line)
    elif len(sys.argv) >= 4 and sys.argv[1] == "pending":
        pid, signum = int(sys.argv[2]), getattr(_signal, "SIG" + sys.argv[3])
        if not wait_pending(pid, signum, float(sys.argv[4]) if len(sys.argv) > 4 else 60):
            sys.exit("SIG%s never pending for pid %d" % (sys.argv[3], pid))
    else:
        sys.exit("usage: events.py wait DIR RANK EVENT [LIMIT] | pending PID SIGNAL [LIMIT]")
