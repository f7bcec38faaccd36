#!/usr/bin/env python3
"""How users turn the layer on and off, and what bad configuration does.

Runs the real Vulkan compute sample on lavapipe:
  - implicit manifest installed (XDG_DATA_HOME) but not enabled: program untouched, no trace;
  - GPUZONES_ENABLE=1: trace with GPU zones; plus GPUZONES_DISABLE=1: no trace;
  - `gpuzones run -o FILE -- PROGRAM`: trace; bad usage: exit 2 with a message;
  - bad values (GPUZONES_LEVEL=bogus, GPUZONES_SUMMARY=maybe, GPUZONES_QUEUE_ITEMS=12):
    a "gpuzones:" line naming each, the default used, the program's result unchanged;
  - an output path that cannot be created: a "gpuzones:" line and the trace in $TMPDIR.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def load_trace(path):
    with open(path) as f:
        return json.load(f)


def gpu_zones(events):
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "gpu"]


def run(cmd, env, cwd):
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", required=True)
    ap.add_argument("--implicit-manifest", required=True)
    ap.add_argument("--tool", required=True)
    args = ap.parse_args()
    sample = os.path.abspath(args.sample)

    tmp = tempfile.mkdtemp(prefix="gz-enable-")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH", "VK_LAYER_PATH",
                                 "GPUZONES_", "VK_LOADER_LAYERS"))}
    base.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    # Keep /usr/share in XDG_DATA_DIRS: the loader finds the ICDs there.
    base["XDG_DATA_DIRS"] = "/usr/local/share:/usr/share"
    base["TMPDIR"] = tmp

    # The implicit manifest where the loader looks for a user's layers.
    xdg = os.path.join(tmp, "xdg")
    os.makedirs(os.path.join(xdg, "vulkan", "implicit_layer.d"))
    shutil.copy(args.implicit_manifest, os.path.join(xdg, "vulkan", "implicit_layer.d"))

    plain = run([sample], base, tmp)
    check(plain.returncode == 0, f"sample alone failed: {plain.stderr[-500:]}")

    # 1. installed, not enabled
    out = os.path.join(tmp, "not-enabled.json")
    env = dict(base, XDG_DATA_HOME=xdg, GPUZONES_OUTPUT=out)
    r = run([sample], env, tmp)
    check(r.returncode == 0, "not enabled: sample failed")
    check(r.stdout == plain.stdout, "not enabled: the program's output changed")
    check("gpuzones" not in r.stderr, f"not enabled: gpuzones spoke: {r.stderr[-300:]}")
    check(not os.path.exists(out), "not enabled: a trace was written")

    # 2. enabled through the implicit manifest
    out = os.path.join(tmp, "enabled.json")
    env = dict(base, XDG_DATA_HOME=xdg, GPUZONES_OUTPUT=out, GPUZONES_ENABLE="1")
    r = run([sample], env, tmp)
    check(r.returncode == 0, "GPUZONES_ENABLE=1: sample failed")
    check(r.stdout == plain.stdout, "GPUZONES_ENABLE=1: the program's output changed")
    check(os.path.exists(out) and len(gpu_zones(load_trace(out))) > 0,
          "GPUZONES_ENABLE=1: no trace with GPU zones")
    check(f"trace written to {out}" in r.stderr, "GPUZONES_ENABLE=1: summary does not name the trace")

    # 3. enabled and disabled: disable wins
    out = os.path.join(tmp, "disabled.json")
    env = dict(base, XDG_DATA_HOME=xdg, GPUZONES_OUTPUT=out, GPUZONES_ENABLE="1",
               GPUZONES_DISABLE="1")
    r = run([sample], env, tmp)
    check(r.returncode == 0 and not os.path.exists(out), "GPUZONES_DISABLE=1: layer still ran")

    # 4. the gpuzones tool
    out = os.path.join(tmp, "tool.json")
    r = run([args.tool, "run", "-o", out, "--", sample], base, tmp)
    check(r.returncode == 0, f"gpuzones run failed: {r.stderr[-300:]}")
    check(os.path.exists(out) and len(gpu_zones(load_trace(out))) > 0, "gpuzones run: no GPU zones")
    r = run([args.tool, "frobnicate"], base, tmp)
    check(r.returncode == 2 and "unknown command" in r.stderr, "gpuzones frobnicate: no usage error")
    r = run([args.tool, "run"], base, tmp)
    check(r.returncode == 2 and "usage" in r.stderr, "gpuzones run without a program: no usage")

    # 5. bad values: named, defaults used, program unchanged
    out = os.path.join(tmp, "bad.json")
    env = dict(base, XDG_DATA_HOME=xdg, GPUZONES_ENABLE="1", GPUZONES_OUTPUT=out,
               GPUZONES_LEVEL="bogus", GPUZONES_SUMMARY="maybe", GPUZONES_QUEUE_ITEMS="12")
    r = run([sample], env, tmp)
    check(r.returncode == 0 and r.stdout == plain.stdout, "bad values: the program changed")
    for var in ("GPUZONES_LEVEL", "GPUZONES_SUMMARY", "GPUZONES_QUEUE_ITEMS"):
        check(any(l.startswith("gpuzones: " + var) for l in r.stderr.splitlines()),
              f"bad values: no 'gpuzones: {var}' line")
    if os.path.exists(out):
        levels = {z["args"]["level"] for z in gpu_zones(load_trace(out))}
        check("label" in levels, f"bad GPUZONES_LEVEL: default (labels) not used: {levels}")
    else:
        check(False, "bad values: no trace")

    # 6. an output path that cannot be created
    bad = os.path.join(tmp, "no-such-dir", "trace.json")
    env = dict(base, XDG_DATA_HOME=xdg, GPUZONES_ENABLE="1", GPUZONES_OUTPUT=bad)
    r = run([sample], env, tmp)
    fallback = os.path.join(tmp, "trace.json")
    check(r.returncode == 0 and r.stdout == plain.stdout, "unwritable output: the program changed")
    check(any("cannot create trace file" in l and l.startswith("gpuzones:") for l in r.stderr.splitlines()),
          "unwritable output: no 'gpuzones:' message")
    check(os.path.exists(fallback) and len(gpu_zones(load_trace(fallback))) > 0,
          "unwritable output: no trace in $TMPDIR")

    if failures:
        print(f"enable tests: {len(failures)} failed; files in {tmp}")
        return 1
    shutil.rmtree(tmp)
    print("enable tests: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
