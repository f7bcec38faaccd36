#!/usr/bin/env python3
"""Host compatibility: real programs of each class that gpuzones is loaded
into, each run without gpuzones and with it, compared.

    check_host.py --layer-dir DIR [--fault-layer-dir DIR] SCENARIO -- PROGRAM [ARGS]

Scenarios (what is compared; "same" means equal to the run without
gpuzones):

  layers:LIST     PROGRAM (gz-host-probe) with the layers of LIST (a
                  ':'-separated list, first nearest the program; "gpuzones"
                  stands for our layer and is left out of the run without
                  it) enabled by the program itself. Same exit status, same
                  stdout (the probe's VkResult, the work done, what the
                  validation layer reported), every layer of LIST in the
                  loader's device chain, the validation layer active where
                  listed, zones in a complete trace. Environment for the
                  layers of LIST: --env NAME=VALUE.
  signal:SETUP    PROGRAM (gz-host-signals SETUP) sent SIGINT, and in a
                  second pair of runs SIGTERM, once it submits. Same exit
                  status; same stdout, except that where SETUP leaves the
                  action at its default, what sigaction() reads back after
                  the instance is gpuzones' handler; a complete trace and a
                  summary whenever the program ends through its default
                  action or exit().
  plugin          PROGRAM (gz-host-plugin-host PLUGIN) with the plugin built
                  with gpuzones' API, against the same host with
                  --plain-plugin (the plugin built without), sent SIGINT and
                  SIGTERM after the plugin was unloaded: same exit status,
                  same output, a complete trace with the plugin's zones.
  exit-race       PROGRAM (gz-host-exit-race) --runs times each way: every
                  status is exit 3 or death by SIGTERM, as without
                  gpuzones, and every trace is complete.
  go-signal       PROGRAM (the cgo program) "loop", sent SIGINT and SIGTERM
                  while busy in Go code, --runs times each way: every
                  status the same as every run without gpuzones (death by
                  the signal), and never Go's abort for a handler off its
                  signal stack.
  go-exit         PROGRAM "frames N": a normal exit through Go's, which
                  runs no atexit: same status and stdout, a complete,
                  loadable trace with every frame's zones, and the summary.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

LAYER = "VK_LAYER_GPUZONES_timing"
VALIDATION = "VK_LAYER_KHRONOS_validation"
SCRUB = ("VK_INSTANCE_LAYERS", "VK_LAYER_PATH", "VK_ADD_LAYER_PATH", "VK_LOADER_LAYERS_ENABLE",
         "VK_LOADER_LAYERS_DISABLE", "VK_LOADER_DEBUG", "VK_LAYER_ENABLES", "VK_LAYER_DISABLES",
         "GZ_HOST_LAYERS", "GPUZONES_OUTPUT", "GPUZONES_TRACY", "GPUZONES_ENABLE",
         "GPUZONES_DISABLE", "NODEVICE_SELECT")
# Death by these, as subprocess reports it and as a shell would.
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}

failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def default_signals():
    # Whoever runs the tests may ignore some signals (a background job
    # ignores SIGINT): the program must start with the default actions.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def status_text(rc):
    return "death by %s" % signal.Signals(-rc).name if rc < 0 else "exit %d" % rc


class Run:
    def __init__(self, args, tmp, name, with_gpuzones, layers=(), extra_env=()):
        self.trace = os.path.join(tmp, name + ".json")
        env = {k: v for k, v in os.environ.items() if k not in SCRUB}
        env.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
        paths = []
        names = []
        for l in layers:
            if l == "gpuzones":
                if not with_gpuzones:
                    continue
                names.append(LAYER)
            else:
                names.append(l)
        if with_gpuzones:
            paths.append(os.path.abspath(args.layer_dir))
            if not layers:
                env["VK_INSTANCE_LAYERS"] = LAYER
            env["GPUZONES_OUTPUT"] = self.trace
        if args.fault_layer_dir:
            paths.append(os.path.abspath(args.fault_layer_dir))
        if paths:
            env["VK_ADD_LAYER_PATH"] = os.pathsep.join(paths)
        if names:
            env["GZ_HOST_LAYERS"] = ":".join(names)
        env["VK_LOADER_DEBUG"] = "layer"
        env.update(extra_env)
        self.env = env
        self.with_gpuzones = with_gpuzones


def run_to_end(cmd, r, timeout=120):
    try:
        p = subprocess.run(cmd, env=r.env, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=default_signals)
    except subprocess.TimeoutExpired:
        fail("%s did not finish within %d s" % (" ".join(cmd), timeout))
        return None
    return p


def run_until_ready(cmd, r, sig, after_s=0.5, timeout=60):
    """Starts cmd, waits for its "ready" line, sends sig after_s later;
    returns (status, stdout, stderr)."""
    p = subprocess.Popen(cmd, env=r.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=default_signals)
    out = []
    deadline = time.monotonic() + timeout
    for line in p.stdout:
        out.append(line)
        if line.strip() == "ready":
            break
        if time.monotonic() > deadline:
            break
    time.sleep(after_s)
    if p.poll() is None:
        p.send_signal(sig)
    try:
        rest, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, err = p.communicate()
        fail("%s did not end within %d s of %s" % (os.path.basename(cmd[0]), timeout, sig.name))
    return p.returncode, "".join(out) + rest, err


def load_trace(path):
    """The trace's events when it is a complete, loadable JSON array, else
    None (with the reason printed)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        print("  trace: %s" % e)
        return None
    try:
        events = json.loads(text)
    except ValueError as e:
        print("  trace %s is not loadable JSON (%s); it ends with %r" % (path, e, text[-120:]))
        return None
    if not any(e.get("name") == "gpuzones_totals" for e in events):
        print("  trace %s has no totals event" % path)
        return None
    return events


