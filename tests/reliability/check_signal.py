#!/usr/bin/env python3
"""Ctrl-C: a program ended by SIGINT, SIGTERM or SIGHUP under
gpuzones still gets its summary and a complete trace, and ends with the
same status as without gpuzones.

The looping program (the Vulkan sample, or the GL sample with the shim) is
run through `gpuzones run` under `timeout --preserve-status -s SIG`, which
signals the program and then its whole process group (two signals close
together, as a user who presses Ctrl-C in a terminal also sends to the
group). Checked: the exit status equals the one without gpuzones and is
death by that signal; the summary's last line is printed; the trace is
valid JSON with the totals event, zones in it, and produced = written +
dropped.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

SIGNALS = {"int": signal.SIGINT, "term": signal.SIGTERM, "hup": signal.SIGHUP}


def default_signals():
    # Whoever runs the tests may ignore some of these (a background job
    # ignores SIGINT); the program must see the default action.
    for s in SIGNALS.values():
        signal.signal(s, signal.SIG_DFL)


def run(cmd, env, after_s, sig):
    full = ["timeout", "--preserve-status", "-s", str(int(sig)), str(after_s)] + cmd
    return subprocess.run(full, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=default_signals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True, help="build/tools/gpuzones")
    ap.add_argument("--signal", required=True, choices=sorted(SIGNALS))
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    sig = SIGNALS[args.signal]
    prog = args.program[1:] if args.program[:1] == ["--"] else args.program
    env = dict(os.environ)
    env.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    env.update(LIBGL_ALWAYS_SOFTWARE="1", EGL_LOG_LEVEL="fatal")
    after = 3
    with tempfile.TemporaryDirectory(prefix="gz-signal-") as tmp:
        plain = run(prog, env, after, sig)
        want = 128 + int(sig)
        if plain.returncode != want:
            print("FAIL: without gpuzones the program exited %d, not %d (death by %s): %s"
                  % (plain.returncode, want, sig.name, plain.stderr[-800:]))
            return 1
        trace = os.path.join(tmp, "trace.json")
        r = run([args.tool, "run", "-o", trace, "--"] + prog, env, after, sig)
        print("%s: exit %d without gpuzones, %d with" % (sig.name, plain.returncode, r.returncode))
        ok = True
        if r.returncode != plain.returncode:
            print("FAIL: the exit status differs")
            ok = False
        last = [l for l in r.stderr.splitlines() if l.startswith("gpuzones: trace written to")]
        if not last:
            print("FAIL: no summary (no 'trace written to' line):\n" + r.stderr[-1500:])
            ok = False
        else:
            print(last[0])
        try:
            with open(trace) as f:
                events = json.load(f)
        except (OSError, ValueError) as e:
            print("FAIL: the trace is not valid JSON: %s" % e)
            return 1
        totals = [e for e in events if e.get("name") == "gpuzones_totals"]
        zones = [e for e in events if e.get("ph") == "X" and e.get("cat") == "gpu"]
        if not totals:
            print("FAIL: the trace has no totals event")
            return 1
        t = totals[0]["args"]
        if t["zones_produced"] != t["zones_written"] + t["zones_dropped"]:
            print("FAIL: totals do not balance: %s" % t)
            ok = False
        if not zones or len(zones) != t["zones_written"]:
            print("FAIL: %d GPU zones in the trace, totals say %d" % (len(zones), t["zones_written"]))
            ok = False
        print("trace: %d GPU zones, totals %s" % (len(zones), t))
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
