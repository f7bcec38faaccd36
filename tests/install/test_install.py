#!/usr/bin/env python3
"""`meson install` puts a working layer where the Vulkan loader looks, and
a library that programs build and run against as the README says.

Installs the build into a staging directory (DESTDIR), checks the files
(library, layer, explicit and implicit manifests under share/vulkan, the
gpuzones tool, gpuzones.pc) and the manifests' fields, then runs the compute
sample with the installed layer: the staged manifest's library_path is
pointed into the staging directory, and the installed layer must find the
installed libgpuzones by itself (its rpath), not the build tree's.

Then builds installed_program.c with nothing but `pkg-config --cflags --libs
gpuzones` (and OpenCL's flags for gpuzones/opencl.h, where OpenCL is
installed), as C and as C++, with and without GPUZONES_ENABLE, -Wall -Wextra
-Werror: enabled, it runs against the staged libgpuzones.so.0 (found through
LD_LIBRARY_PATH, as ldconfig would find it in a system directory) and its
zones are in its trace; disabled, it references no gpuzones function and
writes no trace. And the install's ldconfig step: nothing for a staged
install, and for a directory the dynamic linker does not search, a line
saying what programs need.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402
import installed  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def check_programs(args, stage, libdir, tmp, env):
    """installed_program.c built with gpuzones.pc's flags alone, and run."""
    flags = installed.pkg_config(stage, "--cflags", "--libs", "gpuzones")
    if not check(flags, "pkg-config --cflags --libs gpuzones failed on the staged gpuzones.pc"):
        return
    cflags = installed.pkg_config(stage, "--cflags", "gpuzones")
    # gpuzones/opencl.h is for programs that use OpenCL: with OpenCL's flags.
    cl_cflags = installed.run(["pkg-config", "--cflags", "OpenCL"])
    cl_libs = installed.run(["pkg-config", "--libs", "OpenCL"])
    with_cl = cl_cflags.returncode == 0 and cl_libs.returncode == 0
    warn = ["-Wall", "-Wextra", "-Werror"] + installed.sanitize_flags(args.build)
    # The program's own Vulkan work (no gpuzones in it), an object apart.
    vk_o = os.path.join(tmp, "api_vk.o")
    r = installed.run(["cc", "-std=gnu11"] + warn + cflags + ["-c", args.api_vk, "-o", vk_o])
    if not check(r.returncode == 0, "api_vk.c does not build: " + r.stderr[-1500:]):
        return
    api_dir = os.path.dirname(os.path.abspath(args.api_vk))
    run_env = dict(env, LD_LIBRARY_PATH=libdir)
    run_env.pop("VK_ADD_LAYER_PATH", None)
    run_env.pop("VK_INSTANCE_LAYERS", None)
    run_env.pop("VK_LOADER_DEBUG", None)
    for lang, driver in (("c", ["cc", "-std=gnu11"]), ("c++", ["c++", "-std=c++17", "-x", "c++"])):
        for enabled in (True, False):
            tag = "%s %s" % (lang, "enabled" if enabled else "disabled")
            exe = os.path.join(tmp, "installed-%s-%s" % (lang.replace("+", "x"),
                                                         "on" if enabled else "off"))
            cmd = (driver + (["-DGPUZONES_ENABLE"] if enabled else []) + warn
                   + (["-DWITH_OPENCL"] + cl_cflags.stdout.split() if with_cl else [])
                   + ["-I" + api_dir, args.program_src, "-x", "none", vk_o] + flags
                   + (cl_libs.stdout.split() if with_cl else []) + ["-o", exe])
            r = installed.run(cmd)
            if not check(r.returncode == 0, "%s: does not build with pkg-config's flags: %s\n%s"
                         % (tag, " ".join(cmd), r.stderr[-1500:])):
                continue
            trace = exe + ".json"
            r = installed.run([exe], env=dict(run_env, GPUZONES_OUTPUT=trace), timeout=120)
            said = "gpuzones %s" % ("enabled" if enabled else "disabled")
            if not check(r.returncode == 0 and said in r.stdout, "%s: exit %d, %r: %s"
                         % (tag, r.returncode, r.stdout.strip(), r.stderr[-800:])):
                continue
            if enabled:
                if check(os.path.exists(trace), "%s: no trace" % tag):
                    names = sorted(z["name"] for z in gztrace.load(trace).gpu_zones())
                    check(names == ["installed transient", "installed zone"],
                          "%s: zones %s, expected the program's two" % (tag, names))
            else:
                check(not os.path.exists(trace), "%s: a trace was written" % tag)
                nm = installed.run(["nm", "--undefined-only", exe])
                refs = [l.split()[-1] for l in nm.stdout.splitlines() if "gpuzones" in l]
                check(nm.returncode == 0 and not refs,
                      "%s: refers to gpuzones functions: %s" % (tag, refs))


def check_ldconfig_step(args, libdir):
    """The install's last step for a directory the dynamic linker does not
    search (the staging directory, installed without DESTDIR)."""
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
    r = installed.run(["sh", args.ldconfig_script, libdir], env=env)
    check(r.returncode == 0 and "LD_LIBRARY_PATH=" + libdir in r.stdout,
          "install-ldconfig.sh for %s: exit %d, %r (expected a line on LD_LIBRARY_PATH)"
          % (libdir, r.returncode, r.stdout + r.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--program-src", required=True, help="installed_program.c")
    ap.add_argument("--api-vk", required=True, help="tests/api/api_vk.c (its header beside it)")
    ap.add_argument("--ldconfig-script", required=True, help="scripts/install-ldconfig.sh")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gz-install-")
    stage = os.path.join(tmp, "stage")
    r = installed.meson_install(args.build, stage)
    if not check(r.returncode == 0, "meson install failed: " + r.stderr[-500:]):
        return 1
    check("gpuzones:" not in r.stdout + r.stderr,
          "a staged install (DESTDIR) said something of ldconfig: " + r.stdout + r.stderr)
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

    check_programs(args, stage, os.path.dirname(os.path.join(stage, lib[0])), tmp, env)
    check_ldconfig_step(args, os.path.dirname(os.path.join(stage, lib[0])))

    if failures:
        print("install test: %d failed; files in %s" % (len(failures), tmp))
        return 1
    shutil.rmtree(tmp)
    print("install test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
