"""CPU of a Vulkan program by shared object: sampled with `perf record -e
cpu-clock` (time, per thread), or counted with callgrind (instructions, no
noise, inside one function of the program). Shared by bench/run and
check_targets.py.

A sample or an instruction belongs to the shared object it ran in: a
layer's own figure is its own functions, and what they call in libc counts
under "rest"."""

import os
import shutil
import subprocess

PARTS = ("layer", "driver", "kernel", "rest")


def part_of(dso, layer):
    """The part a shared object belongs to: the layer measured (layer is
    'gpuzones', 'overlay' or None), the driver (lavapipe, LLVM, and the
    shaders LLVM compiled, which have no file), the kernel, or the rest
    (libc, the loader, the program)."""
    base = os.path.basename(dso.strip("()"))
    if layer == "gpuzones" and (base.startswith("libgpuzones.so") or
                                base == "libVkLayer_gpuzones_timing.so"):
        return "layer"
    if layer == "overlay" and base.startswith("libVkLayer_MESA_overlay"):
        return "layer"
    if base.startswith(("libvulkan_lvp", "libLLVM", "perf-")) or base in ("[unknown]", "[JIT]",
                                                                          "???"):
        return "driver"
    if base.startswith("[kernel"):
        return "kernel"
    return "rest"


# ---- perf ------------------------------------------------------------------------

def perf_unusable(tmp):
    """Why `perf record -e cpu-clock` cannot run here, or None."""
    perf = shutil.which("perf")
    if not perf:
        return "perf is not installed"
    try:
        p = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-o",
                            os.path.join(tmp, "probe.data"), "--", "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"perf record failed: {e}"
    if p.returncode:
        lines = [l.strip() for l in p.stderr.splitlines() if l.strip()]
        return "perf record failed: " + (lines[0] if lines else f"exit {p.returncode}")
    return None


def perf_record(cmd, env, data, period_ns, layer):
    """Runs cmd under `perf record -e cpu-clock -c period_ns`. Returns
    (completed process, {tid: {part: seconds of CPU}})."""
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-c", str(period_ns), "-o",
                        data, "--"] + cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, check=False)
    if p.returncode:
        return p, {}
    script = subprocess.run(["perf", "script", "-i", data, "-F", "tid,ip,dso"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            check=False)
    per_tid = {}
    for line in script.stdout.splitlines():
        fields = line.split()
        if len(fields) < 3 or not fields[0].isdigit():
            continue
        parts = per_tid.setdefault(int(fields[0]), {})
        part = part_of(fields[-1], layer)
        parts[part] = parts.get(part, 0.0) + period_ns * 1e-9
    return p, per_tid


# ---- callgrind -------------------------------------------------------------------

def valgrind_unusable():
    return None if shutil.which("valgrind") else "valgrind is not installed"


def callgrind_self_by_object(path):
    """{shared object: instructions run in its own functions} from a
    callgrind output file (the first event, Ir)."""
    names, costs = {}, {}
    obj, skip_next = "???", False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("ob=", "cob=")):
                # "(id) name" defines a compressed name, "(id)" uses it.
                spec = line.split("=", 1)[1].strip()
                name = spec
                if spec.startswith("("):
                    ident, _, name = spec.partition(")")
                    name = name.strip() or names.get(ident, "???")
                    names[ident] = name
                if line.startswith("ob="):
                    obj = name
            elif line.startswith("calls="):
                # The next cost line is the call's inclusive cost: the
                # callee's own lines count it where they ran.
                skip_next = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                fields = line.split()
                if len(fields) >= 2 and fields[1].isdigit():
                    costs[obj] = costs.get(obj, 0) + int(fields[1])
    return costs


def callgrind_inside(cmd, env, out, function, layer):
    """Runs cmd under callgrind collecting only inside function (a name, or
    a list of names: inside any of them) and what it calls. Returns
    (completed process, {part: instructions})."""
    functions = [function] if isinstance(function, str) else list(function)
    p = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no"] +
                       [f"--toggle-collect={f}" for f in functions] +
                       [f"--callgrind-out-file={out}"] + cmd,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       check=False)
    if p.returncode or not os.path.exists(out):
        return p, {}
    parts = {}
    for obj, n in callgrind_self_by_object(out).items():
        part = part_of(obj, layer)
        parts[part] = parts.get(part, 0) + n
    return p, parts