def zones(events, name):
    return [e for e in events if e.get("ph") == "X" and e.get("cat") == "gpu" and e.get("name") == name]


def loader_chains(stderr):
    """{"vkCreateInstance": [...], "vkCreateDevice": [...]}: the layers of
    the last chain of each kind the loader printed (VK_LOADER_DEBUG=layer),
    from the application down."""
    chains, cur = {}, None
    for line in stderr.splitlines():
        m = re.search(r"(vkCreateInstance|vkCreateDevice) layer callstack setup to:", line)
        if m:
            cur = chains[m.group(1)] = []
            continue
        if cur is None:
            continue
        body = line[len("LAYER:"):].strip() if line.startswith("LAYER:") else None
        if body is None or body == "<Device>" or body.startswith(("<Physical Device", "<Drivers>")):
            cur = None
        elif re.fullmatch(r"VK_LAYER_\w+", body):
            cur.append(body)
    return chains


def check_summary(stderr, what):
    if "gpuzones: trace written to" not in stderr:
        fail("%s: no summary (no 'trace written to' line): %s" % (what, stderr[-1500:]))


def scenario_layers(args, prog, tmp):
    layers = args.scenario.split(":", 1)[1].split(":")
    extra = dict(e.split("=", 1) for e in args.env)
    plain = Run(args, tmp, "plain", False, layers, extra)
    ours = Run(args, tmp, "ours", True, layers, extra)
    a = run_to_end(prog, plain)
    b = run_to_end(prog, ours)
    if not a or not b:
        return
    print("without gpuzones: %s\n%s" % (status_text(a.returncode), a.stdout))
    print("with gpuzones:    %s\n%s" % (status_text(b.returncode), b.stdout))
    if a.returncode != 0:
        fail("the program fails without gpuzones (%s): %s" % (status_text(a.returncode), a.stderr[-1500:]))
    if b.returncode != a.returncode:
        fail("exit status %s with gpuzones, %s without: %s"
             % (status_text(b.returncode), status_text(a.returncode), b.stderr[-3000:]))
    if b.stdout != a.stdout:
        fail("the program's output differs with gpuzones")
    chains = loader_chains(b.stderr)
    chain = chains.get("vkCreateDevice", [])
    want = [LAYER if l == "gpuzones" else l for l in layers]
    order = [l for l in chain if l in want]
    print("device chain: %s; instance chain: %s" % (chain, chains.get("vkCreateInstance")))
    if order != want:
        fail("the loader's device chain is %s, wanted %s in that order" % (chain, want))
    # Mesa's device-select layer is implicit: on in every run (instance
    # functions only, so in the instance chain).
    if "VK_LAYER_MESA_device_select" not in chains.get("vkCreateInstance", []):
        fail("Mesa's device-select layer is not in the instance chain")
    if VALIDATION in want and "validation layer: active" not in b.stdout:
        fail("the validation layer did not say it ran")
    for line in b.stderr.splitlines():
        if line.startswith("gpuzones:") and "refused the extensions" in line:
            fail("gpuzones blamed its own additions: " + line)
    events = load_trace(ours.trace)
    if events is None:
        fail("no complete trace")
    else:
        n = len(zones(events, "host work"))
        print("trace: %d 'host work' label zones" % n)
        if n < 3:
            fail("the trace has %d 'host work' zones, expected 3" % n)
    check_summary(b.stderr, "with gpuzones")


