"""Running a program with VK_LAYER_GPUZONES_count below the layers being
measured, and reading what it counted (shared by check_counts.py,
check_targets.py and bench/run).

The count layer is enabled by the program itself (GZ_TEST_APP_LAYERS, read by
tests/common/gz_vk_min.h): the loader puts the layers a program enables below
those of VK_INSTANCE_LAYERS, whatever order it finds the manifests in, so the
count layer sees everything gpuzones (or the Mesa overlay) hands the driver.
Every run asks the loader for its layer chain (VK_LOADER_DEBUG=layer) and
checks the count layer's place in it."""

import os
import subprocess

COUNT_LAYER = "VK_LAYER_GPUZONES_count"
GZ_LAYER = "VK_LAYER_GPUZONES_timing"
OVERLAY_LAYER = "VK_LAYER_MESA_overlay"
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

# The GPUZONES_LEVEL values to measure, coarsest first. A value the layer
# does not accept (it says so on stderr and falls back to its default) is
# reported as such and skipped, so that levels added to the layer appear in
# the tables without a change here.
LEVELS = ("submit", "cmdbuf", "labels", "passes", "commands")

# The table of what a layer adds, per command buffer of the program:
# (row, keys of the count file summed).
ADDED_ROWS = (
    ("submissions (vkQueueSubmit* calls)", ("submit_calls",)),
    ("command buffers in the submissions", ("cmdbufs_submitted",)),
    ("command-buffer recordings begun (vkBeginCommandBuffer)", ("begins",)),
    ("timestamps executed", ("timestamps",)),
    ("query resets executed (vkCmdResetQueryPool)", ("query_resets",)),
    ("vkCmdCopyQueryPoolResults with WAIT_BIT, executed", ("copies_wait",)),
    ("vkCmdCopyQueryPoolResults without WAIT_BIT, executed", ("copies_nowait",)),
    ("pipeline barriers executed", ("barriers",)),
    ("events set or waited, executed", ("events_set", "events_waited")),
    ("host query resets (vkResetQueryPool)", ("host_query_resets",)),
    ("vkGetQueryPoolResults calls", ("get_results",)),
    ("vkGetQueryPoolResults calls with WAIT_BIT", ("get_results_wait",)),
)

# Commands gpuzones never records: what the program's work is made of, the
# same with any layer above the count layer.
WORK_KEYS = ("dispatches", "draws", "buffer_copies")


def base_env(extra=None):
    """The caller's environment without any layer selection or gpuzones
    setting, on lavapipe unless the caller chose a driver."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUZONES_", "GZCOUNT_", "VK_INSTANCE_LAYERS", "VK_LOADER_",
                                "VK_LAYER_", "VK_ADD_LAYER_PATH", "GZ_TEST_APP_LAYERS"))}
    env.setdefault("VK_ICD_FILENAMES", LAVAPIPE_ICD)
    # An installed implicit gpuzones layer stays out unless asked for.
    env["GPUZONES_DISABLE"] = "1"
    env.update(extra or {})
    return env


def layer_env(count_dir, output, gz_dir=None, level=None, overlay=False, trace=None, extra=None):
    """Environment for one counted run: gpuzones (gz_dir given, at level, or
    its default) or the Mesa overlay above the count layer, or neither."""
    env = base_env(extra)
    paths = [os.path.abspath(count_dir)]
    above = []
    if gz_dir:
        paths.insert(0, os.path.abspath(gz_dir))
        above.append(GZ_LAYER)
        env.pop("GPUZONES_DISABLE", None)
        env["GPUZONES_OUTPUT"] = trace or "none"
        env["GPUZONES_SUMMARY"] = "0"
        if level:
            env["GPUZONES_LEVEL"] = level
    if overlay:
        # Headless the overlay draws nothing and reads no query back; it
        # still times every command buffer (gpu_timing).
        above.append(OVERLAY_LAYER)
        env["VK_LAYER_MESA_OVERLAY_CONFIG"] = "gpu_timing,no_display"
    if above:
        env["VK_INSTANCE_LAYERS"] = ":".join(above)
    env["VK_ADD_LAYER_PATH"] = os.pathsep.join(paths)
    env["GZ_TEST_APP_LAYERS"] = COUNT_LAYER
    env["GZCOUNT_OUTPUT"] = output
    env["VK_LOADER_DEBUG"] = "layer"
    return env


def device_chain(stderr):
    """The layers of the last vkCreateDevice chain the loader printed, from
    the application's side to the driver's."""
    chain, inside = [], False
    for line in stderr.splitlines():
        text = line.split("LAYER:", 1)[-1].strip()
        if "vkCreateDevice layer callstack setup to" in text:
            chain, inside = [], True
        elif inside and text.startswith("<Device>"):
            inside = False
        elif inside and text.startswith("VK_LAYER_"):
            chain.append(text)
    return chain


def level_rejected(stderr):
    """The layer's complaint about GPUZONES_LEVEL, or None."""
    return next((l for l in stderr.splitlines() if l.startswith("gpuzones: GPUZONES_LEVEL=")),
                None)


def read_counts(path):
    with open(path) as f:
        line = f.read().strip()
    return {k: int(v) for k, _, v in (f.partition("=") for f in line.split())}


def parse_kv_line(text, prefix=""):
    for line in text.splitlines():
        if line.startswith(prefix) and "=" in line:
            return {k: int(v) for k, _, v in (f.partition("=") for f in line[len(prefix):].split())}
    return None


class CountError(Exception):
    pass


def run_counted(cmd, env, timeout=300):
    """Runs cmd; returns (counts, stdout, stderr). Raises CountError where
    the program failed, left no counts, or the count layer is not the
    lowest layer of the device's chain (below every layer asked for)."""
    try:
        os.unlink(env["GZCOUNT_OUTPUT"])
    except OSError:
        pass
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, check=False)
    tail = "\n".join(l for l in p.stderr.splitlines() if "LAYER:" not in l)[-2000:]
    if p.returncode:
        raise CountError(f"{' '.join(cmd)} exited {p.returncode}:\n{tail}")
    chain = device_chain(p.stderr)
    wanted = [n for n in env.get("VK_INSTANCE_LAYERS", "").split(":") if n and n != COUNT_LAYER]
    if COUNT_LAYER not in chain:
        raise CountError(f"{COUNT_LAYER} is not in the device's layer chain {chain}")
    below = chain[chain.index(COUNT_LAYER) + 1:]
    missing = [n for n in wanted if n not in chain[:chain.index(COUNT_LAYER)]]
    if missing or any(n.startswith("VK_LAYER_GPUZONES") or n == OVERLAY_LAYER for n in below):
        raise CountError(f"{COUNT_LAYER} is not below {wanted}: chain {chain}")
    try:
        counts = read_counts(env["GZCOUNT_OUTPUT"])
    except (OSError, ValueError) as e:
        raise CountError(f"no counts from {' '.join(cmd)}: {e}\n{tail}")
    return counts, p.stdout, p.stderr


def added_per(counts, base, per):
    """{row: (counts - base) / per} for ADDED_ROWS."""
    return {row: sum(counts[k] - base[k] for k in keys) / per for row, keys in ADDED_ROWS}
