#!/usr/bin/env python3
"""`gpuzones run` enables the OpenCL layer, and `meson install` installs a
working one.

1. `gpuzones run -o FILE -- gz-test-cl` gives OpenCL zones (spin kernels on
   queue 1's track);
2. the user's own OPENCL_LAYERS is kept, after ours;
3. `meson install --destdir` puts libgpuzones_cl.so in the library folder,
   the installed `gpuzones` points at it, and the staged layer (finding the
   staged libgpuzones through its rpath) gives zones.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402

errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def spin_zones(trace_path):
    t = gztrace.load(trace_path)
    for e in t.accounting_errors():
        check(False, "%s: %s" % (trace_path, e))
    tracks = [tid for tid, n in t.thread_names().items() if n and " queue 1 (in-order)" in n]
    return len(t.gpu_zones(tid=tracks[0], name="spin")) if len(tracks) == 1 else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENCL_LAYERS", "LD_LIBRARY_PATH") and not k.startswith("GPUZONES_")}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "run.json")
        r = subprocess.run([args.tool, "run", "-o", trace, "--no-summary", "--",
                            os.path.abspath(args.program), os.path.join(tmp, "truth")],
                           env=env, capture_output=True, text=True, timeout=120)
        if check(r.returncode == 0, "gpuzones run failed: %s" % r.stderr[-500:]):
            check(spin_zones(trace) == 6, "gpuzones run: %d spin zones on queue 1, expected 6"
                  % spin_zones(trace))

        r = subprocess.run([args.tool, "run", "--", "sh", "-c", 'printf %s "$OPENCL_LAYERS"'],
                           env=dict(env, OPENCL_LAYERS="/users/own/layer.so"),
                           capture_output=True, text=True, timeout=30)
        layers = r.stdout.split(":")
        check(len(layers) == 2 and layers[0].endswith("/libgpuzones_cl.so")
              and layers[1] == "/users/own/layer.so",
              "OPENCL_LAYERS under gpuzones run is %r" % r.stdout)

        stage = os.path.join(tmp, "stage")
        r = subprocess.run(["meson", "install", "-C", args.build, "--destdir", stage,
                            "--no-rebuild", "--quiet"], capture_output=True, text=True)
        if not check(r.returncode == 0, "meson install failed: %s" % r.stderr[-500:]):
            return report()
        files = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs]
        libs = [f for f in files if os.path.basename(f) == "libgpuzones_cl.so"]
        tools = [f for f in files if f.endswith("/bin/gpuzones")]
        if not check(len(libs) == 1 and len(tools) == 1, "installed layer/tool: %s %s" % (libs, tools)):
            return report()
        installed_path = "/" + os.path.relpath(libs[0], stage)
        check("CL_LAYER='%s'" % installed_path in open(tools[0]).read(),
              "the installed gpuzones does not point at %s" % installed_path)
        trace = os.path.join(tmp, "staged.json")
        r = subprocess.run([os.path.abspath(args.program), os.path.join(tmp, "truth2")],
                           env=dict(env, OPENCL_LAYERS=libs[0], GPUZONES_OUTPUT=trace,
                                    GPUZONES_SUMMARY="0"),
                           capture_output=True, text=True, timeout=120)
        if check(r.returncode == 0, "the program failed under the staged layer: %s" % r.stderr[-500:]):
            check(spin_zones(trace) == 6, "staged layer: %d spin zones on queue 1, expected 6"
                  % spin_zones(trace))
            maps = None  # the staged layer must not load the build tree's libgpuzones
            r = subprocess.run(["ldd", libs[0]], env=env, capture_output=True, text=True)
            for line in r.stdout.split("\n"):
                if "libgpuzones.so" in line:
                    maps = line
            check(maps is not None and stage in maps,
                  "the staged layer resolves libgpuzones to %r, not the staged one" % maps)
    return report()


def report():
    if errors:
        print("\n".join("FAIL: " + e for e in errors))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