def scenario_signal(args, prog, tmp):
    setup = args.scenario.split(":", 1)[1]
    default_action = setup in ("default", "siginfo-default")
    for name, sig in SIGNALS.items():
        plain = Run(args, tmp, "plain-" + name, False)
        ours = Run(args, tmp, "ours-" + name, True)
        ra, oa, ea = run_until_ready(prog, plain, sig)
        rb, ob, eb = run_until_ready(prog, ours, sig)
        print("%s: %s without gpuzones, %s with" % (name, status_text(ra), status_text(rb)))
        print("without:\n%swith:\n%s" % (oa, ob))
        if setup != "siginfo-ignore" and ra == 0:
            fail("%s: without gpuzones the signal did not reach the program's action (is the "
                 "program run under something that takes over its signals?)" % name)
        if ra != rb:
            fail("%s: exit status %s with gpuzones, %s without: %s"
                 % (name, status_text(rb), status_text(ra), eb[-2000:]))
        if default_action:
            # Our handler is in place after the instance: only what the
            # program set, and what it did, must be the same.
            keep = lambda out: [l for l in out.splitlines() if not l.startswith("after ")]
            if keep(oa) != keep(ob):
                fail("%s: the program's output differs with gpuzones" % name)
            theirs = [l for l in ob.splitlines() if l.startswith("after ")]
            if not all(": other flags" in l and "SIGINFO" in l for l in theirs):
                fail("%s: gpuzones' handler is not in place for a default action: %s" % (name, theirs))
        elif oa != ob:
            fail("%s: the program's output (its dispositions as sigaction() reads them, what its "
                 "handler saw) differs with gpuzones" % name)
        if "not on signal stack" in eb or "SIGSEGV" in eb:
            fail("%s: %s" % (name, eb[-1500:]))
        ends_cleanly = rb in (0, 3) or (default_action and rb == -sig)
        if ends_cleanly:
            events = load_trace(ours.trace)
            if events is None:
                fail("%s: the trace is not complete although the program ended by %s"
                     % (name, status_text(rb)))
            elif not zones(events, "host work"):
                fail("%s: no 'host work' zones in the trace" % name)
            check_summary(eb, name)


def scenario_plugin(args, prog, tmp):
    for name, sig in SIGNALS.items():
        plain = Run(args, tmp, "plain-" + name, False)
        ours = Run(args, tmp, "ours-" + name, True)
        # The plugin uses the API itself: no layer.
        ours.env.pop("VK_INSTANCE_LAYERS", None)
        ra, oa, ea = run_until_ready(prog[:-1] + [args.plain_plugin], plain, sig)
        rb, ob, eb = run_until_ready(prog, ours, sig)
        print("%s: %s with the plugin built without gpuzones, %s with" %
              (name, status_text(ra), status_text(rb)))
        if ra != -sig:
            fail("%s: without gpuzones the host ended by %s: %s" % (name, status_text(ra), ea[-1000:]))
        if rb != ra:
            fail("%s: %s with gpuzones, %s without: %s" % (name, status_text(rb), status_text(ra), eb[-2000:]))
        if oa != ob:
            fail("%s: the host's output differs:\n%s\n%s" % (name, oa, ob))
        events = load_trace(ours.trace)
        if events is None:
            fail("%s: the trace is not complete" % name)
        else:
            n = len(zones(events, "plugin frame"))
            print("%s: %d 'plugin frame' zones" % (name, n))
            if n != 5:
                fail("%s: %d 'plugin frame' zones in the trace, expected 5" % (name, n))


