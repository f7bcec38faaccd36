#!/usr/bin/env python3
"""The sanitized runs tell a driver's leak from ours (sanitized builds only).

A driver's leak is played by the clock-fault layer with GZFAULT_LEAK=1: it
drops 128 bytes in each vkCreateInstance, and the loader unloads it at
vkDestroyInstance, as it unloads the ICDs. A leak of ours is played by a
copy of our Vulkan layer that leaks in its vkCreateInstance (leak_ours.c),
loaded and unloaded by the loader the same way. gz-test-vk runs one case
each time, with the environment of scripts/test.sh's sanitized stage.

1. Without the preload that keeps libraries loaded, the driver's leak is
   reported from "<unknown module>": no suppression can name it (the fault).
2. With the preload, its stack names the fault layer's code: the real
   tests/lsan.supp does not name that test library, so the run fails...
3. ...and with a suppression naming it (as tests/lsan.supp names the
   drivers) the run passes: the leak is suppressed.
4. With the preload and the same suppressions, the leak of ours is
   reported (its stack names the leaking function) and the run fails.
   (5: the same run with the real layer and no leak passes.)
6. tests/lsan.supp names the libraries of the drivers in use here (the
   Vulkan ICD manifests, the OpenCL vendors) and none of ours, nor any
   library that calls into ours (a pattern matches any frame of a stack;
   the sanitizer's stacks stop at the first library built without frame
   pointers, so 4 cannot show the loader's frames: this checks them).
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

LEAK = "Direct leak of 128 byte(s)"


def leak_stacks(text):
    """The stacks of the 128-byte direct leaks in LeakSanitizer's report."""
    stacks, cur = [], None
    for line in text.splitlines():
        if line.startswith(LEAK):
            cur = []
            stacks.append(cur)
        elif cur is not None:
            if re.match(r"\s+#\d+ ", line):
                cur.append(line.strip())
            elif cur:
                cur = None
    return stacks


def patterns(supp):
    with open(supp) as f:
        return [l.strip()[len("leak:"):] for l in f if l.strip().startswith("leak:")]


