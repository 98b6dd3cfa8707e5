"""The output of a job the e2e scripts start and signal: one thread reads the job's pipe for the
whole run (reading some lines here and handing the pipe to communicate() later would lose what
the line reader had buffered), and says when a line containing a given text has arrived."""
import os
import subprocess
import threading


class JobOutput:
    def __init__(self, command, after_line, env=None):
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True, text=True, env=env)
        self.lines = []
        self.seen = threading.Event()
        self._after_line = after_line
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            if self._after_line and self._after_line in line:
                self.seen.set()

    def text(self):
        """Everything read so far, after giving the reader up to 5 s to reach the pipe's end."""
        self._reader.join(5)
        return "".join(self.lines)


def signal_group(proc, sig):
    """Sends `sig` to the process group of `proc` (started with start_new_session=True).
    Returns False when the group is gone: the job ended, and was reaped, before the signal."""
    try:
        os.killpg(proc.pid, sig)
        return True
    except ProcessLookupError:
        return False
