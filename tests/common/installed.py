"""gpuzones as a user has it after `meson install`, for the tests that
build programs against it (tests/api, tests/install): the build installed
into a staging directory (DESTDIR), the flags gpuzones.pc gives with its
prefix moved into that directory, and the sanitizer flags a sanitized
libgpuzones needs programs to be built with."""
import json
import os
import subprocess


def run(cmd, env=None, timeout=300):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def meson_install(build, stage):
    """`meson install` of build into stage: the completed process."""
    return run(["meson", "install", "-C", build, "--destdir", stage, "--no-rebuild", "--quiet"])


def pc_dirs(stage):
    """The directories under stage that hold a gpuzones.pc."""
    return [d for d, _, fs in os.walk(stage) if "gpuzones.pc" in fs]


def pkg_config(stage, *args):
    """`pkg-config ARGS` (e.g. "--cflags", "--libs", "gpuzones") with the
    staged gpuzones.pc first on the path and its prefix moved into stage,
    split into flags; None where pkg-config fails."""
    env = dict(os.environ, PKG_CONFIG_PATH=os.pathsep.join(
        pc_dirs(stage) + [os.environ.get("PKG_CONFIG_PATH", "")]))
    prefix = run(["pkg-config", "--variable=prefix", "gpuzones"], env=env).stdout.strip()
    r = run(["pkg-config", "--define-variable=prefix=" + stage + prefix] + list(args), env=env)
    return r.stdout.split() if r.returncode == 0 else None


def sanitize_flags(build):
    """The build's -fsanitize: a sanitized libgpuzones needs programs built
    with the same runtime first in line."""
    r = run(["meson", "introspect", build, "--buildoptions"])
    try:
        opts = {o["name"]: o["value"] for o in json.loads(r.stdout)}
    except ValueError:
        return []
    value = opts.get("b_sanitize", "none")
    return [] if value in ("none", "", None) else ["-fsanitize=" + value]
