#!/usr/bin/env python3
"""Reliability scenarios: gz-test-rel under the gpuzones layer (and, for
injected driver errors, the clock-fault layer below it), each compared with
the same program without our layer.  What is checked in every scenario:
the program's own output and exit status are the same with and without the
layer, it ends within its time limit, the trace file is complete JSON, and
where gpuzones gave something up stderr says so in a "gpuzones:" line.

    check_rel.py --program gz-test-rel --layer-dir build/json
                 --fault-layer-dir build/tests/faultlayer --scenario NAME
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vk"))
import gztrace  # noqa: E402

LAYER = "VK_LAYER_GPUZONES_timing"
FAULT_LAYER = "VK_LAYER_GPUZONES_clockfault"
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
TIMEOUT_S = 240
EXITS_WITH_LIVE_OBJECTS = ("exit-threads", "fork-noexec")

# name: (program arguments, fault variables or None for no fault layer)
SCENARIOS = {
    "device-lost": (["submit-errors", "8"],
                    {"GZFAULT_SUBMIT_ERROR": "lost", "GZFAULT_SUBMIT_ERROR_FROM": "5"}),
    "out-of-memory": (["submit-errors", "8"],
                      {"GZFAULT_SUBMIT_ERROR": "oom", "GZFAULT_SUBMIT_ERROR_FROM": "4",
                       "GZFAULT_SUBMIT_ERROR_COUNT": "2"}),
    "calibration-lost": (["submit-errors", "6"], {"GZFAULT_CALIB_ERROR": "lost"}),
    "fork-noexec": (["fork-noexec"], None),
    "fork-exec": (["fork-exec"], None),
    "exit-threads": (["exit-threads"], None),
    "free-pending": (["free-pending", "40"], None),
    "bad-names": (["bad-names"], None),
    # The layer under load: batches of thousands of command buffers, a
    # queue log full of finished work, a tiny event queue, a long loop.
    "batch-3000": (["batches", "3000"], None),
    "batches-600-700": (["batches", "600", "700"], None),
    # Each batch has more zones and label events than a queue half holds.
    "batches-600-700-small-queue": (["batches", "600", "700"], None),
    "singles-512": (["singles", "512"], None),
    "tiny-queue": (["loop", "20000", "1000"], None),
    "loop": (["loop", "100000", "1000"], None),
    "rate": (["rate", "2000", "60"], None),
    # A program's bug: one command buffer resubmitted while still pending.
    "resubmit": (["resubmit", "4000", "100"], None),
    "churn": (["churn", "300"], None),
    # A lower layer's callback comes back to our layer during the submit.
    "reenter": (["small"], {"GZFAULT_REENTER": "1"}),
}

# gpuzones settings per scenario.
LAYER_ENV = {
    "singles-512": {"GPUZONES_POLL_MS": "200"},
    "tiny-queue": {"GPUZONES_QUEUE_ITEMS": "1024", "GPUZONES_POLL_MS": "1000"},
    "batches-600-700-small-queue": {"GPUZONES_QUEUE_ITEMS": "1024"},
    "loop": {"GPUZONES_RAW_TICKS": "1"},
}
# What each load scenario must give: submit zones, command buffer zones
# (and as many "work" labels), and whether zones may be dropped.
LOAD = {
    "batch-3000": (1, 3000, False),
    "batches-600-700": (2, 1300, False),
    "batches-600-700-small-queue": (2, 1300, False),
    "singles-512": (513, 513, False),
    "tiny-queue": (20000, 20000, True),
    "loop": (100000, 100000, False),
    "rate": (120000, 120000, False),
}

# What the trace must show for each bad-names label: the text as a JSON
# reader gives it back, with U+FFFD for each byte that is not UTF-8, and a
# megabyte label cut to its first 4 KiB.
BAD_NAMES = [
    'quote " and backslash \\ and slash /',
    "tab\there newline\nbell\a escape\x1b del\x7f",
    "not utf-8: \ufffd\ufffd \ufffd( \ufffd\ufffd\ufffd \ufffd\ufffd\ufffd\ufffd end",
    '{"ph":"X","name":"injected"},',
    "".join(chr(ord("a") + i % 26) for i in range(4096)),
]


def run(args, tmp, tag, with_layer, prog_args, fault):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUZONES_", "GZFAULT_", "VK_"))}
    env["VK_ICD_FILENAMES"] = LAVAPIPE_ICD
    env.setdefault("XDG_RUNTIME_DIR", tmp)
    paths, layers = [], []
    if with_layer:
        paths.append(os.path.abspath(args.layer_dir))
        layers.append(LAYER)
    if fault is not None:
        paths.append(os.path.abspath(args.fault_layer_dir))
        layers.append(FAULT_LAYER)
        env.update(fault)
    if layers:
        env["VK_ADD_LAYER_PATH"] = os.pathsep.join(paths)
        env["VK_INSTANCE_LAYERS"] = ":".join(layers)
    if prog_args[0] in EXITS_WITH_LIVE_OBJECTS:
        # These exit on purpose with the device alive (from another thread,
        # or in a forked child): LeakSanitizer then reports the driver's
        # allocations, with or without our layer, and in a forked child of a
        # threaded process it can hang stopping threads that are not there.
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    trace = os.path.join(tmp, tag + ".json")
    env["GPUZONES_OUTPUT"] = trace
    env.update(LAYER_ENV.get(args.scenario, {}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([os.path.abspath(args.program)] + prog_args, env=env, capture_output=True, text=True, errors="replace",
                       timeout=TIMEOUT_S, cwd=tmp)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Wall and CPU time of the program, for docs/PERFORMANCE.md's load rows.
    p.wall_s = time.monotonic() - t0
    p.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, trace


def program_lines(stdout):
    """The program's own report, with pids (which differ run to run) masked."""
    return [re.sub(r"\b\d{3,}\b", "<pid>", line) for line in stdout.splitlines()]