def scenario_exit_race(args, prog, tmp):
    allowed = {3, -signal.SIGTERM}
    seen = {"without": set(), "with": set()}
    for i in range(args.runs):
        plain = Run(args, tmp, "plain-%d" % i, False)
        ours = Run(args, tmp, "ours-%d" % i, True)
        a = run_to_end(prog, plain, timeout=60)
        b = run_to_end(prog, ours, timeout=60)
        if not a or not b:
            return
        seen["without"].add(a.returncode)
        seen["with"].add(b.returncode)
        for who, p in (("without", a), ("with", b)):
            if p.returncode not in allowed:
                fail("run %d %s gpuzones: %s, not exit 3 or death by SIGTERM: %s"
                     % (i, who, status_text(p.returncode), p.stderr[-1500:]))
        if load_trace(ours.trace) is None:
            fail("run %d (%s): the trace is not complete" % (i, status_text(b.returncode)))
    for who, s in seen.items():
        print("%s gpuzones: %s" % (who, ", ".join(sorted(status_text(r) for r in s))))


def scenario_go_signal(args, prog, tmp):
    for name, sig in SIGNALS.items():
        statuses = {"without": [], "with": []}
        for i in range(args.runs):
            for who, with_gz in (("without", False), ("with", True)):
                r = Run(args, tmp, "%s-%s-%d" % (who, name, i), with_gz)
                rc, out, err = run_until_ready(prog + ["loop"], r, sig, after_s=0.3)
                statuses[who].append(rc)
                if "not on signal stack" in err or "SA_ONSTACK" in err or "fatal error" in err:
                    fail("%s run %d %s gpuzones: Go aborted: %s" % (name, i, who, err[-1500:]))
        print("%s: without gpuzones %s; with %s" % (
            name, sorted(set(status_text(s) for s in statuses["without"])),
            sorted(set(status_text(s) for s in statuses["with"]))))
        if set(statuses["without"]) != {-sig}:
            fail("%s: without gpuzones the Go program ended %s, not by the signal"
                 % (name, sorted(set(statuses["without"]))))
        bad = [s for s in statuses["with"] if s != -sig]
        if bad:
            fail("%s: %d of %d runs with gpuzones did not end as without it: %s"
                 % (name, len(bad), args.runs, sorted(set(status_text(s) for s in bad))))


def scenario_go_exit(args, prog, tmp):
    frames = 20
    plain = Run(args, tmp, "plain", False)
    ours = Run(args, tmp, "ours", True)
    a = run_to_end(prog + ["frames", str(frames)], plain)
    b = run_to_end(prog + ["frames", str(frames)], ours)
    if not a or not b:
        return
    print("without gpuzones: %s: %s" % (status_text(a.returncode), a.stdout.strip()))
    print("with gpuzones:    %s: %s" % (status_text(b.returncode), b.stdout.strip()))
    if a.returncode != 0 or b.returncode != 0:
        fail("exit status %s with gpuzones, %s without: %s"
             % (status_text(b.returncode), status_text(a.returncode), b.stderr[-2000:]))
    if a.stdout != b.stdout:
        fail("the program's output differs with gpuzones")
    events = load_trace(ours.trace)
    if events is None:
        fail("the trace is not complete after Go's exit")
    else:
        n = len(zones(events, "go frame"))
        print("trace: %d 'go frame' label zones" % n)
        if n != frames:
            fail("%d 'go frame' zones in the trace, expected %d" % (n, frames))
    check_summary(b.stderr, "with gpuzones")
    if "go frame" not in b.stderr:
        fail("the summary has no 'go frame' row")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layer-dir", required=True)
    ap.add_argument("--fault-layer-dir")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--plain-plugin", help="plugin: the plugin built without gpuzones")
    ap.add_argument("scenario")
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    prog = args.program[1:] if args.program[:1] == ["--"] else args.program
    kind = args.scenario.split(":", 1)[0]
    fn = {"layers": scenario_layers, "signal": scenario_signal, "plugin": scenario_plugin,
          "exit-race": scenario_exit_race, "go-signal": scenario_go_signal,
          "go-exit": scenario_go_exit}.get(kind)
    if not fn:
        ap.error("unknown scenario " + args.scenario)
    with tempfile.TemporaryDirectory(prefix="gz-host-") as tmp:
        fn(args, prog, tmp)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
