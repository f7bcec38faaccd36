#!/usr/bin/env python3
"""Runs the tests meson registered for a build directory that travelled to
another machine, where meson's own `meson test` would refuse it (another
meson version configured it). Each test runs as meson would: its command
(python3 from the PATH), its environment, in the build directory.

    run_tests.py TESTS_JSON OUT_DIR [--build DIR] NAME...

TESTS_JSON is `meson introspect build --tests`; a NAME ending in '*' is a
prefix, and tests run in the order of the names. Writes OUT_DIR/tests.log
with every test's output and prints a line per test, then the counts.
Stops starting tests after BUDGET_S seconds (environment, default 480)."""
import argparse
import json
import os
import subprocess
import time


def rank(name, patterns):
    for i, w in enumerate(patterns):
        if name == w or (w.endswith("*") and name.startswith(w[:-1])):
            return i
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tests")
    ap.add_argument("out")
    ap.add_argument("--build", default="build")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    with open(args.tests) as f:
        tests = [t for t in json.load(f) if rank(t["name"], args.names) is not None]
    tests.sort(key=lambda t: rank(t["name"], args.names))
    deadline = time.time() + float(os.environ.get("BUDGET_S", "480"))
    passed = 0
    with open(os.path.join(args.out, "tests.log"), "w") as log:
        for t in tests:
            if time.time() > deadline:
                print("%-45s not run (time budget)" % t["name"])
                continue
            cmd = list(t["cmd"])
            if os.path.basename(cmd[0]).startswith("python3"):
                cmd[0] = "python3"
            env = dict(os.environ)
            env.update(t.get("env") or {})
            t0 = time.time()
            try:
                p = subprocess.run(cmd, cwd=t.get("workdir") or os.path.abspath(args.build), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", timeout=min(2 * (t.get("timeout") or 60), 240))
                status, text = ("OK" if p.returncode == 0 else "FAIL (%d)" % p.returncode), p.stdout
            except subprocess.TimeoutExpired as e:
                out = e.stdout or ""
                status, text = "TIMEOUT", out.decode(errors="replace") if isinstance(out, bytes) else out
            passed += status == "OK"
            log.write("==== %s: %s (%.1f s)\n%s\n" % (t["name"], status, time.time() - t0, text))
            log.flush()
            print("%-45s %-10s %6.1f s" % (t["name"], status, time.time() - t0), flush=True)
    print("%d passed, %d not passed" % (passed, len(tests) - passed))


if __name__ == "__main__":
    main()