def labels(trace):
    return sorted(z["name"] for z in trace.gpu_zones(level="label"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", required=True)
    ap.add_argument("--layer-dir", required=True)
    ap.add_argument("--fault-layer-dir", required=True)
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    ap.add_argument("--rss-limit", type=int,
                    help="churn: most bytes a device the layer may add to resident memory")
    ap.add_argument("--count", type=int,
                    help="load scenarios: submits (loop) or seconds (rate) instead of the default")
    args = ap.parse_args()
    prog_args, fault = SCENARIOS[args.scenario]
    RSS_LIMIT[0] = args.rss_limit
    if args.count and args.scenario in ("loop", "rate", "churn"):
        prog_args = prog_args[:]
        prog_args[2 if args.scenario == "rate" else 1] = str(args.count)
        if args.scenario in LOAD:
            n = args.count * (2000 if args.scenario == "rate" else 1)
            LOAD[args.scenario] = (n, n, False)
    failures = []
    with tempfile.TemporaryDirectory(prefix="gz-rel-") as tmp:
        base, _ = run(args, tmp, "base", False, prog_args, fault)
        p, trace_path = run(args, tmp, "layer", True, prog_args, fault)
        print("without the layer: exit %d, output %s" % (base.returncode, program_lines(base.stdout)))
        print("with the layer:    exit %d, output %s" % (p.returncode, program_lines(p.stdout)))
        print("time: without %.2f s wall %.2f s CPU, with %.2f s wall %.2f s CPU: wall ratio %.2f, "
              "CPU ratio %.2f" % (base.wall_s, base.cpu_s, p.wall_s, p.cpu_s,
                                  p.wall_s / max(base.wall_s, 1e-9), p.cpu_s / max(base.cpu_s, 1e-9)))
        gz_lines = [l for l in p.stderr.splitlines() if l.startswith("gpuzones:")]
        print("gpuzones said:\n  " + "\n  ".join(gz_lines))
        if p.returncode != base.returncode:
            # what ended it (a sanitizer's report among them)
            failures.append("exit status %d with the layer, %d without; its stderr ends:\n%s"
                            % (p.returncode, base.returncode, p.stderr[-6000:]))
        if program_lines(p.stdout) != program_lines(base.stdout):
            failures.append("the program printed something else with the layer")
        if base.returncode != 0:
            failures.append("the program itself failed (%d): %s" % (base.returncode, base.stderr[-2000:]))
        try:
            trace = gztrace.load(trace_path)
        except Exception as e:  # noqa: BLE001 - any load failure is the finding
            failures.append("the trace does not load: %s" % e)
            trace = None
        if trace is not None and not trace.complete:
            failures.append("the trace file was not ended")
        elif trace is not None:
            # Faults may drop zones; none may vanish.
            failures += trace.accounting_errors(dropped=None)
        said = "\n".join(gz_lines)
        if trace is not None:
            failures += check(args.scenario, p, base, trace, said, tmp)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("pass")
    return 1 if failures else 0


def results(stdout):
    return [int(m.group(2)) for m in re.finditer(r"^result (\d+) (-?\d+)$", stdout, re.M)]


def check_load(scenario, p, trace, said):
    """Every submit timed, exactly: zone counts by level, nothing dropped
    (unless the scenario starves the event queue: then every loss counted
    and said), and no zone made of a timestamp the GPU did not write."""
    f = []
    submits, cmdbufs, may_drop = LOAD[scenario]
    made = re.search(r"^made (\d+) (\d+)$", p.stdout, re.M)
    if not made or (int(made.group(1)), int(made.group(2))) != (submits, cmdbufs):
        f.append("the program says it made %s, expected %d batches and %d command buffers"
                 % (made.group(0) if made else "nothing", submits, cmdbufs))
    tot = (trace.totals() or {}).get("args", {})
    got = {lv: len(trace.gpu_zones(level=lv)) for lv in ("submit", "cmdbuf", "label")}
    want = {"submit": submits, "cmdbuf": cmdbufs, "label": cmdbufs}
    print("zones by level %s, totals %s" % (got, tot))
    if may_drop:
        if sum(want.values()) != tot.get("zones_produced"):
            f.append("%s zones produced, the program made %d" % (tot.get("zones_produced"), sum(want.values())))
        if tot.get("items_dropped") and "queue items were dropped" not in said:
            f.append("items were dropped and no gpuzones line says so")
    else:
        if got != want:
            f.append("zones by level %s, expected %s" % (got, want))
        if tot.get("zones_dropped") or tot.get("items_dropped"):
            f.append("zones were dropped: %s" % tot)
    zero = [z for z in trace.gpu_zones() if z["_dur"] <= 0]
    if zero:
        f.append("%d zones of no duration, e.g. %s" % (len(zero), gztrace.describe(zero[0])))
    raw = [z for z in trace.gpu_zones() if "gpu_ticks" in z.get("args", {})]
    bad = [z for z in raw if not 0 < z["args"]["gpu_ticks"][0] <= z["args"]["gpu_ticks"][1]]
    if bad:
        f.append("%d zones with timestamps the GPU cannot have written, e.g. %s %s"
                 % (len(bad), gztrace.describe(bad[0]), bad[0]["args"]["gpu_ticks"]))
    if scenario == "loop" and len(raw) != len(trace.gpu_zones()):
        f.append("GPUZONES_RAW_TICKS=1 and only %d of %d zones carry their ticks"
                 % (len(raw), len(trace.gpu_zones())))
    return f


RSS_LIMIT = [None]  # --rss-limit


def check(scenario, p, base, trace, said, tmp):
    if scenario in LOAD:
        return check_load(scenario, p, trace, said)
    f = []
    got = labels(trace)
    if scenario in ("device-lost", "out-of-memory"):
        seen = results(p.stdout)
        ok = [i + 1 for i, r in enumerate(seen) if r == 0]
        want_error = -4 if scenario == "device-lost" else -2  # VK_ERROR_DEVICE_LOST, OUT_OF_DEVICE_MEMORY
        if want_error not in seen:
            f.append("the program never saw the injected error %d: %s" % (want_error, seen))
        expect = sorted("submit %d" % i for i in ok)
        if scenario == "device-lost":
            # Timing stops at the loss: the zones of the submits before it.
            if "was lost; timing stops" not in said:
                f.append("no gpuzones line says the device was lost")
            before = sorted("submit %d" % i for i in ok if i < seen.index(want_error) + 1)
            if got != before:
                f.append("label zones %s, expected those before the loss %s" % (got, before))
        elif got != expect:
            f.append("label zones %s, expected one per successful submit %s" % (got, expect))
    elif scenario == "calibration-lost":
        if "was lost (vkGetCalibratedTimestampsEXT)" not in said:
            f.append("no gpuzones line says calibration found the device lost")
        if results(p.stdout) != results(base.stdout) or any(results(p.stdout)):
            f.append("the program's own submits changed: %s" % results(p.stdout))
    elif scenario in ("fork-noexec", "fork-exec"):
        expect = sorted(["before fork"] * 3 + ["after fork"] * 3)
        if got != expect:
            f.append("parent's label zones %s, expected %s" % (got, expect))
        if "child-exit 0" not in p.stdout:
            f.append("the child did not exit 0")
        if scenario == "fork-noexec":
            if "timing is off in this child of fork()" not in said:
                f.append("the forked child did not say that its timing is off")
        else:
            m = re.search(r"writing (\S+) instead", said)
            if not m:
                f.append("the exec'd child did not say where its own trace went")
            else:
                child = gztrace.load(m.group(1))
                clabels = labels(child)
                if clabels != ["exec child"] * 3:
                    f.append("the exec'd child's trace has labels %s" % clabels)
    elif scenario == "exit-threads":
        if not got or set(got) - {"thread 0", "thread 1"}:
            f.append("label zones %s, expected some of 'thread 0' and 'thread 1'" % sorted(set(got)))
        totals = trace.totals() or {}
        print("trace totals: %s, %d label zones" % (totals, len(got)))
    elif scenario == "bad-names":
        if not gztrace.strict_parse_ok(trace.path):
            f.append("the trace is not strict JSON")
        if sorted(got) != sorted(BAD_NAMES):
            f.append("label names %r, expected %r" % ([g[:80] for g in got], [b[:80] for b in BAD_NAMES]))
        if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", p.stderr):
            f.append("a control character from a label reached stderr (the summary)")
        if any(z["name"] == "injected" for z in trace.zones()):
            f.append("a label's text became an event of its own")
    elif scenario == "reenter":
        # No deadlock (we are here), every submit timed, the labels the
        # callback added and its name on the queue's track.
        if got.count("small") != 3:
            f.append("label zones %s, expected three 'small'" % got)
        # The callback's queue labels hold no GPU work (begun and ended
        # inside one call): no zone, each counted as dropped.
        tot = (trace.totals() or {}).get("args", {})
        if got.count("callback label") or tot.get("zones_dropped") != 3:
            f.append("the callback's three empty queue labels: %d zones, %s dropped (want 0 and 3)"
                     % (got.count("callback label"), tot.get("zones_dropped")))
        if "renamed in a callback" not in trace.thread_names().values():
            f.append("the callback's name for the queue is not a track name: %s"
                     % sorted(set(trace.thread_names().values()), key=str)[:6])
    elif scenario == "churn":
        # 300 devices, two labelled submits each, handles reused: every zone
        # on the track of its own device, none lost.
        devices = int(p.args[2]) if len(p.args) > 2 else 300
        if got != ["churn"] * (2 * devices):
            f.append("%d 'churn' label zones, expected %d" % (len(got), 2 * devices))
        tot = (trace.totals() or {}).get("args", {})
        if tot.get("zones_dropped"):
            f.append("zones were dropped: %s" % tot)
        m = re.search(r"^rss (\d+) (\d+)$", p.stderr, re.M)
        mb = re.search(r"^rss (\d+) (\d+)$", base.stderr, re.M)
        print("RSS after a tenth of the devices and at the end: %s kB (without the layer: %s kB)"
              % (m.groups() if m else "?", mb.groups() if mb else "?"))
        # One summary line per kind of track, whatever the number of devices
        # (the device numbers " #<n>" are folded).
        lines = [l for l in p.stderr.splitlines() if l.startswith("gpuzones: track ")]
        if len(lines) > 2 or not all("(\u00d7%d)" % devices in l for l in lines):
            f.append("the summary's track lines do not fold the %d devices: %s"
                     % (devices, lines[:3]))
        if RSS_LIMIT[0] is not None:
            if not (m and mb):
                f.append("the program did not report its resident memory")
            else:
                grown = (int(m.group(2)) - int(m.group(1))) - (int(mb.group(2)) - int(mb.group(1)))
                per_device = grown * 1024 / (devices - devices // 10)
                print("the layer's growth after the first tenth: %d kB, %.0f bytes a device"
                      % (grown, per_device))
                if per_device > RSS_LIMIT[0]:
                    f.append("resident memory grows by %.0f bytes a device with the layer (limit %d): "
                             "a device's state is not given back" % (per_device, RSS_LIMIT[0]))
    elif scenario == "resubmit":
        # Vulkan forbids it, the program runs anyway: the layer must not
        # break it, nor reset queries the driver is still busy with, and
        # every zone it cannot keep is counted and said, none made of
        # another run's timestamps.
        tot = (trace.totals() or {}).get("args", {})
        if tot.get("zones_produced") != 3 * 4000:
            f.append("%s zones produced, the program made 4000 submissions of a labelled command "
                     "buffer" % tot.get("zones_produced"))
        if tot.get("zones_dropped") and "submitted again while an earlier submission of it was " \
                "still running" not in said:
            f.append("zones were dropped and no gpuzones line says why: %s" % said)
        zero = [z for z in trace.gpu_zones() if z["_dur"] <= 0]
        if zero:
            f.append("%d zones of no duration, e.g. %s" % (len(zero), gztrace.describe(zero[0])))
    elif scenario == "free-pending":
        expect = sorted("freed %d" % i for i in range(1, 41))
        if got != expect:
            missing = sorted(set(expect) - set(got))
            f.append("%d label zones, expected 40; missing %s" % (len(got), missing[:5]))
    return f


if __name__ == "__main__":
    sys.exit(main())
