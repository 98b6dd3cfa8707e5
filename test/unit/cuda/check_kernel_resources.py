#!/usr/bin/env python3
"""Static gates on the CUDA backend's built kernels, run without a GPU.

Reads the built library with cuobjdump and fails unless:
  * it holds sm_90 SASS (ELF) and sm_90 PTX (so that later GPUs can JIT it);
  * every kernel uses no stack and no local memory (no spills) and at most its register budget:
    with 256 threads per block, 64 registers per thread lets 4 blocks share an SM's 64K.

Usage: check_kernel_resources.py CUOBJDUMP LIBRARY
Exit 77 (skipped, with a message) when cuobjdump is missing: scripts/setup.sh installs it.
"""
import os
import re
import subprocess
import sys

BUDGET = 64  # registers per thread, every own kernel


def run(cuobjdump, *args):
    out = subprocess.run([cuobjdump, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: cuobjdump {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    cuobjdump, library = sys.argv[1:]
    if not os.access(cuobjdump, os.X_OK):
        print(f"SKIPPED: no cuobjdump at {cuobjdump}; run scripts/setup.sh to install it")
        return 77
    failures = 0
    listing = run(cuobjdump, "--list-elf", "--list-ptx", library)
    for kind, what in (("ELF", "sm_90 SASS"), ("PTX", "sm_90 PTX")):
        if re.search(rf"^{kind} file\s+\d+: .*\.sm_90\.(cubin|ptx)$", listing, re.M):
            print(f"ok   {what} present")
        else:
            print(f"FAIL {what} missing from {library}:\n{listing}")
            failures += 1
    usage = run(cuobjdump, "--dump-resource-usage", library)
    kernels = 0
    for name, regs, stack, local in re.findall(
            r"Function (\S+):\s*\n\s*REG:(\d+) STACK:(\d+) SHARED:\d+ LOCAL:(\d+)", usage):
        kernels += 1
        regs, stack, local = int(regs), int(stack), int(local)
        bad = regs > BUDGET or stack or local
        failures += bad
        print(f"{'FAIL' if bad else 'ok  '} {regs:3} registers (budget {BUDGET}), stack {stack}, "
              f"local {local}  {name.rstrip(':')}")
    if kernels == 0:
        print(f"FAIL: no kernels in the resource usage of {library}")
        failures += 1
    print(f"{kernels} kernel(s), {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
