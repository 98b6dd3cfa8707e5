#!/usr/bin/env python3
"""Runs a command inside a new memory cgroup with a hard limit, as `sbatch --mem` does.

Usage: in_memory_cgroup.py --check
       in_memory_cgroup.py LIMIT_BYTES -- COMMAND [ARGS...]

Creates a child of this process's own memory cgroup (cgroup v2: memory.max; v1:
memory.limit_in_bytes), moves the command into it, runs it, removes the cgroup and exits with
the command's status. --check exits 0 when this is possible here (root, a writable memory
controller), 1 otherwise, so that lit can mark the tests that need it as unsupported.
"""
import os
import subprocess
import sys


def own_path(controller_v1):
    """This process's cgroup path for the v1 controller, or the v2 path when None."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            hid, controllers, path = line.rstrip("\n").split(":", 2)
            if controller_v1 is None and hid == "0" and controllers == "":
                return path
            if controller_v1 is not None and controller_v1 in controllers.split(","):
                return path
    return None


def candidates():
    """(directory to create the child in, limit file name, version) for each usable layout."""
    out = []
    v1 = own_path("memory")
    if v1 is not None and os.path.isdir("/sys/fs/cgroup/memory"):
        base = "/sys/fs/cgroup/memory" + v1
        if not os.path.isdir(base):
            base = "/sys/fs/cgroup/memory"
        out.append((base, "memory.limit_in_bytes", 1))
    v2 = own_path(None)
    for mount in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        controllers = os.path.join(mount, "cgroup.controllers")
        if v2 is not None and os.path.exists(controllers):
            base = mount + v2
            try:
                with open(os.path.join(base, "cgroup.subtree_control")) as f:
                    if "memory" in f.read().split():
                        out.append((base, "memory.max", 2))
            except OSError:
                pass
    return out


def make_cgroup(limit):
    for base, limit_file, version in candidates():
        path = os.path.join(base, "dp_memtest_%d" % os.getpid())
        try:
            os.mkdir(path)
        except OSError:
            continue
        try:
            with open(os.path.join(path, limit_file), "w") as f:
                f.write(str(limit))
            return path, version
        except OSError:
            os.rmdir(path)
    return None, None


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--check":
        path, _ = make_cgroup(64 << 20)
        if path:
            os.rmdir(path)
        return 0 if path else 1
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    limit = int(sys.argv[1])
    path, version = make_cgroup(limit)
    if not path:
        print("in_memory_cgroup: cannot create a memory cgroup here", file=sys.stderr)
        return 2

    def enter():
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    try:
        status = subprocess.call(sys.argv[3:], preexec_fn=enter)
    finally:
        os.rmdir(path)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
