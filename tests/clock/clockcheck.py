#!/usr/bin/env python3
"""GPU clock accuracy against exact ground truth (see README.md).

lavapipe's device timestamps are CLOCK_MONOTONIC ns, the trace's timeline.
The clock-fault layer (tests/faultlayer) sits between gpuzones and the driver
and replaces every device timestamp with a fake counter (other period, N
valid bits, drift, wobble, a step), logging "<value handed up> <real ns>" for
each one.  With GPUZONES_RAW_TICKS=1 every GPU zone carries
args.gpu_ticks = [begin, end], the raw values gpuzones read, so the log gives
each zone's true begin and end, and the error of the trace is exact.

    clockcheck.py --scenario NAME --sample S --layer-dir D --fault-layer-dir F
    clockcheck.py --selftest      (the analysis itself, on made-up data)

Each scenario run is preceded by a self-check run: the fault layer with no
fault variables must hand up the real clock, and the trace must then be
exact; that proves the harness, the log and the chain.
"""
import argparse
import math
import os
import time
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vk"))
import gztrace  # noqa: E402

LAYER = "VK_LAYER_GPUZONES_timing"
FAULT_LAYER = "VK_LAYER_GPUZONES_clockfault"
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
FRAME_SLEEP_MS = 20  # plus ~1 ms of GPU work: ~47 frames a second
FRAME_S = 0.0215
RUN_TIMEOUT_S = 60
SELF_CHECK_S = 1.5
SELF_CHECK_LIMIT_NS = 1000  # "about 0": calibrated lavapipe is exact to ~1 ns


def f32(x):
    """x as the float that timestampPeriod holds."""
    return struct.unpack("f", struct.pack("f", x))[0]


# ---- scenarios -----------------------------------------------------------------
#
# env: the fault variables.  run_s: how long the sample runs.  limit_us: the
# bound on |trace - truth| for the checked zones.  check: which zones count
# (see select_zones).  Comments say what each one stands for.

P36 = 0.0005  # ns per tick: 2^36 ticks in 34.4 ms
SCENARIOS = {
    # Intel's 36-bit counter wraps about hourly at 52 ns; here every 34 ms,
    # starting 1 ms before a wrap, so a 5 s run crosses it ~150 times.
    "wrap36": dict(env={"GZFAULT_VALID_BITS": "36", "GZFAULT_PERIOD_NS": repr(P36),
                        "GZFAULT_START_BEFORE_WRAP": str(round(1e6 / P36))},
                   run_s=5, limit_us=50, check="all", min_wraps=3, order=True),
    # A period that is no float (Intel Gen9: 52.08 ns) on 36 bits; started
    # mid-range so that the hourly wrap cannot fall into the run.
    "period52": dict(env={"GZFAULT_PERIOD_NS": "52.08", "GZFAULT_VALID_BITS": "36",
                          "GZFAULT_START_TICKS": str(1 << 35)},
                     run_s=4, limit_us=50, check="all"),
    # No calibrated timestamps and a clock 1000 ppm fast: 6 ms apart after
    # 6 s, standing in for 100 ppm over a minute.
    "drift-uncalibrated": dict(env={"GZFAULT_HIDE_CALIBRATION": "1", "GZFAULT_DRIFT_PPM": "1000"},
                               run_s=6, limit_us=50, check="last-second"),
    # No calibration, 50 ppm drift plus a rate that swings +-200 ppm over 4 s
    # (temperature, power states): the offset is a curve, not a line.
    "wobble": dict(env={"GZFAULT_HIDE_CALIBRATION": "1", "GZFAULT_DRIFT_PPM": "50",
                        "GZFAULT_WOBBLE_PPM": "200", "GZFAULT_WOBBLE_PERIOD_S": "4"},
                   run_s=8, limit_us=100, check="second-half"),
    # The counter steps 2 ms forward 3 s in (a reset, a power-state change):
    # with calibrated timestamps, and with only sync points and bounds.
    # Calibrated timestamps whose only host domain is CLOCK_MONOTONIC_RAW
    # (pocl's clock, and some drivers'): translated to CLOCK_MONOTONIC, with
    # the counter 1000 ppm fast so that the calibration has work to do.
    "host-raw": dict(env={"GZFAULT_HOST_DOMAIN_RAW": "1", "GZFAULT_DRIFT_PPM": "1000"},
                     run_s=4, limit_us=50, check="all", method="calibrated"),
    "jump-calibrated": dict(env={"GZFAULT_JUMP_AT_MS": "3000", "GZFAULT_JUMP_NS": "2000000"},
                            run_s=6, limit_us=50, check="jump"),
    "jump-uncalibrated": dict(env={"GZFAULT_HIDE_CALIBRATION": "1", "GZFAULT_JUMP_AT_MS": "3000",
                                   "GZFAULT_JUMP_NS": "2000000"},
                              run_s=6, limit_us=50, check="jump"),
    # No calibration, and 2 ms steps at moments drawn from --seed
    # (STEPS_PER_RUN a run) under gz-clock-load, whose queue is never idle
    # for 400 ms at a time: a step there is seen by submission bounds alone
    # until the next sync point. Checked from the first zone after each step.
    "steps-busy": dict(env={"GZFAULT_HIDE_CALIBRATION": "1"},
                       run_s=6, limit_us=50, check="steps", program="load", steps=2000000),
    # The same with the counter 1000 ppm slow, and also on 32 bits (a wrap
    # every 4.3 s, the first 2.5 s in).
    "steps-busy-drift": dict(env={"GZFAULT_HIDE_CALIBRATION": "1", "GZFAULT_DRIFT_PPM": "-1000"},
                             run_s=6, limit_us=50, check="steps", program="load", steps=2000000),
    "steps-busy-wrap-drift": dict(env={"GZFAULT_HIDE_CALIBRATION": "1", "GZFAULT_DRIFT_PPM": "-1000",
                                       "GZFAULT_VALID_BITS": "32",
                                       "GZFAULT_START_BEFORE_WRAP": "2500000000"},
                                  run_s=6, limit_us=50, check="steps", program="load",
                                  steps=2000000),
    # A timestampPeriod off by 1 % and by 5 % (drift the fit must follow far
    # beyond any crystal's), no calibration, under gz-clock-load: all zones
    # once the clock has settled (two sync points 100 ms apart; zones wait
    # for that), that is all but the first SETTLE_S.
    "drift-1pct": dict(env={"GZFAULT_HIDE_CALIBRATION": "1", "GZFAULT_DRIFT_PPM": "10000"},
                       run_s=5, limit_us=50, check="settled", program="load"),
    "drift-5pct": dict(env={"GZFAULT_HIDE_CALIBRATION": "1", "GZFAULT_DRIFT_PPM": "-50000"},
                       run_s=5, limit_us=50, check="settled", program="load"),
}

