#!/usr/bin/env python3
"""Static gate on the CUDA backend's kernels, run without a GPU.

Compiles each .cu source for sm_90 with ptxas reporting (-Xptxas -v,--warn-on-spills) and fails
when a kernel spills, uses a stack frame, or uses more registers than its budget: with 256
threads per block, 64 registers per thread lets 4 blocks share an SM's 64K registers.

Usage: check_kernel_resources.py NVCC INCLUDE_DIR... -- SOURCE.cu...
"""
import re
import subprocess
import sys
import tempfile

BUDGET = 64  # registers per thread, every own kernel


def main():
    args = sys.argv[1:]
    if "--" not in args or len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    split = args.index("--")
    nvcc, includes, sources = args[0], args[1:split], args[split + 1:]
    failures = 0
    kernels = 0
    for source in sources:
        with tempfile.NamedTemporaryFile(suffix=".cubin") as out:
            cmd = [nvcc, "-std=c++17", "-arch=sm_90", "-cubin", "-o", out.name,
                   "-Xptxas", "-v,--warn-on-spills"] + ["-I" + i for i in includes] + [source]
            run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout + run.stderr)
            print(f"FAIL {source}: nvcc failed")
            failures += 1
            continue
        text = run.stdout + run.stderr
        current = None
        for line in text.splitlines():
            m = re.search(r"Compiling entry function '([^']+)' for 'sm_90'", line)
            if m:
                current = m.group(1)
                kernels += 1
                continue
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
            if m and current:
                stack, stores, loads = map(int, m.groups())
                if stores or loads or stack:
                    print(f"FAIL {current}: stack {stack} B, spill stores {stores} B, loads {loads} B")
                    failures += 1
                continue
            m = re.search(r"Used (\d+) registers", line)
            if m and current:
                used = int(m.group(1))
                status = "ok" if used <= BUDGET else "FAIL"
                print(f"{status:4} {used:3} registers (budget {BUDGET})  {current}")
                failures += used > BUDGET
                current = None
    if kernels == 0:
        print("FAIL: no kernels found in the ptxas report")
        return 1
    print(f"{kernels} kernel(s), {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
