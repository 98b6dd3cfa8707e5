# lit configuration of dp: FileCheck tests of the dialects, passes and tools, and the
# end-to-end tests that compile a model and train it with dprun.
import os
import lit.formats

config.name = "dp"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dp_obj_root, "test")

# dp's tools first, then FileCheck, not and count from LLVM.
config.environment["PATH"] = os.pathsep.join(
    [config.dp_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%models", os.path.join(config.dp_src_root, "models")))
config.substitutions.append(("%fashion_mnist", config.fashion_mnist_dir))

if config.has_executor:
    config.available_features.add("dprun")
# dprun built with the CUDA backend; "gpu" where a GPU is usable (nvidia-smi lists one).
if getattr(config, "has_cuda", False):
    config.available_features.add("cuda-backend")
import shutil as _shutil
import subprocess as _subprocess
if _shutil.which("nvidia-smi") and _subprocess.call(
        ["nvidia-smi", "-L"], stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL) == 0:
    config.available_features.add("gpu")
# How a cuda plan is refused on a machine without a GPU: by the registry (exit 3) where the
# build has no CUDA backend, by the CUDA backend (exit 6) where it has one.
config.substitutions.append(("%{cuda_prefix}", "NOGPU" if getattr(config, "has_cuda", False) else "NOBACKEND"))
config.substitutions.append(("%{cuda_exit}", "6" if getattr(config, "has_cuda", False) else "3"))
if os.path.exists(os.path.join(config.fashion_mnist_dir, "train-images-idx3-ubyte.gz")):
    config.available_features.add("fashion-mnist")

# Tests that run dprun under a memory cgroup (as `sbatch --mem` sets one) need root and a
# writable memory controller.
import subprocess
import sys
if subprocess.call([sys.executable, os.path.join(config.test_source_root, "e2e",
                                                 "in_memory_cgroup.py"), "--check"]) == 0:
    config.available_features.add("memory-cgroup")

# bf16 mixed precision needs oneDNN's bf16 kernels, which oneDNN 2.6 has from AVX-512 on (with
# or without the AVX-512 BF16 and AMX instructions, which it uses where present).
try:
    with open("/proc/cpuinfo") as f:
        flags = set(next((l for l in f if l.startswith("flags")), "").split())
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        config.available_features.add("bf16")
except OSError:
    pass

# Multi-process tests run real Open MPI jobs on this machine: as root mpirun needs
# --allow-run-as-root, and more ranks than cores need --oversubscribe.
import shutil
# The tests in e2e/mpi run one at a time (their lit.local.cfg).
lit_config.parallelism_groups["mpi"] = 1
if shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "mpirun --allow-run-as-root --oversubscribe --mca btl self,vader,tcp"))
for name in ("OMPI_MCA_btl_vader_single_copy_mechanism", "HOME", "USER", "SLURM_CONF"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
config.environment.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
# dprun computes with one thread per core it may use (--threads all), not as many as the cores
# the tests lit runs beside it leave free (auto): the thread count may change a result's last
# bits, and tests compare runs. e2e/threads.test checks auto itself.
config.environment["DPRUN_THREADS"] = "all"
config.substitutions.append(("%python", "python3"))
# onnxruntime, which scripts/setup.sh installs into .tools/python: %ortpython runs Python with it.
_ort_path = os.path.join(config.dp_src_root, ".tools", "python")
if subprocess.call([sys.executable, "-c", "import onnxruntime, numpy"],
                   env=dict(os.environ, PYTHONPATH=_ort_path),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("onnxruntime")
config.substitutions.append(("%ortpython", "env PYTHONPATH=" + _ort_path + " python3"))
# The peers' readers of the files dprun writes for them (TensorBoard's event reader,
# safetensors), which scripts/setup.sh installs into .tools/peers: %peerpython runs Python with
# them (and .tools/python's numpy and protobuf).
_peers_path = os.path.join(config.dp_src_root, ".tools", "peers") + ":" + _ort_path
if subprocess.call([sys.executable, "-c", "import tensorboard, absl, safetensors, numpy"],
                   env=dict(os.environ, PYTHONPATH=_peers_path),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("peers")
config.substitutions.append(("%peerpython", "env PYTHONPATH=" + _peers_path + " python3"))