STEPS_PER_RUN = 3
STEPS_FROM_S = 1.0
# Zones between two steps less than this apart are checked, but not
# counted on: in an idle phase (a frame every 22 ms) 65 ms hold 3 frames.
SHORT_GROUP_S = 0.5
SETTLE_S = 0.5
# Zones a run may have in doubt (a step the data could not place), of those
# checked: replays of 258 loaded runs had 2-9 of 2 800-22 000, at most 0.22 %.
DOUBT_SHARE = 0.01


def seeded_steps(seed, run_s, size_ns):
    """GZFAULT_JUMPS for a run: STEPS_PER_RUN forward steps of size_ns, each
    at a moment drawn uniformly from its own third of the run from 1.2 s to
    0.6 s before the end, so that seeds sweep the moment of the step against
    the app's phases (idle frames with sync points, a busy queue without)."""
    import random
    rng = random.Random(seed)
    lo, hi = 1.2, run_s - 0.6
    part = (hi - lo) / STEPS_PER_RUN
    return ",".join("%.3f:%d" % ((lo + part * (i + rng.random())) * 1e3, size_ns)
                    for i in range(STEPS_PER_RUN))


def steps_of(env):
    """[(ms after t0, ns)] of the scenario's steps."""
    out = []
    if "GZFAULT_JUMP_AT_MS" in env:
        out.append((float(env["GZFAULT_JUMP_AT_MS"]), float(env.get("GZFAULT_JUMP_NS", 0))))
    for item in filter(None, env.get("GZFAULT_JUMPS", "").split(",")):
        at, ns = item.split(":")
        out.append((float(at), float(ns)))
    return out


def apply_seed(name, seed):
    """Puts the seed's steps into a steps-* scenario's variables."""
    sc = SCENARIOS[name]
    if sc.get("steps"):
        sc["env"]["GZFAULT_JUMPS"] = seeded_steps(seed, sc["run_s"], sc["steps"])


def env_line(name):
    return " ".join("%s=%s" % kv for kv in sorted(SCENARIOS[name]["env"].items()))


# ---- running ---------------------------------------------------------------------


def base_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUZONES_", "GZFAULT_", "VK_LOADER_", "VK_INSTANCE_LAYERS",
                                "VK_LAYER_PATH", "VK_ADD_LAYER_PATH", "VK_LAYER_ENABLES",
                                "VK_LAYER_DISABLES"))}
    env.setdefault("VK_ICD_FILENAMES", LAVAPIPE_ICD)
    return env


