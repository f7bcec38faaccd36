#!/usr/bin/env python3
"""A program that loads gpuzones and times nothing gets one line:
vulkaninfo under the Vulkan layer, and a program that asks the OpenCL loader
for its platforms under the OpenCL layer (as clinfo does), say which layer
was loaded and that no GPU work was timed; no table, no track lines; the
program's own output is the same as without gpuzones."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
CL_QUERY = ("import ctypes; cl = ctypes.CDLL('libOpenCL.so.1'); n = ctypes.c_uint(0); "
            "r = cl.clGetPlatformIDs(0, None, ctypes.byref(n)); print('platforms', r, n.value)")


def clean_env(tmp):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUZONES_", "VK_", "OPENCL_LAYERS"))}
    env["VK_ICD_FILENAMES"] = LAVAPIPE_ICD
    env["GPUZONES_OUTPUT"] = os.path.join(tmp, "idle.json")
    return env


def check(name, cmd, env_with, tmp, want, failures):
    base = subprocess.run(cmd, env=clean_env(tmp), capture_output=True, text=True, timeout=120)
    env = dict(clean_env(tmp), **env_with)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    said = [l for l in p.stderr.splitlines() if l.startswith("gpuzones:")]
    print("%s: gpuzones said:\n  %s" % (name, "\n  ".join(said)))
    # vulkaninfo lists the layers it can see, ours among them once it is on
    # the path: the devices part must not change.
    def part(out):
        return out[out.find("Devices:"):] if "Devices:" in out else out
    if p.returncode != base.returncode or part(p.stdout) != part(base.stdout):
        failures.append("%s: exit %d / output differ from the run without gpuzones (exit %d)"
                        % (name, p.returncode, base.returncode))
    line = "gpuzones: %s loaded; no GPU work was timed" % want
    if said.count(line) != 1:
        failures.append("%s: no single line %r" % (name, line))
    noise = [l for l in said if l.startswith(("gpuzones: track", "gpuzones: GPU zones"))]
    if noise:
        failures.append("%s: a table for no work: %s" % (name, noise[:2]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layer-dir", required=True)
    ap.add_argument("--cl-layer", required=True)
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="gz-idle-") as tmp:
        vulkaninfo = shutil.which("vulkaninfo")
        if vulkaninfo:
            check("vulkaninfo", [vulkaninfo, "--summary"],
                  {"VK_ADD_LAYER_PATH": os.path.abspath(a.layer_dir),
                   "VK_INSTANCE_LAYERS": "VK_LAYER_GPUZONES_timing"}, tmp, "Vulkan layer", failures)
        else:
            print("vulkaninfo not installed (vulkan-tools): that half not run")
        check("OpenCL platforms", [sys.executable, "-c", CL_QUERY],
              {"OPENCL_LAYERS": os.path.abspath(a.cl_layer)}, tmp, "OpenCL layer", failures)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
