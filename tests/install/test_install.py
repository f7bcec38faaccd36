#!/usr/bin/env python3
"""`meson install` puts a working layer where the Vulkan loader looks.

Installs the build into a staging directory (DESTDIR), checks the files
(library, layer, explicit and implicit manifests under share/vulkan, the
gpuzones tool, gpuzones.pc) and the manifests' fields, then runs the compute
sample with the installed layer: the staged manifest's library_path is
pointed into the staging directory, and the installed layer must find the
installed libgpuzones by itself (its rpath), not the build tree's.
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
    return cond


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--sample", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gz-install-")
    stage = os.path.join(tmp, "stage")
    r = subprocess.run(["meson", "install", "-C", args.build, "--destdir", stage, "--no-rebuild",
                        "--quiet"], capture_output=True, text=True)
    if not check(r.returncode == 0, "meson install failed: " + r.stderr[-500:]):
        return 1
    files = {os.path.relpath(os.path.join(d, f), stage) for d, _, fs in os.walk(stage) for f in fs}
    find = lambda suffix: sorted(f for f in files if f.endswith(suffix))
    explicit = find("share/vulkan/explicit_layer.d/VkLayer_gpuzones_timing.json")
    implicit = find("share/vulkan/implicit_layer.d/VkLayer_gpuzones_timing.json")
    layer = find("libVkLayer_gpuzones_timing.so")
    lib = [f for f in files if "libgpuzones.so" in os.path.basename(f)]
    check(len(explicit) == 1, "explicit manifest not installed: %s" % sorted(files))
    check(len(implicit) == 1, "implicit manifest not installed")
    check(len(layer) == 1 and lib, "layer or libgpuzones not installed")
    check(find("bin/gpuzones"), "the gpuzones tool is not installed")
    check(find("pkgconfig/gpuzones.pc"), "gpuzones.pc is not installed")
    if failures:
        return 1

    required = ("name", "type", "library_path", "api_version", "implementation_version",
                "description")
    for path, is_implicit in ((explicit[0], False), (implicit[0], True)):
        with open(os.path.join(stage, path)) as f:
            m = json.load(f)
        check("file_format_version" in m, "%s: no file_format_version" % path)
        l = m.get("layer", {})
        for k in required:
            check(k in l, "%s: no layer.%s" % (path, k))
        check(l.get("name") == "VK_LAYER_GPUZONES_timing", "%s: wrong name" % path)
        check(l.get("library_path") == "/" + layer[0], "%s: library_path %s is not the installed layer /%s"
              % (path, l.get("library_path"), layer[0]))
        if is_implicit:
            check(l.get("enable_environment") == {"GPUZONES_ENABLE": "1"}, "implicit: enable_environment")
            check(l.get("disable_environment") == {"GPUZONES_DISABLE": "1"}, "implicit: disable_environment")

    # Run with the staged layer. The manifest is the installed one with its
    # library_path moved into the staging dir.
    layer_dir = os.path.join(tmp, "layers")
    os.makedirs(layer_dir)
    with open(os.path.join(stage, explicit[0])) as f:
        m = json.load(f)
    m["layer"]["library_path"] = os.path.join(stage, layer[0])
    with open(os.path.join(layer_dir, "VkLayer_gpuzones_timing.json"), "w") as f:
        json.dump(m, f)
    trace = os.path.join(tmp, "trace.json")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUZONES_", "VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH", "LD_LIBRARY_PATH"))}
    env.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    env.update(VK_ADD_LAYER_PATH=layer_dir, VK_INSTANCE_LAYERS="VK_LAYER_GPUZONES_timing",
               GPUZONES_OUTPUT=trace, VK_LOADER_DEBUG="layer")
    r = subprocess.run([args.sample], env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "the sample failed with the installed layer: " + r.stderr[-800:])
    check(os.path.join(stage, layer[0]) in r.stderr, "the loader did not load the staged layer")
    if check(os.path.exists(trace), "no trace from the installed layer"):
        with open(trace) as f:
            events = json.load(f)
        check(any(e.get("cat") == "gpu" for e in events), "no GPU zones from the installed layer")
    # The installed layer must use the installed libgpuzones (rpath $ORIGIN).
    r = subprocess.run(["ldd", os.path.join(stage, layer[0])], capture_output=True, text=True,
                       env=env)
    line = next((l for l in r.stdout.splitlines() if "libgpuzones.so" in l), "")
    check(os.path.dirname(os.path.join(stage, layer[0])) in line,
          "the installed layer does not find the installed libgpuzones: %r" % line.strip())
    # The implicit layer goes into every Vulkan program that sets
    # GPUZONES_ENABLE: it must bring no GL library with it (libgpuzones finds
    # the program's own GL at run time, when it has one).
    gl_libs = ("libepoxy", "libGL", "libEGL", "libGLX", "libOpenGL", "libGLES")
    gl_loaded = [l.split()[0] for l in r.stdout.splitlines() if l.strip().startswith(gl_libs)]
    check(not gl_loaded, "the installed layer loads GL libraries: %s" % gl_loaded)

    if failures:
        print("install test: %d failed; files in %s" % (len(failures), tmp))
        return 1
    shutil.rmtree(tmp)
    print("install test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