def chain_errors(stderr):
    """app -> gpuzones -> clockfault -> driver, in both chains.  The loader
    (1.3.239, measured) chains layers in the order their manifests are found
    on VK_ADD_LAYER_PATH, not in the VK_INSTANCE_LAYERS order, so the order
    is checked rather than assumed."""
    stacks = gztrace.loader_callstacks(stderr)
    kinds = [k for k, _ in stacks]
    errors = []
    for kind in ("vkCreateInstance", "vkCreateDevice"):
        if kind not in kinds:
            errors.append("the loader printed no %s callstack (VK_LOADER_DEBUG=layer)" % kind)
    for kind, layers in stacks:
        if layers[-2:] != [LAYER, FAULT_LAYER]:
            errors.append("%s chain is %s; wanted %s then %s right above the driver"
                          % (kind, " -> ".join(layers) or "(no layers)", LAYER, FAULT_LAYER))
    return errors


def run_sample(args, fault_env, run_s, tmp, tag, program="sample"):
    """Runs the compute sample under gpuzones with the fault layer below it.
    Returns (trace, log pairs, the fault layer's banner, errors)."""
    trace_path = os.path.join(tmp, tag + ".json")
    log_path = os.path.join(tmp, tag + ".log")
    env = base_env()
    env.update(fault_env)
    env.update(VK_ADD_LAYER_PATH=os.pathsep.join([os.path.abspath(args.layer_dir),
                                                  os.path.abspath(args.fault_layer_dir)]),
               VK_INSTANCE_LAYERS=LAYER + ":" + FAULT_LAYER,
               VK_LOADER_DEBUG="layer",
               GPUZONES_OUTPUT=trace_path, GPUZONES_SUMMARY="1", GPUZONES_RAW_TICKS="1",
               GZFAULT_LOG=log_path)
    if getattr(args, "record", False):
        # The clock models' inputs, to replay the run (replay.py).
        env["GPUZONES_CLOCK_RECORD"] = os.path.join(tmp, tag + ".rec")
    if program == "load":
        if not getattr(args, "load_program", None):
            return None, None, "", ["%s: needs --load-program (gz-clock-load)" % tag]
        cmd = [os.path.abspath(args.load_program), "--seconds", str(int(math.ceil(run_s)))]
    else:
        frames = max(1, int(round(run_s / FRAME_S)))
        cmd = [os.path.abspath(args.sample), "--frames", str(frames), "--sleep-ms",
               str(FRAME_SLEEP_MS)]
    # A busy loop beside the run (--busy-loop): the load under which the
    # CPU-side bounds and sync points are widest.
    busy = None
    if getattr(args, "busy_loop", False) and tag != "selfcheck":
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        p = subprocess.run(cmd, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, None, "", ["%s: the sample did not finish within %d s" % (tag, RUN_TIMEOUT_S)]
    finally:
        if busy:
            busy.kill()
            busy.wait()
    stderr = p.stderr.decode(errors="replace")
    with open(os.path.join(tmp, tag + ".stderr"), "w") as f:  # kept with the trace on failure
        f.write(stderr)
    errors = ["%s: %s" % (tag, e) for e in chain_errors(stderr)]
    if p.returncode != 0:
        tail = "\n".join(l for l in stderr.splitlines() if not l.startswith("LAYER:"))[-2000:]
        errors.append("%s: the sample exited with %d:\n%s" % (tag, p.returncode, tail))
        return None, None, stderr, errors
    try:
        trace = gztrace.load(trace_path, strict=True)
    except (OSError, gztrace.TraceError) as e:
        return None, None, stderr, errors + ["%s: trace: %s" % (tag, e)]
    # gz-clock-load submits ~2000 times a second; under a busy loop the
    # layer may drop a zone (it says so in its totals). That is no clock
    # error: count it, do not fail the clock test on it.
    if program == "load":
        errors += ["%s: %s" % (tag, e) for e in trace.accounting_errors(dropped=None)]
        dropped = (trace.totals() or {}).get("args", {}).get("zones_dropped", 0)
        if dropped:
            print("  %s: the layer dropped %d zones (not a clock error)" % (tag, dropped))
    else:
        errors += ["%s: %s" % (tag, e) for e in trace.accounting_errors()]
    errors += ["%s: %s" % (tag, e) for e in doubt_errors(trace, stderr)]
    try:
        pairs = read_log(log_path)
    except (OSError, ValueError) as e:
        return None, None, stderr, errors + ["%s: fault log: %s" % (tag, e)]
    return trace, pairs, fault_banner(stderr), errors


def doubt_errors(trace, stderr):
    """The summary must tell of every zone the trace marks as in doubt
    (args.clock_doubt_us), as many as there are."""
    marked = sum(1 for z in trace.gpu_zones() if z.get("args", {}).get("clock_doubt_us"))
    told = sum(int(n) for n in re.findall(r"; (\d+) zones? may be off by up to [0-9.]+ ms", stderr))
    if marked:
        print("  %d zones in the trace are marked in doubt; the summary tells of %d" % (marked, told))
    if marked != told:
        return ["the trace marks %d zones as in doubt (args.clock_doubt_us), the summary tells of %d"
                % (marked, told)]
    return []


def read_log(path):
    """[(value handed up, real ns)] in the order written."""
    pairs = []
    with open(path, encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 2:
                raise ValueError("line %d: %r is not '<ticks> <real ns>'" % (n, line))
            pairs.append((int(fields[0]), int(fields[1])))
    if not pairs:
        raise ValueError("empty: the layer rewrote no timestamp")
    return pairs


def fault_banner(stderr):
    """What the fault layer printed at load: t0 (its CLOCK_MONOTONIC then),
    the counter's start, bits, period.  The last load counts."""
    found = None
    for line in stderr.splitlines():
        m = re.match(r"gzfault: t0 (\d+) start (\d+) bits (\d+) period (\S+)$", line.strip())
        if m:
            found = dict(t0=int(m.group(1)), start=int(m.group(2)), bits=int(m.group(3)),
                         period=float(m.group(4)))
    return found


def fault_model_errors(pairs, env, banner):
    """Recomputes every logged value from its real time with the formula of
    tests/faultlayer/fault_layer.c and the scenario's variables: the ground
    truth is only as good as the fault is what the scenario says."""
    if banner is None:
        return ["the fault layer printed no 'gzfault: t0 ...' line at load"]
    num = lambda k, d=0.0: float(env.get(k, d))  # noqa: E731
    bits = int(env.get("GZFAULT_VALID_BITS", "64"))
    mask = (1 << bits) - 1 if 0 < bits < 64 else (1 << 64) - 1
    period = f32(num("GZFAULT_PERIOD_NS", 1.0))
    t0 = banner["t0"]
    if "GZFAULT_START_TICKS" in env:
        start = int(env["GZFAULT_START_TICKS"], 0) & ((1 << 64) - 1)
    elif "GZFAULT_START_BEFORE_WRAP" in env:
        start = (mask - int(env["GZFAULT_START_BEFORE_WRAP"], 0) + 1) & mask
    else:
        start = round(t0 / period)
    errors = []
    if abs(banner["start"] - start) > 1 or banner["bits"] != bits or f32(banner["period"]) != period:
        errors.append("the fault layer says start %d bits %d period %g; the scenario means "
                      "start %d bits %d period %g" % (banner["start"], banner["bits"],
                                                     banner["period"], start, bits, period))
    drift = num("GZFAULT_DRIFT_PPM") * 1e-6
    wobble_period = num("GZFAULT_WOBBLE_PERIOD_S") * 1e9
    wobble = num("GZFAULT_WOBBLE_PPM") * 1e-6 * wobble_period / (2 * math.pi)
    steps = [(at * 1e6, ns) for at, ns in steps_of(env)]
    worst, bad = 0, []
    for raw, real in set(pairs):
        t = real - t0
        g = t * (1 + drift)
        if wobble_period > 0:
            g += wobble * (1 - math.cos(2 * math.pi * t / wobble_period))
        g += sum(ns for at, ns in steps if t > at)
        want = (banner["start"] + round(g / period)) & mask
        diff = (raw - want) & mask
        diff = min(diff, mask + 1 - diff)
        worst = max(worst, diff)
        if diff > 2:
            bad.append((raw, real, want))
    if bad:
        errors.append("%d of %d logged values are not the counter the scenario describes, e.g. "
                      "%d at real %d ns, wanted %d" % ((len(bad), len(set(pairs))) + bad[0]))
    print("  fault log: %d values, each within %d ticks of the counter recomputed from its real "
          "time" % (len(set(pairs)), worst))
    return errors


# ---- analysis ----------------------------------------------------------------------


class Analysis:
    """Each GPU zone's true begin/end from the log, and the errors of the
    trace and of an uncorrected mapping."""

    def __init__(self, zones, pairs, period_ns):
        self.failures = []
        self.pairs = pairs
        self.truth = {}
        for raw, real in pairs:
            self.truth.setdefault(raw, set()).add(real)
        # Uncorrected: the offset once from the first value, the nominal
        # period, no drift, no unwrap.
        self.raw0, self.real0 = pairs[0]
        self.period = f32(period_ns)
        self.zones = []  # dicts: zone, tb, te (true), eb, ee (trace - truth), naive
        self.missing = self.ambiguous = 0
        self.no_ticks = 0
        for z in zones:
            ticks = z.get("args", {}).get("gpu_ticks")
            if not (isinstance(ticks, list) and len(ticks) == 2 and all(isinstance(t, int) for t in ticks)):
                self.no_ticks += 1
                continue
            tb, te = self.truth.get(ticks[0]), self.truth.get(ticks[1])
            if tb is None or te is None:
                self.missing += 1
                if self.missing <= 3:
                    self.failures.append("%s: raw ticks %s are not in the fault log"
                                         % (gztrace.describe(z), ticks))
                continue
            if len(tb) > 1 or len(te) > 1:
                self.ambiguous += 1  # a value seen at two real times (wraps)
                continue
            tb, te = next(iter(tb)), next(iter(te))
            doubt = z.get("args", {}).get("clock_doubt_us", 0)
            self.zones.append(dict(
                zone=z, ticks=ticks, tb=tb, te=te, doubt=doubt * 1000,
                eb=z["_ts"] - tb, ee=z["_end"] - te,
                naive=max(abs(self.naive(ticks[0]) - tb), abs(self.naive(ticks[1]) - te))))
        if self.no_ticks:
            self.failures.append("%d of %d GPU zones carry no args.gpu_ticks [begin, end]: "
                                 "is GPUZONES_RAW_TICKS=1 supported by this layer?"
                                 % (self.no_ticks, len(zones)))
        if self.ambiguous * 100 > len(zones):
            self.failures.append("%d of %d zones have a raw value logged at two real times"
                                 % (self.ambiguous, len(zones)))

    def naive(self, raw):
        return self.real0 + round((raw - self.raw0) * self.period)

    @staticmethod
    def worst(zs):
        return max((max(abs(z["eb"]), abs(z["ee"])) for z in zs), default=0)

    @staticmethod
    def beyond_doubt(z):
        """How far a zone is off beyond what the layer said it may be off
        (args.clock_doubt_us, where a step fell that the data could not
        place)."""
        return max(abs(z["eb"]), abs(z["ee"])) - z["doubt"]

    @classmethod
    def worst_beyond_doubt(cls, zs):
        return max((cls.beyond_doubt(z) for z in zs), default=0)

    @staticmethod
    def worst_naive(zs):
        return max((z["naive"] for z in zs), default=0)

    def span(self):
        return (min(z["tb"] for z in self.zones), max(z["te"] for z in self.zones))

    def wraps(self):
        """Times the counter went down from one value to the next in real
        time order: each is at least one wrap (a lower bound when values
        are sparser than the wrap period)."""
        seq = sorted(set(self.pairs), key=lambda p: p[1])
        return sum(1 for a, b in zip(seq, seq[1:]) if b[0] < a[0])

    def profile(self, bins=8):
        """Worst |error| in each 1/bins of the run, in us: where in time the
        model went wrong."""
        if not self.zones:
            return []
        first, last = self.span()
        width = max(1, (last - first) / bins)
        worst = [None] * bins
        for z in self.zones:
            k = min(bins - 1, int((z["tb"] - first) / width))
            e = max(abs(z["eb"]), abs(z["ee"]))
            worst[k] = e if worst[k] is None else max(worst[k], e)
        return worst

    def negative_durations(self):
        return [z for z in self.zones if z["zone"]["_dur"] < 0]

    def order_errors(self):
        """Per track and level, in true order (on one queue, submission
        order): the trace's begins must not go backwards."""
        errors = []
        groups = {}
        for z in self.zones:
            key = (z["zone"].get("tid"), z["zone"].get("args", {}).get("level"))
            groups.setdefault(key, []).append(z)
        for (tid, level), zs in sorted(groups.items(), key=repr):
            zs.sort(key=lambda z: (z["tb"], -z["te"]))
            back = [(a, b) for a, b in zip(zs, zs[1:]) if b["zone"]["_ts"] < a["zone"]["_ts"]]
            if back:
                a, b = max(back, key=lambda ab: ab[0]["zone"]["_ts"] - ab[1]["zone"]["_ts"])
                errors.append("track %s %s: %d zones begin before the zone before them, worst "
                              "%.3f us back: %s after %s" % (
                                  tid, level, len(back), (a["zone"]["_ts"] - b["zone"]["_ts"]) / 1e3,
                                  gztrace.describe(b["zone"]), gztrace.describe(a["zone"])))
        return errors

    def jump_time(self):
        """Real time of the step: values before it are the real time (the
        default start makes the counter equal the clock), values after it
        are not."""
        period = self.period
        same = [real for raw, real in self.pairs if round(raw * period) == real]
        moved = [real for raw, real in self.pairs if round(raw * period) != real]
        if not same or not moved or max(same) > min(moved):
            return None
        return (max(same) + min(moved)) // 2


def select_zones(an, check, jump_at=None):
    """[(group name, zones)] that the scenario's bound applies to.  jump_at:
    the real time of the step if known (t0 + GZFAULT_JUMP_AT_MS), else it is
    found in the log."""
    if not an.zones:
        return []
    first, last = an.span()
    if check == "all":
        return [("all", an.zones)]
    if check == "last-second":
        return [("last 1 s", [z for z in an.zones if z["tb"] >= last - 1_000_000_000])]
    if check == "second-half":
        half = first + (last - first) // 2
        return [("second half", [z for z in an.zones if z["tb"] >= half])]
    if check == "settled":
        return [("from %.1f s" % SETTLE_S, [z for z in an.zones if z["tb"] >= first + SETTLE_S * 1e9])]
    if check == "steps":
        # From the first zone after each step; a zone that straddles a step
        # has no single right line and is left out (they are counted).
        at = sorted(jump_at or [])
        if not at:
            an.failures.append("the scenario has no steps")
            return []
        # Before the first step, from STEPS_FROM_S on: the first second is
        # the drift's to learn, as in drift-uncalibrated (sync points 100 ms
        # apart and 20-40 us wide leave the first drift a few hundred ppm out).
        groups = [("before the first step, from %.0f s" % STEPS_FROM_S,
                   [z for z in an.zones if first + STEPS_FROM_S * 1e9 <= z["tb"] and z["te"] < at[0]])]
        for i, a in enumerate(at):
            b = at[i + 1] if i + 1 < len(at) else float("inf")
            # Two steps a seed draws close together may have a few idle
            # frames between them, and no more (see SHORT_GROUP_S).
            short = " (%.0f ms to the next)" % ((b - a) / 1e6) if b - a < SHORT_GROUP_S * 1e9 else ""
            groups.append(("after step %d (%.3f s)%s" % (i + 1, (a - first) / 1e9, short),
                           [z for z in an.zones if a < z["tb"] and z["te"] < b]))
        straddle = sum(1 for z in an.zones if any(z["tb"] <= a <= z["te"] for a in at))
        print("  %d zones straddle a step (not checked)" % straddle)
        return groups
    if check == "jump":
        at = jump_at if jump_at is not None else an.jump_time()
        if at is None:
            an.failures.append("the fault log shows no single step of the counter")
            return []
        return [("before the jump", [z for z in an.zones if z["te"] < at]),
                ("1 s after the jump", [z for z in an.zones if z["tb"] > at + 1_000_000_000])]
    raise ValueError(check)


def us(ns):
    return "%.3f" % (ns / 1000.0)


def result(name, checked=0, worst=0, naive=0, ok=False, doubted=0, doubt=0):
    """One scenario's outcome: zones checked, worst |trace - truth| beyond
    the zone's stated doubt, the worst error of the uncorrected mapping over
    the same zones, in ns; and the zones in doubt, the most they were."""
    return dict(name=name, checked=checked, worst=worst, naive=naive, ok=ok, doubted=doubted,
                doubt=doubt)


def outcome(r):
    """pass/FAIL, with the zones the layer marked as in doubt."""
    word = "pass" if r["ok"] else "FAIL"
    if r.get("doubted"):
        word += " (%d in doubt, up to %.0f us)" % (r["doubted"], r["doubt"] / 1e3)
    return word


def row(r):
    return "| %s | %d | %s | %s | %s |" % (r["name"], r["checked"], us(r["worst"]), us(r["naive"]),
                                             outcome(r))


TABLE_HEAD = ("| scenario | zones checked | worst error (us) | error without correction (us) | result |\n"
              "|---|---:|---:|---:|---|")


def self_check(args, tmp):
    """The fault layer with no fault variable: it must hand up the real
    clock, every zone must find its raw values in the log, and the trace must
    be exact.  Returns failures."""
    print("self-check: the fault layer with no fault variable set")
    trace, pairs, banner, errors = run_sample(args, {}, SELF_CHECK_S, tmp, "selfcheck")
    if trace is None:
        return errors
    errors += ["self-check: " + e for e in fault_model_errors(pairs, {}, banner)]
    changed = [p for p in pairs if p[0] != p[1]]
    if changed:
        errors.append("self-check: with no fault set the layer changed %d of %d values, e.g. %s"
                      % (len(changed), len(pairs), changed[0]))
    an = Analysis(trace.gpu_zones(), pairs, 1.0)
    errors += ["self-check: " + f for f in an.failures]
    if len(an.zones) < 10:
        errors.append("self-check: only %d GPU zones could be checked" % len(an.zones))
    worst = an.worst(an.zones)
    print("  all: %d zones, worst error %s us, uncorrected %s us"
          % (len(an.zones), us(worst), us(an.worst_naive(an.zones))))
    if worst > SELF_CHECK_LIMIT_NS:
        errors.append("self-check: worst error %s us > %s us with the real clock: the harness "
                      "or the layer is wrong" % (us(worst), us(SELF_CHECK_LIMIT_NS)))
    return errors


def run_scenario(args, name, tmp):
    """Returns (result, failures)."""
    sc = SCENARIOS[name]
    trace, pairs, banner, failures = run_sample(args, sc["env"], sc["run_s"], tmp, name,
                                                sc.get("program", "sample"))
    if trace is None:
        return result(name), failures
    failures += fault_model_errors(pairs, sc["env"], banner)
    return analyse_scenario(name, sc, trace, pairs, failures, banner)


def analyse_scenario(name, sc, trace, pairs, failures, banner=None):
    failures = list(failures)
    an = Analysis(trace.gpu_zones(), pairs, float(sc["env"].get("GZFAULT_PERIOD_NS", "1")))
    failures += an.failures
    hidden = sc["env"].get("GZFAULT_HIDE_CALIBRATION") == "1"
    methods = sorted({str(e.get("args", {}).get("method")) for e in trace.calibration_events()})
    if hidden and "calibrated" in methods:
        failures.append("calibration is hidden, yet the trace says method 'calibrated'")
    if sc.get("method") and methods != [sc["method"]]:
        failures.append("the trace's calibration methods are %s, not only '%s'"
                        % (methods, sc["method"]))
    if "GZFAULT_HOST_DOMAIN_RAW" in sc["env"]:
        # What an untranslated RAW calibration would be off by here.
        raw_minus_mono = (time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
                          - time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        print("  CLOCK_MONOTONIC_RAW - CLOCK_MONOTONIC on this machine: %.3f us"
              % (raw_minus_mono / 1e3))
    jump_at = None
    if banner and "GZFAULT_JUMP_AT_MS" in sc["env"]:
        jump_at = banner["t0"] + round(float(sc["env"]["GZFAULT_JUMP_AT_MS"]) * 1e6)
    if sc["check"] == "steps" and banner:
        jump_at = [banner["t0"] + round(at * 1e6) for at, _ in steps_of(sc["env"])]
    groups = select_zones(an, sc["check"], jump_at)
    limit = sc["limit_us"] * 1000
    step_sizes = [abs(ns) for _, ns in steps_of(sc["env"])]
    checked, worst, naive = 0, 0, 0
    misplaced = 0  # failures that are only zones a whole step off (step_off)
    doubted = [z for _, zs in groups for z in zs if z["doubt"]]
    for gname, zs in groups:
        w, n = an.worst_beyond_doubt(zs), an.worst_naive(zs)
        nd = sum(1 for z in zs if z["doubt"])
        print("  %s: %d zones, worst error %s us%s, uncorrected %s us"
              % (gname, len(zs), us(w), " beyond the doubt of %d in doubt" % nd if nd else "",
                 us(n)))
        # Before the first step there may be nothing left to check when a
        # loaded machine started the program late (the steps count from
        # the fault layer's load); the groups after the steps may not be.
        if len(zs) < 10 and not gname.startswith("before the first step") and "to the next" not in gname:
            failures.append("%s: only %d zones to check (run too short?)" % (gname, len(zs)))
        if w > limit:
            over = [z for z in zs if an.beyond_doubt(z) > limit]
            if (all(step_off(z, step_sizes, limit) for z in over) and
                    len(over) <= max(20, 0.01 * len(zs))):
                misplaced += 1
            bad = max(zs, key=an.beyond_doubt)
            failures.append("%s: worst error %s us > %s us: %s is %s us off at its begin and %s us "
                            "at its end%s" % (gname, us(w), us(limit), gztrace.describe(bad["zone"]),
                                              us(bad["eb"]), us(bad["ee"]),
                                              ", beyond its doubt of %s us" % us(bad["doubt"])
                                              if bad["doubt"] else ""))
        checked += len(zs)
        worst, naive = max(worst, w), max(naive, n)
    # Doubt is for a step the data cannot place: never without a step, and
    # for a few zones next to one, not a way to pass by doubting everything.
    if doubted and not steps_of(sc["env"]):
        failures.append("%d zones are marked in doubt (args.clock_doubt_us), yet the clock has no "
                        "step" % len(doubted))
    if len(doubted) > DOUBT_SHARE * max(checked, 1):
        failures.append("%d of %d zones are marked in doubt (args.clock_doubt_us): more than %g %%"
                        % (len(doubted), checked, DOUBT_SHARE * 100))
    if sc.get("min_wraps"):
        wraps = an.wraps()
        first, last = min(r for _, r in pairs), max(r for _, r in pairs)
        print("  the counter wrapped at least %d times in %.2f s (about %d by the period)"
              % (wraps, (last - first) / 1e9,
                 (last - first) / (an.period * 2 ** int(sc["env"]["GZFAULT_VALID_BITS"]))))
        if wraps < sc["min_wraps"]:
            failures.append("the log shows the counter wrapping %d times, fewer than %d"
                            % (wraps, sc["min_wraps"]))
    if an.zones:
        first, last = an.span()
        print("  worst error (us) in each eighth of the %.1f s run: %s" % (
            (last - first) / 1e9, " ".join("-" if w is None else "%.1f" % (w / 1e3) for w in an.profile())))
    negative = an.negative_durations()
    if negative:
        failures.append("%d zones have a negative duration, e.g. %s"
                        % (len(negative), gztrace.describe(negative[0]["zone"])))
    if sc.get("order"):
        failures += an.order_errors()
    print("  calibration methods in the trace: %s" % ", ".join(methods))
    res = result(name, checked, worst, naive, not failures, len(doubted),
                 max((z["doubt"] for z in doubted), default=0))
    res["only_misplaced"] = bool(failures) and misplaced == len(failures)
    return res, failures


def step_off(z, step_sizes, limit):
    """Whether zone z is off by about a whole step of the clock (the step
    placed on the wrong side of it, unmarked)."""
    err = max(abs(z["eb"]), abs(z["ee"]))
    return any(abs(err - size) <= limit for size in step_sizes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--sample")
    ap.add_argument("--layer-dir")
    ap.add_argument("--fault-layer-dir")
    ap.add_argument("--env", action="append", default=[], metavar="GZFAULT_X=V",
                    help="add or change a fault variable of the scenario (experiments)")
    ap.add_argument("--load-program", help="gz-clock-load, for the scenarios that run it")
    ap.add_argument("--seed", type=int, default=1,
                    help="draws the moments of the steps of the steps-* scenarios")
    ap.add_argument("--busy-loop", action="store_true",
                    help="run a busy loop beside the scenario (not the self-check)")
    ap.add_argument("--no-self-check", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the trace and the log")
    ap.add_argument("--record", action="store_true",
                    help="keep the clock models' inputs as well (GPUZONES_CLOCK_RECORD), for "
                         "replay.py; implies --keep")
    ap.add_argument("--selftest", action="store_true", help="check the analysis on made-up data")
    args = ap.parse_args()
    if args.selftest:
        import selftest_clockcheck
        return selftest_clockcheck.main()
    if not (args.scenario and args.sample and args.layer_dir and args.fault_layer_dir):
        ap.error("--scenario, --sample, --layer-dir and --fault-layer-dir are required")
    apply_seed(args.scenario, args.seed)
    for kv in args.env:
        name, _, value = kv.partition("=")
        SCENARIOS[args.scenario]["env"][name] = value
    tmp = tempfile.mkdtemp(prefix="gz-clock-")
    failures = [] if args.no_self_check else self_check(args, tmp)
    print("%s: %s" % (args.scenario, env_line(args.scenario)))
    res, more = run_scenario(args, args.scenario, tmp)
    keep = args.keep or args.record
    if not failures and res.get("only_misplaced") and SCENARIOS[args.scenario].get("program") == "load":
        # The known failure under load (docs/PERFORMANCE.md, "Zones in
        # doubt"): a host stall hid the bounds near a step, one bound made
        # the wrong side look likelier, and a few zones are a whole step
        # off, unmarked; about 1 loaded run in 50. It fails the test only
        # when it comes again in a second run of the same steps: a model
        # that misplaces steps often, or is wrong in any other way, fails.
        for f in more:
            print("FIRST RUN:", f)
        print("%s: the first run put zones a whole step off, unmarked; once more"
              % args.scenario)
        first = os.path.join(tmp, "first-run")
        os.mkdir(first)
        for f in os.listdir(tmp):
            if f.startswith(args.scenario + "."):
                shutil.move(os.path.join(tmp, f), first)
        res, more = run_scenario(args, args.scenario, tmp)
        keep = True  # both runs' files, for replay.py
    failures += more
    res["ok"] = not failures
    print(TABLE_HEAD)
    print(row(res))
    return conclude(failures, tmp, keep)


def conclude(failures, tmp, keep=False):
    """Prints the failures, keeps tmp where any (or keep) and says where;
    the exit status."""
    for f in failures:
        print("FAIL:", f)
    if failures or keep:
        print("files kept in", tmp)
    else:
        shutil.rmtree(tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
