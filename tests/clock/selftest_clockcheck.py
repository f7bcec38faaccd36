#!/usr/bin/env python3
"""The clock tests' analysis on made-up traces and fault logs: it must pass a
right trace and catch each way a trace can be wrong.  No Vulkan needed.

    selftest_clockcheck.py      (or clockcheck.py --selftest)
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clockcheck  # noqa: E402
from clockcheck import gztrace  # noqa: E402

GPU = 1 << 30
T0 = 5_000_000_000_000  # real ns at the first zone


def trace_text(zones):
    """zones: (tid, level, ts_ns, dur_ns, [raw_begin, raw_end][, doubt_us])"""
    lines = ["["]
    for tid, level, ts, dur, ticks, *doubt in zones:
        args = {"level": level, "gpu_ticks": ticks}
        if doubt and doubt[0]:
            args["clock_doubt_us"] = doubt[0]
        lines.append(json.dumps({"ph": "X", "pid": 1, "tid": tid, "cat": "gpu", "name": level,
                                 "ts": "%TS%", "dur": "%DUR%", "args": args})
                     .replace('"%TS%"', "%.3f" % (ts / 1000.0))
                     .replace('"%DUR%"', "%.3f" % (dur / 1000.0)) + ",")
    lines.append(json.dumps({"ph": "M", "name": "gpuzones_totals", "pid": 1, "args": {}}))
    lines.append("]")
    return "\n".join(lines) + "\n"


def make(counter, n=40, step=100_000_000, length=400_000, error=lambda t: 0, dur_error=0,
         doubt=lambda t: 0):
    """n zones on one track, one every step ns; counter(real) gives the raw
    value; error(real) what the 'layer' got wrong, doubt(real) what it said
    it may have got wrong (us).  Returns (trace, pairs)."""
    zones, pairs = [], []
    for i in range(n):
        b, e = T0 + i * step, T0 + i * step + length
        rb, re_ = counter(b), counter(e)
        pairs += [(rb, b), (re_, e)]
        ts = b + error(b)
        zones.append((GPU, "submit", ts, e + error(e) - ts + dur_error, [rb, re_], doubt(b)))
    return gztrace.loads(trace_text(zones)), pairs


def scenario(check="all", limit_us=50, period="1", **extra):
    env = {"GZFAULT_PERIOD_NS": period}
    env.update(extra.pop("env", {}))
    return dict(env=env, run_s=1, limit_us=limit_us, check=check, **extra)


def analyse(sc, trace, pairs, banner=None):
    # the analysis prints its per-group lines: keep the self-test quiet
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        res, f = clockcheck.analyse_scenario("t", sc, trace, pairs, [], banner)
        return clockcheck.row(res), f
    finally:
        sys.stdout.close()
        sys.stdout = stdout


def analyse_result(sc, trace, pairs, banner=None):
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        return clockcheck.analyse_scenario("t", sc, trace, pairs, [], banner)[0]
    finally:
        sys.stdout.close()
        sys.stdout = stdout


def main():
    failures = []

    def expect(cond, what):
        print("ok  " if cond else "FAIL", what)
        if not cond:
            failures.append(what)

    ident = lambda real: real  # noqa: E731

    # A right trace: no failure, error 0.
    trace, pairs = make(ident)
    row, f = analyse(scenario(), trace, pairs)
    expect(not f and "| 0.000 |" in row, "exact trace passes with error 0: %s %s" % (row, f))

    # 60 us off: over a 50 us bound, and the row shows 60.
    trace, pairs = make(ident, error=lambda t: 60_000)
    row, f = analyse(scenario(), trace, pairs)
    expect(f and "| 60.000 |" in row, "60 us off fails: %s" % row)

    # 40 us off at the end only (a wrong duration) is still seen.
    trace, pairs = make(ident, dur_error=-40_000)
    row, f = analyse(scenario(), trace, pairs)
    expect(not f and "| 40.000 |" in row, "end error counted: %s %s" % (row, f))

    # No gpu_ticks: a clear failure naming GPUZONES_RAW_TICKS.
    text = trace_text([(GPU, "submit", T0, 1000, None)] * 12)
    row, f = analyse(scenario(), gztrace.loads(text), [(T0, T0)])
    expect(any("GPUZONES_RAW_TICKS" in x for x in f), "missing gpu_ticks is reported: %s" % f[:1])

    # A raw value the log does not know: the harness is broken, say so.
    trace, pairs = make(ident)
    row, f = analyse(scenario(), trace, pairs[2:])
    expect(any("not in the fault log" in x for x in f), "unknown raw value is reported")

    # Negative durations.
    trace, pairs = make(ident, dur_error=-500_000)
    row, f = analyse(scenario(), trace, pairs)
    expect(any("negative duration" in x for x in f), "negative duration is reported")

    # A 36-bit counter at 0.0005 ns wrapping every 34 ms: wraps counted from
    # the log, the uncorrected error is big, an exact trace passes.
    p = clockcheck.f32(0.0005)
    mask = (1 << 36) - 1
    start = (1 << 36) - 2_000_000_000
    wrap = lambda real: (start + round((real - T0 + 1_000_000) / p)) & mask  # noqa: E731
    trace, pairs = make(wrap, n=100, step=10_000_000)
    sc = scenario(period="0.0005", min_wraps=3, order=True, env={"GZFAULT_VALID_BITS": "36"})
    row, f = analyse(sc, trace, pairs)
    an = clockcheck.Analysis(trace.gpu_zones(), pairs, 0.0005)
    expect(not f and an.wraps() >= 25, "wrapping counter, exact trace: %s wraps, %s %s"
           % (an.wraps(), row, f))
    expect(an.worst_naive(an.zones) > 1_000_000, "no unwrap: uncorrected error > 1 ms (%d ns)"
           % an.worst_naive(an.zones))

    # The same trace with one zone a wrap period (34.4 ms) early: error and
    # order both caught.
    bad = lambda t: -34_359_738 if t == T0 + 50 * 10_000_000 else 0  # noqa: E731
    trace, pairs = make(wrap, n=100, step=10_000_000, error=bad)
    row, f = analyse(sc, trace, pairs)
    expect(any("begin before the zone before them" in x for x in f)
           and any("worst error" in x for x in f), "zone a wrap early: order and error fail")

    # Too few wraps in the log.
    trace, pairs = make(ident)
    row, f = analyse(scenario(min_wraps=3, env={"GZFAULT_VALID_BITS": "64"}), trace, pairs)
    expect(any("wrapping 0 times" in x for x in f), "no wrap seen is reported")

    # Drift: the uncorrected error grows as rate * time; only the last
    # second is checked.
    drift = lambda real: real + (real - T0) // 1000  # noqa: E731  1000 ppm
    trace, pairs = make(drift, n=61)  # 6 s
    row, f = analyse(scenario(check="last-second"), trace, pairs)
    expect(not f and "| 6000.400 |" in row and "| 10 |" in row,
           "drift: last second only, uncorrected 6 ms: %s %s" % (row, f))

    # Jump: found in the log; zones between it and +1 s are not checked,
    # those before and after are.
    jump_at = T0 + 3_000_000_000 + 50_000_000
    step = lambda real: real + (2_000_000 if real > jump_at else 0)  # noqa: E731
    late = lambda t: 900_000 if jump_at < t < jump_at + 1_000_000_000 else 0  # noqa: E731
    trace, pairs = make(step, n=61, error=late)
    an = clockcheck.Analysis(trace.gpu_zones(), pairs, 1.0)
    expect(an.jump_time() is not None and abs(an.jump_time() - jump_at) < 100_000_000,
           "jump time found: %s" % an.jump_time())
    row, f = analyse(scenario(check="jump"), trace, pairs)
    expect(not f and "| 2000.000 |" in row, "jump: settle second not checked: %s %s" % (row, f))
    late2 = lambda t: 90_000 if t > jump_at + 1_500_000_000 else 0  # noqa: E731
    trace, pairs = make(step, n=61, error=late2)
    row, f = analyse(scenario(check="jump"), trace, pairs)
    expect(any("after the jump" in x for x in f), "jump: error after the settle second fails")

    # Steps that the layer could not place: a zone a step off passes only
    # where it says so (args.clock_doubt_us) and by as much, a few zones at
    # most, and never without a step. 200 zones 10 ms apart, a 2 ms step
    # 1.005 s in (ms after t0 = T0).
    steps_env = {"GZFAULT_JUMPS": "1005:2000000"}
    banner = dict(t0=T0, start=T0, bits=64, period=1.0)
    at = T0 + 1_005_000_000
    stepped = lambda real: real + (2_000_000 if real > at else 0)  # noqa: E731
    one_off = lambda t: -2_000_000 if t == T0 + 101 * 10_000_000 else 0  # noqa: E731
    sc = scenario(check="steps", env=steps_env)
    trace, pairs = make(stepped, n=200, step=10_000_000, error=one_off,
                        doubt=lambda t: 2000 if t == T0 + 101 * 10_000_000 else 0)
    row, f = analyse(sc, trace, pairs, banner)
    expect(not f and "(1 in doubt, up to 2000 us)" in row, "zone in doubt by a step passes and "
           "is shown: %s %s" % (row, f))
    trace, pairs = make(stepped, n=200, step=10_000_000, error=one_off)
    row, f = analyse(sc, trace, pairs, banner)
    expect(any("worst error 2000.000 us" in x for x in f), "the same zone not in doubt fails")
    res = analyse_result(sc, trace, pairs, banner)
    expect(res["only_misplaced"], "a zone a whole step off, unmarked, is the failure a loaded "
           "sweep runs again for")
    trace, pairs = make(stepped, n=200, step=10_000_000,
                        error=lambda t: 60_000 if t == T0 + 101 * 10_000_000 else 0)
    res = analyse_result(sc, trace, pairs, banner)
    expect(not res["ok"] and not res["only_misplaced"], "a zone 60 us off is not")
    trace, pairs = make(stepped, n=200, step=10_000_000,
                        error=lambda t: (-2_000_000
                                         if T0 + 101 * 10_000_000 <= t < T0 + 150 * 10_000_000
                                         else 0))
    res = analyse_result(sc, trace, pairs, banner)
    expect(not res["ok"] and not res["only_misplaced"], "nor are 49 zones a step off")
    trace, pairs = make(stepped, n=200, step=10_000_000, error=one_off,
                        doubt=lambda t: 1000 if t == T0 + 101 * 10_000_000 else 0)
    row, f = analyse(sc, trace, pairs, banner)
    expect(any("beyond its doubt" in x for x in f), "off by more than its doubt fails")
    trace, pairs = make(stepped, n=200, step=10_000_000, doubt=lambda t: 2000)
    row, f = analyse(sc, trace, pairs, banner)
    expect(any("more than 1 %" in x for x in f), "every zone in doubt fails")
    trace, pairs = make(ident, n=200, step=10_000_000,
                        doubt=lambda t: 2000 if t == T0 + 101 * 10_000_000 else 0)
    row, f = analyse(scenario(), trace, pairs)
    expect(any("has no step" in x for x in f), "doubt without a step fails")

    # The summary tells of the zones in doubt, as many as the trace marks.
    trace, pairs = make(ident, n=20, doubt=lambda t: 2000 if t < T0 + 300_000_000 else 0)
    said = ('gpuzones: track "VkQueue 0.0 llvmpipe": 20 zones, 0 dropped; clock: bounds; '
            "3 zones may be off by up to 2.0 ms (a step in the GPU clock fell where ...)\n")
    quiet = open(os.devnull, "w")
    stdout, sys.stdout = sys.stdout, quiet
    try:
        told = clockcheck.doubt_errors(trace, said)
        untold = clockcheck.doubt_errors(trace, said.replace("; 3 zones may", "; 2 zones may"))
        one = clockcheck.doubt_errors(make(ident, n=20, doubt=lambda t: 2000 if t == T0 else 0)[0],
                                      said.replace("; 3 zones may", "; 1 zone may"))
        none = clockcheck.doubt_errors(make(ident, n=20)[0], "")
    finally:
        sys.stdout = stdout
        quiet.close()
    expect(not told and untold and not none and not one,
           "summary's count of zones in doubt checked: %s %s %s %s" % (told, untold, none, one))

    # The fault formula: values made with it match, values 10 ticks off or
    # a banner with another start do not.
    import math
    env = {"GZFAULT_DRIFT_PPM": "50", "GZFAULT_WOBBLE_PPM": "200", "GZFAULT_WOBBLE_PERIOD_S": "4",
           "GZFAULT_JUMP_AT_MS": "3000", "GZFAULT_JUMP_NS": "-2000000"}
    t0 = T0 - 50_000_000

    def counter(real, off=0):
        t = real - t0
        g = t * (1 + 50e-6) + 200e-6 * 4e9 / (2 * math.pi) * (1 - math.cos(2 * math.pi * t / 4e9))
        return round(t0) + round(g + (-2_000_000 if t > 3e9 else 0)) + off
    reals = [T0 + k * 37_000_017 for k in range(200)]
    banner = dict(t0=t0, start=t0, bits=64, period=1.0)
    quiet = open(os.devnull, "w")
    stdout, sys.stdout = sys.stdout, quiet
    try:
        good = clockcheck.fault_model_errors([(counter(r), r) for r in reals], env, banner)
        off = clockcheck.fault_model_errors([(counter(r, 10), r) for r in reals], env, banner)
        moved = clockcheck.fault_model_errors([(counter(r), r) for r in reals], env,
                                              dict(banner, start=t0 + 5))
        none = clockcheck.fault_model_errors([(counter(r), r) for r in reals], env, None)
    finally:
        sys.stdout = stdout
        quiet.close()
    expect(not good, "fault formula: the counter's own values match: %s" % good[:1])
    expect(bool(off) and bool(moved), "fault formula: 10 ticks off, or another start, fail")
    expect(none, "fault formula: no banner from the layer fails")

    # The layer chain check.
    good = ("LAYER: vkCreateInstance layer callstack setup to:\nLAYER:   <Application>\n"
            "LAYER:   <Loader>\nLAYER:   VK_LAYER_MESA_device_select\n"
            "LAYER:   VK_LAYER_GPUZONES_timing\nLAYER:   VK_LAYER_GPUZONES_clockfault\n"
            "LAYER:   <Drivers>\n\nLAYER: vkCreateDevice layer callstack setup to:\n"
            "LAYER:   <Application>\nLAYER:   VK_LAYER_GPUZONES_timing\n"
            "LAYER:   VK_LAYER_GPUZONES_clockfault\nLAYER:   <Device>\n")
    expect(not clockcheck.chain_errors(good), "right chain accepted")
    swapped = good.replace("timing\nLAYER:   VK_LAYER_GPUZONES_clockfault",
                           "clockfault\nLAYER:   VK_LAYER_GPUZONES_timing")
    expect(len(clockcheck.chain_errors(swapped)) == 2, "swapped chain refused")
    expect(clockcheck.chain_errors(""), "no loader output refused")

    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