class Runner:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp

    def run(self, layers, keep, supp_lines, extra_env=None):
        supp = os.path.join(self.tmp, "supp%d.txt" % len(os.listdir(self.tmp)))
        with open(self.a.supp) as f, open(supp, "w") as out:
            out.write(f.read())
            out.write("".join(l + "\n" for l in supp_lines))
        env = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "VK_INSTANCE_LAYERS", "VK_LOADER_LAYERS_ENABLE")}
        env.update({
            "VK_ADD_LAYER_PATH": os.pathsep.join(
                [self.a.layer_dir, self.a.fault_layer_dir, self.a.leaky_layer_dir]),
            "GZ_TEST_APP_LAYERS": ":".join(layers),
            "GPUZONES_OUTPUT": os.path.join(self.tmp, "trace.json"),
            "GPUZONES_SUMMARY": "0",
            # as scripts/test.sh's sanitized stage
            "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0:"
                            "verify_asan_link_order=0",
            "LSAN_OPTIONS": "suppressions=" + supp,
        })
        if keep:
            env["LD_PRELOAD"] = os.path.abspath(self.a.keep)
        env.update(extra_env or {})
        p = subprocess.run([self.a.program, "--case", "onetime", "--truth",
                            os.path.join(self.tmp, "truth.json")],
                           env=env, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stderr


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--program", "--keep", "--supp", "--layer-dir", "--fault-layer-dir",
                "--leaky-layer-dir"):
        ap.add_argument(opt, required=True)
    a = ap.parse_args()
    errors = []
    ours = "VK_LAYER_GPUZONES_timing"
    fault = ["VK_LAYER_GPUZONES_timing", "VK_LAYER_GPUZONES_clockfault"]
    fault_lib = "libVkLayer_gpuzones_clockfault.so"
    fault_supp = ["leak:" + fault_lib]
    with tempfile.TemporaryDirectory() as tmp:
        r = Runner(a, tmp)

        def expect(what, rc, err, fails, name=None, unknown=False):
            stacks = leak_stacks(err)
            print("%s: exit %d, %d leak(s) of 128 bytes" % (what, rc, len(stacks)))
            for s in stacks:
                print("    " + "\n    ".join(s[:5]))
            if fails != (rc != 0) or fails != bool(stacks):
                errors.append("%s: exit %d with %d reported leak(s); want the run to %s"
                              % (what, rc, len(stacks), "fail on the leak" if fails else "pass"))
                if rc != 0 and not stacks:
                    print(err[-3000:])
                return
            for s in stacks:
                if name and not any(name in frame for frame in s):
                    errors.append("%s: the leak's stack does not name %s" % (what, name))
                if unknown and not any("<unknown module>" in f for f in s[1:3]):
                    errors.append("%s: the leak is not from <unknown module>" % what)

        rc, err = r.run(fault, False, fault_supp, {"GZFAULT_LEAK": "1"})
        expect("1. driver leak, no preload", rc, err, True, unknown=True)
        rc, err = r.run(fault, True, [], {"GZFAULT_LEAK": "1"})
        # Symbolized frames show the function and source line, not the
        # library: a frame that is not "<unknown module>" is a named one.
        expect("2. driver leak, preload, not suppressed", rc, err, True, name="in leak_once ")
        rc, err = r.run(fault, True, fault_supp, {"GZFAULT_LEAK": "1"})
        expect("3. driver leak, preload, suppressed", rc, err, False)
        rc, err = r.run(["VK_LAYER_GPUZONES_leaky", "VK_LAYER_GPUZONES_clockfault"], True,
                        fault_supp)
        expect("4. our leak, preload, suppressions", rc, err, True, name="in leak_ours ")
        # Control: the same run with our real layer and no injected leak passes.
        rc, err = r.run([ours, "VK_LAYER_GPUZONES_clockfault"], True, fault_supp)
        expect("5. no leak injected", rc, err, False)

    # The suppressions against the drivers of this machine and our names.
    pats = patterns(a.supp)
    icds = os.environ.get("VK_ICD_FILENAMES") or os.environ.get("VK_DRIVER_FILES")
    manifests = icds.split(os.pathsep) if icds else sorted(
        glob.glob("/usr/share/vulkan/icd.d/*.json") + glob.glob("/etc/vulkan/icd.d/*.json"))
    drivers = []
    for m in manifests:
        try:
            with open(m) as f:
                drivers.append(os.path.basename(json.load(f)["ICD"]["library_path"]))
        except (OSError, ValueError, KeyError):
            pass
    for v in glob.glob("/etc/OpenCL/vendors/*.icd"):
        with open(v) as f:
            drivers.append(os.path.basename(f.read().strip()))
    print("drivers in use: %s" % drivers)
    for d in drivers:
        if not any(p in d for p in pats):
            errors.append("tests/lsan.supp names no pattern for the driver %s" % d)
    for name in ("libgpuzones.so.0", "libgpuzones_gl.so", "libgpuzones_cl.so",
                 "libVkLayer_gpuzones_timing.so", "gz-test-vk", "gz-test-gl-epoxy",
                 "gz-test-cl", "libepoxy.so.0", "libvulkan.so.1", "libOpenCL.so.1",
                 "libEGL.so.1", "libGL.so.1", "libGLX.so.0", "libVkLayer_MESA_device_select.so",
                 # the sanitizer runtimes: their interceptor is frame #0 of every leak
                 "libasan.so.8", "libclang_rt.asan-x86_64.so", "libc.so.6", "ld-linux-x86-64.so.2"):
        hit = [p for p in pats if p in name]
        if hit:
            errors.append("tests/lsan.supp pattern %s would hide leaks through %s" % (hit, name))
    if errors:
        for e in errors:
            print("FAIL:", e)
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
