#!/usr/bin/env python3
"""Runs a Vulkan test program under the gpuzones layer and checks its trace.

Case mode (a gz-test-vk case, compared with the program's truth file):
    run_case.py --program gz-test-vk --case NAME --layer-dir DIR
                [--validation above|below] [--no-layer] [--slack-us 50]
                [--level passes|commands]

Sample mode (the compute sample, no truth file):
    run_case.py --sample gz-sample-vk-compute --sample-test not-enabled|enabled|kill
                --layer-dir DIR
    run_case.py --sample gz-sample-vk-compute --sample-test implicit
                --implicit-manifest FILE

Exit status 0 when every check passed, 1 when a check failed, 2 when the
program could not be run, 77 (meson's "skipped") when the program says the
device lacks what the case needs.  Python 3 standard library only.
"""

import argparse
import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gztrace  # noqa: E402

LAYER = "VK_LAYER_GPUZONES_timing"
VALIDATION = "VK_LAYER_KHRONOS_validation"
FAULT_LAYER = "VK_LAYER_GPUZONES_clockfault"
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

# How far a GPU zone may lie outside the host-time window of its submission
# (after the host's CLOCK_MONOTONIC read just before vkQueueSubmit*, before
# the one just after the wait that saw it complete).  On lavapipe the device
# clock *is* CLOCK_MONOTONIC, so 0 would be right there; 50 us leaves room
# for a calibrated device clock whose pairs have some maxDeviation.
DEFAULT_GPU_SLACK_NS = 50_000

# CPU zones come from the same clock as the truth; only rounding to whole
# nanoseconds can separate them.
CPU_SLACK_NS = 1

# The flow end sits at the start of the GPU submission zone.
FLOW_TS_TOLERANCE_NS = 1

# Known workload: label zone duration vs CPU-measured submit-to-done time.
WORKLOAD_TOLERANCE = 0.25

RUN_TIMEOUT_S = 60

# gz-test-vk's exit status for "the device lacks what this case needs", and
# meson's for a skipped test.
SKIP_STATUS = 77

# Environment that would change which layers load; the runner sets its own.
SCRUB_ENV = ("GZ_TEST_APP_LAYERS", "VK_INSTANCE_LAYERS", "VK_LAYER_PATH", "VK_ADD_LAYER_PATH", "VK_LOADER_LAYERS_ENABLE",
             "VK_LOADER_LAYERS_DISABLE", "VK_LOADER_DEBUG", "VK_LAYER_ENABLES", "VK_LAYER_DISABLES",
             "VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES", "VK_IMPLICIT_LAYER_PATH")

# A loader warning every run that sets VK_INSTANCE_LAYERS gets; it is about
# the environment, not the program.
BENIGN_MESSAGES = (re.compile(r"env var '\w+' defined and adding layers"),)


class Checks:
    """Collects failures instead of stopping at the first."""

    def __init__(self):
        self.errors = []
        self.notes = []
        self.counts = {}

    def fail(self, msg):
        self.errors.append(msg)

    def note(self, msg):
        self.notes.append(msg)

    def expect(self, cond, msg):
        if not cond:
            self.fail(msg)
        return cond

    def count(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n


def us(ns):
    return "%.3f us" % (ns / 1000.0)


# ---- running ------------------------------------------------------------------


def base_env(args, tmp):
    env = {k: v for k, v in os.environ.items() if k not in SCRUB_ENV and not k.startswith("GPUZONES_")}
    env["VK_ICD_FILENAMES"] = args.icd
    env.setdefault("XDG_RUNTIME_DIR", tmp)
    return env


def layer_env(args, tmp, trace, enable_layer=True):
    """Environment for a run: our layer (explicit manifest on
    VK_ADD_LAYER_PATH), optionally the validation layer above or below it,
    and loader layer logging so the chain can be checked.

    Without validation our layer is enabled the way users do it,
    VK_INSTANCE_LAYERS.  With validation the program enables the layers
    itself (GZ_TEST_APP_LAYERS, see vkt_vulkan.c), because measured here the
    loader (1.3.239) ignores the order VK_INSTANCE_LAYERS lists them in and
    always chains our layer above validation; ppEnabledLayerNames keeps its
    order, first entry nearest the application."""
    env = base_env(args, tmp)
    layers = []
    if enable_layer:
        env["VK_ADD_LAYER_PATH"] = os.path.abspath(args.layer_dir)
        layers.append(LAYER)
        if args.readback:
            env["GPUZONES_VK_READBACK"] = args.readback
        if args.level:
            env["GPUZONES_LEVEL"] = args.level
    if args.fault:
        # The fault layer sits right below ours, so we see the fault and
        # validation (below it) still sees everything the driver gets.
        env["VK_ADD_LAYER_PATH"] = os.pathsep.join(
            p for p in (env.get("VK_ADD_LAYER_PATH"), os.path.abspath(args.fault_layer_dir)) if p)
        layers.append(FAULT_LAYER)
        for f in args.fault:
            name, _, value = f.partition("=")
            env[name] = value
    if args.validation:
        # "above": validation between the app and our layer (it checks the
        # app's calls as the app made them); "below": between our layer and
        # the driver (it also checks the layer's own commands); "between":
        # below ours and above the fault layer (it sees the device the fault
        # layer plays, e.g. its queue families).
        if args.validation == "above":
            layers.insert(0, VALIDATION)
        elif args.validation == "between":
            layers.insert(layers.index(LAYER) + 1 if LAYER in layers else 0, VALIDATION)
        else:
            layers.append(VALIDATION)
        env["GZ_TEST_APP_LAYERS"] = ":".join(layers)
        # Synchronization validation as well (lavapipe supports it): our
        # layer adds commands and submissions, and their hazards are ours.
        # Not in sanitized runs: the validation layer (not instrumented)
        # leaves its synchronization state allocated at exit, and
        # LeakSanitizer counts that against the test.
        if "ASAN_OPTIONS" not in os.environ:
            env["VK_LAYER_ENABLES"] = "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
    elif args.fault:
        # The order matters: the program enables the layers itself.
        env["GZ_TEST_APP_LAYERS"] = ":".join(layers)
    elif layers:
        env["VK_INSTANCE_LAYERS"] = ":".join(layers)
    if layers:
        env["VK_LOADER_DEBUG"] = "layer"
    env["GPUZONES_OUTPUT"] = trace
    return env


def run(cmd, env, cwd, timeout=RUN_TIMEOUT_S):
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        print("FAIL: %s did not finish within %d s" % (" ".join(cmd), timeout))
        sys.exit(1)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def tail(text, n=40):
    lines = [l for l in text.splitlines() if not l.startswith("LAYER:")]
    return "\n".join(lines[-n:])


# ---- layer loading -------------------------------------------------------------


def check_layer_order(ck, stderr, want_layer, validation):
    stacks = gztrace.loader_callstacks(stderr)
    kinds = {k for k, _ in stacks}
    if not ck.expect("vkCreateInstance" in kinds and "vkCreateDevice" in kinds,
                     "loader did not print the layer callstacks (VK_LOADER_DEBUG=layer)"):
        return
    for kind, layers in stacks:
        if want_layer:
            ck.expect(LAYER in layers, "%s chain lacks %s: %s" % (kind, LAYER, layers))
        else:
            ck.expect(LAYER not in layers, "%s chain has %s although it is not enabled" % (kind, LAYER))
        if validation:
            if not ck.expect(VALIDATION in layers, "%s chain lacks %s: %s" % (kind, VALIDATION, layers)):
                continue
            if want_layer and LAYER in layers:
                above = layers.index(VALIDATION) < layers.index(LAYER)
                ck.expect(above == (validation == "above"),
                          "%s chain has validation %s the layer, wanted %s: %s"
                          % (kind, "above" if above else "below", validation, layers))


def check_messages(ck, truth, validation):
    """The program's debug-utils messenger saw every message: validation must
    have announced itself (so it really ran) and nobody may have complained."""
    msgs = truth.get("messages", [])
    if validation:
        active = [m for m in msgs if m["id"] == "UNASSIGNED-khronos-validation-createinstance-status-message"
                  or "Khronos Validation Layer Active" in m["text"]]
        ck.expect(len(active) >= truth["instances"],
                  "validation was requested but announced itself to %d of %d instances"
                  % (len(active), truth["instances"]))
        ck.expect(any('Inserted device layer "%s"' % VALIDATION in m["text"] for m in msgs),
                  "the loader did not report inserting %s into a device chain" % VALIDATION)
    if truth.get("messages_total", 0) > len(msgs):
        ck.note("the program kept %d of %d messages" % (len(msgs), truth["messages_total"]))
    for m in msgs:
        if m["severity"] not in ("warning", "error"):
            continue
        if any(p.search(m["text"]) for p in BENIGN_MESSAGES):
            continue
        ck.fail("%s message %s: %s" % (m["severity"], m["id"], m["text"][:600]))


# ---- generic trace checks -----------------------------------------------------------


def check_generic(ck, t, pid, require_complete=True):
    """Everything TRACE_FORMAT.md says about any trace."""
    if require_complete:
        ck.expect(t.complete, "the trace array is not closed although the program exited cleanly")
        for e in t.shape_errors:
            ck.fail("file shape: " + e)
        if t.complete:
            ck.expect(gztrace.strict_parse_ok(t.path), "the complete file is not valid JSON as a whole")
    for e in t.time_errors:
        ck.fail("time format: " + e)

    if pid is not None:
        wrong = [e for e in t.events if "pid" in e and e["pid"] != pid]
        ck.expect(not wrong, "%d events have a pid other than %d, e.g. line %s"
                  % (len(wrong), pid, wrong[0]["_line"] if wrong else "-"))
    ck.expect(t.process_names(), "no process_name metadata event")

    names = t.thread_names()
    sort_idx = t.sort_indices()
    for e in t.events:
        ph = e.get("ph")
        if ph is None:
            ck.fail("line %d: event without ph" % e["_line"])
            continue
        if "tid" in e and (not isinstance(e["tid"], int) or isinstance(e["tid"], bool)):
            ck.fail("line %d: tid %r is not an integer" % (e["_line"], e["tid"]))
        if ph == "X":
            check_x_event(ck, e)
        if ph in ("s", "f"):
            ck.expect(e.get("cat") == "flow" and "id" in e and "_ts" in e,
                      "line %d: flow event without cat flow, id or ts" % e["_line"])
            if ph == "f":
                ck.expect(e.get("bp") == "e", "line %d: flow end without \"bp\":\"e\"" % e["_line"])
    for tid in t.tids():
        ck.expect(tid in names, "track %s has zones but no thread_name" % tid)
        for err in t.nesting_errors(tid):
            ck.fail("nesting: " + err)
        for err in t.parents_first_errors(tid):
            ck.fail("order: " + err)
    for tid in t.gpu_tracks():
        ck.expect(tid in sort_idx, "GPU track %s (%s) has no thread_sort_index" % (tid, names.get(tid)))
    check_calibration(ck, t)


def check_x_event(ck, e):
    line = e["_line"]
    if "_ts" not in e or "_dur" not in e:
        ck.fail("line %d: X event without ts or dur" % line)
        return
    ck.expect(e["_dur"] >= 0, "line %d: negative duration %s" % (line, gztrace.describe(e)))
    ck.expect(isinstance(e.get("name"), str), "line %d: X event without a name" % line)
    cat = e.get("cat")
    tid = e.get("tid")
    if cat == "gpu":
        ck.expect(isinstance(tid, int) and tid >= gztrace.GPU_TID_BASE,
                  "line %d: GPU zone on tid %r below 2^30" % (line, tid))
        level = e.get("args", {}).get("level")
        ck.expect(level in gztrace.LEVELS, "line %d: GPU zone level %r" % (line, level))
    elif cat == "cpu":
        ck.expect(isinstance(tid, int) and tid < gztrace.GPU_TID_BASE,
                  "line %d: CPU zone on GPU-range tid %r" % (line, tid))
    else:
        ck.fail("line %d: X event with cat %r" % (line, cat))


def check_calibration(ck, t):
    cal = t.calibration_events()
    if not t.gpu_zones():
        return
    if not ck.expect(cal, "GPU zones but no calibration event"):
        return
    keys = ("method", "max_deviation_ns", "offset_ns", "samples", "period_ns", "valid_bits")
    for e in cal:
        missing = [k for k in keys if k not in e.get("args", {})]
        ck.expect(not missing, "line %d: calibration event lacks %s" % (e["_line"], missing))
        ck.expect(isinstance(e.get("tid"), int) and e["tid"] >= gztrace.GPU_TID_BASE,
                  "line %d: calibration event not on a GPU track" % e["_line"])


def check_totals(ck, t, dropped=0):
    tot = t.totals()
    if not ck.expect(tot is not None, "no gpuzones_totals event"):
        return
    ck.expect(tot is t.events[-1], "gpuzones_totals is not the last event")
    a = tot.get("args", {})
    for err in t.accounting_errors(dropped=dropped):
        ck.expect(False, err)
    ck.expect(a.get("items_dropped") == 0, "items were dropped: %s" % a)


# ---- checks against the truth ---------------------------------------------------------


def gpu_api_names(api):
    # TRACE_FORMAT.md names submit zones vkQueueSubmit or vkQueueSubmit2; it
    # does not say what vkQueueSubmit2KHR gives, so both spellings pass.
    return {api, "vkQueueSubmit2"} if api == "vkQueueSubmit2KHR" else {api}


def in_window(z, lo, hi, slack):
    return z["_ts"] >= lo - slack and z["_end"] <= hi + slack


def map_queues(ck, t, truth, slack):
    """truth queue key -> (queue track tid, label track tid or None)."""
    names = t.thread_names()
    by_name = {}
    for tid, n in names.items():
        by_name.setdefault(n, []).append(tid)
    gpu = set(t.gpu_tracks())
    out = {}
    unnamed = []
    for q in truth["queues"]:
        if not q.get("timed", True):
            continue
        if q["name"]:
            tids = [x for x in by_name.get(q["name"], []) if x in gpu]
            if ck.expect(len(tids) == 1, "queue %d: %d tracks named %r" % (q["key"], len(tids), q["name"])):
                out[q["key"]] = tids[0]
        else:
            unnamed.append(q)
    taken = set(out.values())
    for q in unnamed:
        prefix = "VkQueue %d.%d " % (q["family"], q["index"])
        cands = [x for x in gpu if x not in taken and isinstance(names.get(x), str)
                 and names[x].startswith(prefix) and not names[x].endswith((" labels", " passes"))]
        calls = [c for c in truth["calls"] if c["queue"] == q["key"]]
        best, score = None, -1
        for tid in cands:  # the track whose submit zones fall in this queue's windows
            subs = t.gpu_zones(tid=tid, level="submit")
            s = sum(1 for c in calls
                    if any(in_window(z, c["host_submit_ns"], c["host_done_ns"], slack) for z in subs))
            if s > score:
                best, score = tid, s
        if ck.expect(best is not None, "queue %d: no track named %r..." % (q["key"], prefix)):
            out[q["key"]] = best
            taken.add(best)
            if q["device_name"] not in names[best]:
                ck.note("track name %r does not contain the device name %r" % (names[best], q["device_name"]))
    result = {}
    for key, tid in out.items():
        label_tids = [x for x in by_name.get("%s labels" % names[tid], []) if x in gpu]
        pass_tids = [x for x in by_name.get("%s passes" % names[tid], []) if x in gpu]
        result[key] = (tid, label_tids[0] if label_tids else None, pass_tids[0] if pass_tids else None)
    return result


def expected_batches(truth, key):
    """The batches of queue key that have a submit zone: not a protected
    batch, which the layer may add nothing to, nor one whose first or last
    command buffer lost its timestamps (the submit zone's begin and end)."""
    out = []
    for c in truth["calls"]:
        if c["queue"] == key:
            for b, batch in enumerate(c["batches"]):
                if not batch.get("batch_untimed") and not batch.get("submit_untimed"):
                    out.append((c, b, batch))
    return out


def timed_cmdbufs(batch):
    """(index in the batch, zone name) of the command buffers whose zones
    the layer can time: not one that ends with a render pass instance
    suspended, nor one whose first action resumes it, nor an execution
    that lost its timestamps to another of the same SIMULTANEOUS_USE
    command buffer."""
    untimed = batch.get("untimed") or [None] * len(batch["cmdbufs"])
    return [(j, n) for j, (n, u) in enumerate(zip(batch["cmdbufs"], untimed)) if not u]


# ---- racy executions of SIMULTANEOUS_USE command buffers --------------------------------

# The truth's "either" pairs: two executions of one SIMULTANEOUS_USE
# primary, the later submitted in another call before the program saw the
# earlier complete. Whether the earlier had written its timestamps by then
# is a race: both keep their timestamps, or both lose them ("overlap").
# Each pair is decided on its own; a run has a few, and every outcome is
# checked until one fits.
MAX_EITHER_PAIRS = 8


def resolve(truth, lost_pairs):
    """The truth of one outcome: the executions of lost_pairs (of
    truth["either"]) lose their timestamps, with all that needs them (their
    command buffer zones, the labels and render pass and command zones
    begun or ended there, the submit zone of a batch they begin or end);
    the other pairs keep theirs. A label or zone takes the reason of its
    begin, else of its end, as the truth itself does."""
    out = copy.deepcopy(truth)
    lost = {tuple(x) for pair in lost_pairs for x in pair}
    calls = out["calls"]
    for c in calls:
        for b, batch in enumerate(c["batches"]):
            n = len(batch["cmdbufs"])
            ex = [("overlap" if (c["index"], b, j) in lost else e if e == "overlap" else None)
                  for j, e in enumerate(batch.get("executions") or [None] * n)]
            batch["executions"] = ex
            batch["untimed"] = [u or ex[j] for j, u in enumerate(batch.get("untimed") or [None] * n)]
            if n and not batch.get("submit_untimed"):
                batch["submit_untimed"] = ex[0] or ex[-1]

    def lost_at(x):
        return x is not None and calls[x[0]]["batches"][x[1]]["executions"][x[2]] or None

    for c in calls:
        for b, batch in enumerate(c["batches"]):
            for z in batch.get("zones", []):
                first, last = z["cmdbufs"]
                why = z.get("begin_untimed") or lost_at([c["index"], b, first])
                if not why and last >= 0:
                    why = z.get("end_untimed") or lost_at([c["index"], b, last])
                z["untimed"] = why
    for l in out["labels"]:
        why = (l.get("begin_untimed") or lost_at(l.get("begin_exec")) or l.get("end_untimed")
               or lost_at(l.get("end_exec")))
        l["untimed"], l["absent"] = why, bool(why)
    out["either"] = []
    return out


def describe_exec(x):
    return "call %d batch %d command buffer %d" % tuple(x)


def outcomes(truth):
    """[(what, truth)]: every outcome the truth's "either" pairs allow, all
    of them timed first; only the truth itself without such pairs."""
    pairs = truth.get("either") or []
    if not pairs:
        return [("", truth)]
    out, seen = [], set()
    for mask in range(1 << min(len(pairs), MAX_EITHER_PAIRS)):
        lost = [p for i, p in enumerate(pairs) if mask >> i & 1]
        key = frozenset(tuple(x) for p in lost for x in p)
        if key in seen:
            continue
        seen.add(key)
        what = "; ".join("%s and %s %s" % (describe_exec(p[0]), describe_exec(p[1]),
                                           "untimed (overlap)" if p in lost else "timed")
                         for p in pairs)
        out.append((what, resolve(truth, lost)))
    return out


def check_outcomes(ck, t, truth, err, slack, expect="all", validation=None, level=None):
    """The trace and the summary against the truth: the zones dropped, every
    zone, and the summary's untimed lines. With racy executions (the
    truth's "either" pairs), against each outcome they allow: the first
    that fits passes; if none does, the failures are those of the one that
    comes closest."""
    pairs = truth.get("either") or []
    ck.expect(len(pairs) <= MAX_EITHER_PAIRS,
              "the truth has %d racy pairs of executions; the checker tries the outcomes of %d at most"
              % (len(pairs), MAX_EITHER_PAIRS))
    tried = []
    for what, tr in outcomes(truth):
        sub = Checks()
        check_totals(sub, t, 0 if expect == "no-zones" else expected_drops(tr, level))
        check_against_truth(sub, t, tr, slack, expect, validation, level)
        check_untimed_summary(sub, tr, err, expect)
        tried.append((what, sub))
        if not sub.errors:
            break
    what, best = min(tried, key=lambda x: len(x[1].errors))
    if pairs and best.errors:
        ck.fail("no outcome of the racy SIMULTANEOUS_USE executions fits (%d tried); the failures of the "
                "closest follow: %s" % (len(tried), what))
    elif pairs:
        ck.note("racy SIMULTANEOUS_USE executions: %s" % what)
        ck.count("racy pairs of SIMULTANEOUS_USE executions, decided together", len(pairs))
    ck.errors += best.errors
    ck.notes += best.notes
    for k, v in best.counts.items():
        ck.count(k, v)


def match_submits(ck, t, truth, key, tid, slack):
    """Pairs each expected batch with its submit zone.  The queue runs batches
    in submission order, so with equal counts they pair by order; otherwise
    each batch takes the earliest unused zone inside its window."""
    zones = [z for z in t.track_order(tid) if z.get("args", {}).get("level") == "submit"]
    exp = expected_batches(truth, key)
    pairs = []
    if len(zones) == len(exp):
        pairs = list(zip(exp, zones))
    else:
        ck.fail("queue %d: %d submit zones on track %s, expected %d" % (key, len(zones), tid, len(exp)))
        used = set()
        for c, b, batch in exp:
            hit = None
            for i, z in enumerate(zones):
                if i not in used and z.get("args", {}).get("batch") == b and \
                        in_window(z, c["host_submit_ns"], c["host_done_ns"], slack):
                    hit = i
                    break
            if hit is None:
                ck.fail("call %d (%s) batch %d: no submit zone inside its host window" % (c["index"], c["api"], b))
            else:
                used.add(hit)
                pairs.append(((c, b, batch), zones[hit]))
        for i, z in enumerate(zones):
            if i not in used:
                ck.fail("queue %d: unexpected %s" % (key, gztrace.describe(z)))
    return pairs


def check_submit_zone(ck, t, c, b, batch, z, slack, executions=None, submits=None):
    where = "call %d (%s) batch %d" % (c["index"], c["api"], b)
    args = z.get("args", {})
    ck.expect(z["name"] in gpu_api_names(c["api"]), "%s: submit zone named %r" % (where, z["name"]))
    ck.expect(args.get("batch") == b, "%s: args.batch is %r" % (where, args.get("batch")))
    ck.expect(args.get("cmdbufs") == len(batch["cmdbufs"]),
              "%s: args.cmdbufs is %r, expected %d" % (where, args.get("cmdbufs"), len(batch["cmdbufs"])))
    ck.expect(z["_dur"] > 0, "%s: submit zone has no duration" % where)
    early = c["host_submit_ns"] - z["_ts"]
    late = z["_end"] - c["host_done_ns"]
    ck.expect(early <= slack, "%s: GPU submit zone starts %s before the host called %s"
              % (where, us(early), c["api"]))
    ck.expect(late <= slack, "%s: GPU submit zone ends %s after the host saw it complete" % (where, us(late)))
    ck.count("submit zones")
    if submits is not None:
        submits[(c["index"], b)] = z

    kids = t.children(z)
    names = [k["name"] for k in kids]
    levels = {k.get("args", {}).get("level") for k in kids}
    ck.expect(levels <= {"cmdbuf"}, "%s: zones of level %s inside the submit zone" % (where, levels - {"cmdbuf"}))
    timed = timed_cmdbufs(batch)
    want = [n for _, n in timed]
    if ck.expect(names == want, "%s: command buffer zones %s, expected %s%s"
                 % (where, names, want, " (of %s; the others cannot be timed)" % batch["cmdbufs"]
                    if len(want) < len(batch["cmdbufs"]) else "")) and executions is not None:
        for (j, _), k in zip(timed, kids):
            executions[(c["index"], b, j)] = k
    for k in kids:
        ck.expect(k["_dur"] > 0, "%s: %s has no duration" % (where, gztrace.describe(k)))
        ck.count("cmdbuf zones")


def cpu_names(api):
    return {api, "vkQueueSubmit2"} if api == "vkQueueSubmit2KHR" else {api}


def check_cpu_and_flows(ck, t, c, submit_zones, flows):
    """The CPU vkQueueSubmit* zone of the call, and one flow from inside it to
    the start of each batch's GPU submit zone."""
    where = "call %d (%s)" % (c["index"], c["api"])
    cands = [z for z in t.cpu_zones(tid=c["tid"]) if z["name"] in cpu_names(c["api"])
             and z["_ts"] >= c["host_submit_ns"] - CPU_SLACK_NS and z["_end"] <= c["host_return_ns"] + CPU_SLACK_NS]
    if not ck.expect(len(cands) == 1, "%s: %d CPU %s zones on thread %d inside the call"
                     % (where, len(cands), c["api"], c["tid"])):
        return
    cpu = cands[0]
    ck.count("cpu submit zones")
    seen = set()
    for b, z in submit_zones:
        ends = [(fid, f) for fid, fl in flows.items() for f in fl["f"]
                if f.get("tid") == z["tid"] and abs(f["_ts"] - z["_ts"]) <= FLOW_TS_TOLERANCE_NS]
        ok = False
        for fid, f in ends:
            starts = [s for s in flows[fid]["s"] if s.get("tid") == c["tid"]
                      and cpu["_ts"] <= s["_ts"] <= cpu["_end"]]
            if starts and fid not in seen:
                seen.add(fid)
                ok = True
                break
        if ck.expect(ok, "%s batch %d: no flow from the CPU zone %s to the GPU zone %s"
                     % (where, b, gztrace.describe(cpu), gztrace.describe(z))):
            ck.count("flows")


WAIT_ZONE = {"fence": "vkWaitForFences", "queue_idle": "vkQueueWaitIdle"}


def check_wait_zone(ck, t, c):
    name = WAIT_ZONE.get(c["wait"])
    if name is None:  # vkWaitSemaphores is not among the documented CPU zones
        return
    hits = [z for z in t.cpu_zones(name=name) if z["_ts"] >= c["host_return_ns"] - CPU_SLACK_NS
            and z["_end"] <= c["host_done_ns"] + CPU_SLACK_NS]
    if ck.expect(hits, "call %d: no CPU %s zone between its return and its completion" % (c["index"], name)):
        ck.count("cpu wait zones")


def untimed_counts(truth):
    """What the layer cannot time, by kind ("label" or "cmdbuf": submission
    and command buffer zones) and reason, as the truth says: labels it marks
    absent (recorded in a SIMULTANEOUS_USE secondary or a protected command
    buffer, between a suspended render pass instance and its resumption, or
    in an execution of a SIMULTANEOUS_USE primary that lost its timestamps
    to another), command buffer zones without a begin or an end of their
    own (a suspension, a resumption) or whose execution lost its
    timestamps, the submit zones that lost their begin or end so, and every
    zone of a protected batch."""
    out = {}
    for l in truth["labels"]:
        if l.get("absent") and l["begin_call"] >= 0 and l["end_call"] >= 0:
            key = ("label", l.get("untimed") or "simultaneous")
            out[key] = out.get(key, 0) + 1
    for c in truth["calls"]:
        for batch in c["batches"]:
            if batch.get("batch_untimed"):
                key = ("cmdbuf", batch["batch_untimed"])
                out[key] = out.get(key, 0) + 1 + len(batch["cmdbufs"])
                continue
            if batch.get("submit_untimed"):
                key = ("cmdbuf", batch["submit_untimed"])
                out[key] = out.get(key, 0) + 1
            for u in batch.get("untimed") or []:
                if u:
                    out[("cmdbuf", u)] = out.get(("cmdbuf", u), 0) + 1
    return out


def expected_drops(truth, level=None):
    """Zones the layer must count as dropped: every zone it cannot time
    (untimed_counts, and at the passes and commands levels the render pass
    and command zones of expected_pass_zones), one drop each."""
    n = sum(untimed_counts(truth).values())
    if level in PASS_LEVELS:
        for c in truth["calls"]:
            for batch in c["batches"]:
                if not batch.get("batch_untimed"):
                    n += len(expected_pass_zones(batch, level)[1])
    return n


# The summary's lines for zones the layer could not time (vk_device.c), and
# the reason each one gives, by a phrase of it (the first that matches: the
# lines of a reused recording and of overlapping executions name
# SIMULTANEOUS_USE too).
UNTIMED_LINE = re.compile(r"^gpuzones: (\d+) (debug-label|submission and command buffer) zones on (.+) "
                          r"were not timed: (.*)$")
UNTIMED_REASONS = (
    ("an earlier submission of it was still running", "reused"),
    ("its previous execution was still running", "overlap"),
    ("SIMULTANEOUS_USE", "simultaneous"),
    ("suspended", "suspended"),
    ("protected", "protected"),
    ("multiview", "multiview"),
    ("queue family without usable timestamps", "family"),
    ("exhausted", "pool"),
    ("more timestamps in one command buffer", "too_many"),
    ("device masks", "device_group"),
)


def said_untimed(ck, err):
    """(kind, reason) -> count, summed over devices, from the summary."""
    out = {}
    for line in err.splitlines():
        m = UNTIMED_LINE.match(line)
        if not m:
            continue
        reason = next((r for phrase, r in UNTIMED_REASONS if phrase in m.group(4)), None)
        if not ck.expect(reason is not None, "the summary gives a reason the checker does not know: %r" % line):
            continue
        key = ("label" if m.group(2) == "debug-label" else "cmdbuf", reason)
        out[key] = out.get(key, 0) + int(m.group(1))
    return out


def check_untimed_summary(ck, truth, err, expect="all"):
    """The summary says how many zones were not timed and why, exactly as
    many as the truth knows the layer cannot time, and nothing else (no
    timestamps lost for reasons a correct program never gives: a full
    pool, a reused recording). Queue families without timestamps are the
    fault runs' to check."""
    want = untimed_counts(truth)
    got = said_untimed(ck, err)
    ignore = {"family"} if expect == "no-zones" or any(not q.get("timed", True) for q in truth["queues"]) else set()
    kinds = {"label": "debug-label zones", "cmdbuf": "submission and command buffer zones"}
    for key in sorted(set(want) | set(got)):
        if key[1] in ignore:
            continue
        ck.expect(want.get(key, 0) == got.get(key, 0),
                  "the summary says %d %s were not timed (%s), expected %d"
                  % (got.get(key, 0), kinds[key[0]], key[1], want.get(key, 0)))
        if want.get(key):
            ck.count("untimed %s (%s) in the summary" % (kinds[key[0]], key[1]), want[key])


def check_labels(ck, t, truth, key, label_tid, slack, executions=None):
    """Label zones against the labels the truth replayed. Every label the
    layer can time must be there, in order, exactly right: named as
    recorded, nested in its nearest present ancestor, inside its host
    window and, when one command buffer execution began and ended it,
    inside that execution's command buffer zone. The labels it cannot time
    (absent in the truth) must not be there: they are counted as dropped
    (check_totals)."""
    exp = [l for l in truth["labels"] if l["queue"] == key and l["begin_call"] >= 0 and l["end_call"] >= 0]
    calls = truth["calls"]
    executions = executions or {}
    present = [l for l in exp if not l.get("absent")]
    n_absent = len(exp) - len(present)
    if n_absent:
        ck.count("labels the layer cannot time, absent", n_absent)
    if label_tid is None:
        ck.expect(not present, "queue %d: %d labels expected but no '... labels' track" % (key, len(present)))
        return {}
    t.build_tree(label_tid)
    got = t.track_order(label_tid)
    other = [z for z in got if z.get("args", {}).get("level") != "label"]
    ck.expect(not other, "queue %d: non-label zones on the labels track: %s"
              % (key, [gztrace.describe(z) for z in other[:3]]))
    got = [z for z in got if z.get("args", {}).get("level") == "label"]
    if [z["name"] for z in got] != [l["name"] for l in present]:
        ck.fail("queue %d: label zones (by start) %s, expected %s%s"
                % (key, [z["name"] for z in got][:40], [l["name"] for l in present][:40],
                   " (%d more recorded where they cannot be timed)" % n_absent if n_absent else ""))
        return {}
    pairs = list(zip(present, got))
    by_id = {l["id"]: z for l, z in pairs}
    all_labels = {l["id"]: l for l in truth["labels"]}
    for l, z in pairs:
        # the nearest ancestor that has a zone (absent ones have none)
        want = l["parent"]
        while want >= 0 and want not in by_id:
            want = all_labels[want]["parent"] if want in all_labels else -1
        want_zone = by_id.get(want)
        p = z.get("_parent")
        ck.expect(p is want_zone, "%s: nested in %s, expected in %s"
                  % (gztrace.describe(z), gztrace.describe(p) if p is not None else "nothing",
                     gztrace.describe(want_zone) if want_zone is not None else "nothing"))
        ck.expect(z["_dur"] > 0, "label %s has no duration" % gztrace.describe(z))
        lo = calls[l["begin_call"]]["host_submit_ns"]
        hi = calls[l["end_call"]]["host_done_ns"]
        ck.expect(z["_ts"] >= lo - slack, "label %r starts %s before its first submission"
                  % (l["name"], us(lo - z["_ts"])))
        ck.expect(z["_end"] <= hi + slack, "label %r ends %s after its last submission completed"
                  % (l["name"], us(z["_end"] - hi)))
        ex = l.get("begin_exec")
        if ex is not None and ex == l.get("end_exec"):
            cz = executions.get(tuple(ex))
            if cz is not None:
                ck.expect(cz["_ts"] <= z["_ts"] and z["_end"] <= cz["_end"],
                          "%s lies outside the execution of %s that recorded it (call %d batch %d "
                          "command buffer %d: %s)" % (gztrace.describe(z), cz["name"], ex[0], ex[1], ex[2],
                                                      gztrace.describe(cz)))
        ck.count("label zones")
    return by_id


# ---- render pass and command zones (GPUZONES_LEVEL=passes, commands) ----------------------

PASS_LEVELS = ("passes", "commands")


def expected_pass_zones(batch, level):
    """What one batch puts on its queue's "... passes" track at level: the
    top-level zones (render pass instances, and the commands outside
    them), each with the commands inside it at the commands level, as
    [(zone, [commands])]; and the zones the layer cannot time (absent, one
    drop each). A command inside a render pass instance that cannot be
    timed (begun or ended where the layer writes no timestamp) is timed
    where its own command buffer is, as the labels there are, and then
    stands alone on the track."""
    zones = batch.get("zones", [])
    present, absent = [], []
    by_index = {}
    for z in zones:
        if z["parent"] < 0:
            entry = (z, [])
            by_index[z["index"]] = entry
            (absent if z["untimed"] else present).append(entry)
        elif level == "commands":
            parent = zones[z["parent"]]
            if z["untimed"]:
                absent.append((z, []))
            elif parent["untimed"]:
                present.append((z, []))
            else:
                by_index[parent["index"]][1].append(z)
    return present, absent


def check_pass_zones(ck, t, truth, key, passes_tid, level, submits, executions, labels_by_id):
    """The "... passes" track against the truth's render pass instances and
    commands, batch by batch: inside the batch's submit zone, in recording
    order, named as the layer must name them, of the right level, with the
    commands of a render pass instance nested in it (none at the passes
    level), inside the command buffer zone of the execution that recorded
    them, around the label zones begun inside them; a render pass instance
    suspended in one command buffer and resumed in the next is one zone.
    Nothing else on the track."""
    exp_batches = expected_batches(truth, key)
    want_any = any(expected_pass_zones(batch, level)[0] for _, _, batch in exp_batches)
    if passes_tid is None:
        ck.expect(not want_any, "queue %d: render pass and command zones expected but no '... passes' "
                  "track" % key)
        return
    for err in t.build_tree(passes_tid):
        ck.fail("passes track: " + err)
    zones = t.track_order(passes_tid)
    other = [z for z in zones if z.get("args", {}).get("level") not in ("pass", "command")]
    ck.expect(not other, "queue %d: zones of other levels on the passes track: %s"
              % (key, [gztrace.describe(z) for z in other[:3]]))
    tops = [z for z in zones if z.get("_parent") is None]
    used = set()
    for c, b, batch in exp_batches:
        sz = submits.get((c["index"], b))
        if sz is None:
            continue  # its submit zone is missing: reported already
        where = "call %d (%s) batch %d" % (c["index"], c["api"], b)
        want = expected_pass_zones(batch, level)[0]
        got = [z for z in tops if sz["_ts"] <= z["_ts"] and z["_end"] <= sz["_end"]]
        used.update(id(z) for z in got)
        if not ck.expect([z["name"] for z in got] == [e["name"] for e, _ in want],
                         "%s: render pass and command zones %s, expected %s"
                         % (where, [z["name"] for z in got], [e["name"] for e, _ in want])):
            continue
        for (e, kids_want), z in zip(want, got):
            args = z.get("args", {})
            ck.expect(args.get("level") == e["level"], "%s: %s has level %r, expected %r"
                      % (where, gztrace.describe(z), args.get("level"), e["level"]))
            ck.expect(isinstance(args.get("detail"), str) and args.get("detail"),
                      "%s: %s has no args.detail" % (where, gztrace.describe(z)))
            first, last = e["cmdbufs"]
            cz = executions.get((c["index"], b, first)) if first == last else None
            if cz is not None:
                ck.expect(cz["_ts"] <= z["_ts"] and z["_end"] <= cz["_end"],
                          "%s: %s lies outside its command buffer zone %s"
                          % (where, gztrace.describe(z), gztrace.describe(cz)))
            for lid in e["labels"]:
                lz = labels_by_id.get(lid)
                if lz is not None:
                    ck.expect(z["_ts"] <= lz["_ts"] and lz["_end"] <= z["_end"],
                              "%s: label %s begun inside %s lies outside it"
                              % (where, gztrace.describe(lz), gztrace.describe(z)))
            kids = t.children(z)
            names = [k["name"] for k in kids]
            ck.expect(names == [k["name"] for k in kids_want],
                      "%s: commands %s inside %s, expected %s" % (where, names, gztrace.describe(z),
                                                                  [k["name"] for k in kids_want]))
            for k in kids:
                ck.expect(k.get("args", {}).get("level") == "command" and not t.children(k),
                          "%s: %s inside %s is not a command zone without children"
                          % (where, gztrace.describe(k), gztrace.describe(z)))
            ck.count("render pass zones" if e["level"] == "pass" else "command zones outside render passes")
            if first != last:
                ck.count("render pass zones across command buffers")
            ck.count("command zones inside render passes", len(kids))
    stray = [z for z in tops if id(z) not in used]
    ck.expect(not stray, "queue %d: render pass or command zones inside no submit zone: %s"
              % (key, [gztrace.describe(z) for z in stray[:3]]))


def check_no_pass_zones(ck, t):
    """Below the passes level there is no "... passes" track and no render
    pass or command zone."""
    tracks = [n for n in t.thread_names().values() if isinstance(n, str) and n.endswith(" passes")]
    ck.expect(not tracks, "a '... passes' track below GPUZONES_LEVEL=passes: %s" % tracks)
    zs = [z for z in t.gpu_zones() if z.get("args", {}).get("level") in ("pass", "command")]
    ck.expect(not zs, "render pass or command zones below GPUZONES_LEVEL=passes: %s"
              % [gztrace.describe(z) for z in zs[:3]])


def check_workload(ck, truth, labels_by_id, validation=None):
    """The known workload's label zone against the CPU's submit-to-done
    time. With the validation layer in the chain, that CPU time also holds
    validation's own work at the submit and the fence (tens of ms under
    ASan, none of it on the GPU): there the zone must fit in the CPU's
    window and cover at least half of it, not match it."""
    w = truth.get("workload")
    if not w:
        return
    label = [l for l in truth["labels"] if l["name"] == w["label"] and l["begin_call"] == w["call"]]
    if not ck.expect(len(label) == 1 and label[0]["id"] in labels_by_id,
                     "workload label %r not found in the trace" % w["label"]):
        return
    z = labels_by_id[label[0]["id"]]
    host = w["host_ns"]
    err = abs(z["_dur"] - host) / host
    ck.note("workload: label zone %s, CPU submit-to-done %s (%.1f%% apart)" % (us(z["_dur"]), us(host), err * 100))
    if validation:
        ck.expect(host / 2 <= z["_dur"] <= host * (1 + WORKLOAD_TOLERANCE),
                  "workload label zone lasts %s, not within half to all of the CPU's %s (validation "
                  "in the chain)" % (us(z["_dur"]), us(host)))
        return
    ck.expect(err <= WORKLOAD_TOLERANCE, "workload label zone lasts %s, the CPU measured %s: more than %d%% apart"
              % (us(z["_dur"]), us(host), WORKLOAD_TOLERANCE * 100))


def check_program_notes(ck, truth):
    """What a case measured about itself that must hold with or without the
    layer (the layer must not change how the program's work runs)."""
    n = truth.get("notes", {})
    if "pending_at_once" in n:
        ck.expect(n["pending_at_once"] == 2 and not n.get("gate_opened_by_watchdog"),
                  "two executions of the simultaneous-use command buffer were not pending at once: %d of 2 "
                  "fences unsignalled after both vkQueueSubmit calls, which took %.1f ms together%s"
                  % (n["pending_at_once"], n.get("pair_submit_us", 0) / 1000.0,
                     "; vkQueueSubmit blocked until the program's watchdog thread opened the gate semaphore "
                     "both executions wait on (the submit waited for earlier work to complete)"
                     if n.get("gate_opened_by_watchdog") else ""))


def check_fault_expectation(ck, t, truth, err, expect):
    """What a fault must take away, and only that."""
    said = [l for l in err.splitlines() if l.startswith("gpuzones:")]
    untimed = [q for q in truth["queues"] if not q.get("timed", True)]
    if untimed and expect != "no-zones":
        # one message per device and family without timestamps
        families = {(q["instance"], q["family"]) for q in untimed}
        warned = [l for l in said if "has no timestamps" in l]
        ck.expect(len(warned) == len(families),
                  "want one 'no timestamps' message per device and family, got %s" % warned)
    if expect == "no-zones":
        ck.expect(not t.gpu_zones(), "GPU zones on a queue family without timestamps")
        # lavapipe has one queue per device: one message per device and family
        # is one per queue of the truth.
        families = truth["queues"]
        warned = [l for l in said if "has no timestamps" in l]
        ck.expect(len(warned) == len(families),
                  "want one 'no timestamps' message per device and family, got %s" % warned)


def check_batches_without_submit_zone(ck, t, truth, key, tid):
    """A batch whose first or last command buffer lost its timestamps has
    no submit zone; the truth knows such batches only with every command
    buffer untimed. No command buffer zone lies outside a submit zone."""
    for c in truth["calls"]:
        if c["queue"] != key:
            continue
        for b, batch in enumerate(c["batches"]):
            if batch.get("submit_untimed") and not batch.get("batch_untimed"):
                ck.count("submit zones the layer cannot time, absent")
                timed = timed_cmdbufs(batch)
                ck.expect(not timed, "call %d batch %d: no submit zone (%s) but command buffer zones %s: the "
                          "checker does not know where those go" % (c["index"], b, batch["submit_untimed"],
                                                                    [n for _, n in timed]))
    stray = [z for z in t.gpu_zones(tid=tid, level="cmdbuf") if z.get("_parent") is None]
    ck.expect(not stray, "queue %d: command buffer zones inside no submit zone: %s"
              % (key, [gztrace.describe(z) for z in stray[:3]]))


def check_against_truth(ck, t, truth, slack, expect="all", validation=None, level=None):
    if expect == "no-zones":
        return
    if level not in PASS_LEVELS:
        check_no_pass_zones(ck, t)
    queues = map_queues(ck, t, truth, slack)
    for q in truth["queues"]:
        if not q.get("timed", True):
            prefix = "VkQueue %d.%d " % (q["family"], q["index"])
            named = [n for n in t.thread_names().values() if isinstance(n, str)
                     and (n.startswith(prefix) or (q["name"] and n.startswith(q["name"])))]
            ck.expect(not named, "queue %d has no timestamps, yet tracks %s" % (q["key"], named))
    flows = t.flows()
    labels_by_id = {}
    used_tracks = set()
    for q in truth["queues"]:
        key = q["key"]
        if key not in queues:
            continue
        tid, label_tid, passes_tid = queues[key]
        used_tracks.update({tid, label_tid})
        t.build_tree(tid)
        per_call = {}
        executions = {}  # (call, batch, index) -> command buffer zone
        submits = {}  # (call, batch) -> submit zone
        for (c, b, batch), z in match_submits(ck, t, truth, key, tid, slack):
            check_submit_zone(ck, t, c, b, batch, z, slack, executions, submits)
            per_call.setdefault(c["index"], []).append((b, z))
        check_batches_without_submit_zone(ck, t, truth, key, tid)
        for c in truth["calls"]:
            if c["queue"] == key:
                check_cpu_and_flows(ck, t, c, per_call.get(c["index"], []), flows)
                check_wait_zone(ck, t, c)
        bad = [z for z in t.gpu_zones(tid=tid) if z.get("args", {}).get("level") == "label"]
        ck.expect(not bad, "queue %d: label zones on the queue track, e.g. %s"
                  % (key, gztrace.describe(bad[0]) if bad else ""))
        queue_labels = check_labels(ck, t, truth, key, label_tid, slack, executions)
        labels_by_id.update(queue_labels)
        if level in PASS_LEVELS:
            used_tracks.add(passes_tid)
            check_pass_zones(ck, t, truth, key, passes_tid, level, submits, executions, queue_labels)
    extra = [x for x in t.gpu_tracks() if x not in used_tracks and t.gpu_zones(tid=x)]
    ck.expect(not extra, "GPU zones on tracks that belong to no queue of the program: %s"
              % [t.thread_names().get(x, x) for x in extra])
    check_workload(ck, truth, labels_by_id, validation)


# ---- modes -----------------------------------------------------------------------------------


def finish(ck, title, tmp, keep):
    for n in ck.notes:
        print("note: " + n)
    if ck.counts:
        print("checked: " + ", ".join("%d %s" % (v, k) for k, v in sorted(ck.counts.items())))
    if ck.errors:
        for e in ck.errors[:60]:
            print("FAIL: " + e)
        if len(ck.errors) > 60:
            print("FAIL: ... and %d more" % (len(ck.errors) - 60))
        print("%s: FAILED (%d problems); files kept in %s" % (title, len(ck.errors), tmp))
        return 1
    print("%s: PASS" % title)
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("files kept in %s" % tmp)
    return 0


def load_truth(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def mode_case(args):
    tmp = tempfile.mkdtemp(prefix="gz-vk-%s-" % args.case)
    trace = os.path.join(tmp, "trace.json")
    truth_path = os.path.join(tmp, "truth.json")
    want_layer = not args.no_layer
    env = layer_env(args, tmp, trace, enable_layer=want_layer)
    cmd = [os.path.abspath(args.program), "--case", args.case, "--truth", truth_path]
    if args.count:
        cmd += ["--count", str(args.count)]
    title = "vk case %s%s%s%s%s" % (args.case, " (validation %s)" % args.validation if args.validation else "",
                                  " (GPUZONES_LEVEL=%s)" % args.level if args.level else "",
                                  " (no layer)" if args.no_layer else "",
                                  " (fault %s)" % " ".join(args.fault) if args.fault else "")
    rc, out, err = run(cmd, env, tmp)
    with open(os.path.join(tmp, "stderr.txt"), "w") as f:
        f.write(err)
    if rc == SKIP_STATUS:
        print(out.strip())
        print("%s: SKIP" % title)
        shutil.rmtree(tmp, ignore_errors=True)
        return SKIP_STATUS
    if rc != 0:
        print(out + tail(err))
        print("%s: FAILED: the program exited with status %d; files kept in %s" % (title, rc, tmp))
        return 2 if rc == 2 and not want_layer else 1
    ck = Checks()
    truth = load_truth(truth_path)
    ck.expect(truth.get("program_errors", 0) == 0, "the program reports mistakes of its own")
    if want_layer or args.validation:
        check_layer_order(ck, err, want_layer, args.validation)
    check_messages(ck, truth, args.validation)
    check_program_notes(ck, truth)
    for line in err.splitlines():
        if line.startswith("gpuzones:"):
            ck.note("layer said: " + line)
    if not want_layer:
        ck.expect(not os.path.exists(trace), "a trace was written without the layer")
        return finish(ck, title, tmp, args.keep)
    try:
        t = gztrace.load(trace)
    except (OSError, gztrace.TraceError) as e:
        ck.fail("cannot load the trace: %s" % e)
        return finish(ck, title, tmp, True)
    check_generic(ck, t, truth["pid"])
    if args.level:
        rejected = [l for l in err.splitlines() if l.startswith("gpuzones: GPUZONES_LEVEL=")]
        ck.expect(not rejected, "the layer does not take GPUZONES_LEVEL=%s: %s" % (args.level, rejected))
    check_outcomes(ck, t, truth, err, args.slack_us * 1000, args.expect, args.validation, args.level)
    check_fault_expectation(ck, t, truth, err, args.expect)
    return finish(ck, title, tmp, args.keep)


# ---- sample modes ---------------------------------------------------------------------------


def sample_not_enabled(args, tmp):
    """Installed (manifest on VK_ADD_LAYER_PATH) but not enabled: no trace, and
    the program prints exactly what it prints without the layer around."""
    ck = Checks()
    exe = os.path.abspath(args.sample)
    plain_dir = os.path.join(tmp, "plain")
    inst_dir = os.path.join(tmp, "installed")
    os.makedirs(plain_dir)
    os.makedirs(inst_dir)
    trace = os.path.join(inst_dir, "trace.json")
    rc0, out0, err0 = run([exe], base_env(args, tmp), plain_dir)
    env = base_env(args, tmp)
    env["VK_ADD_LAYER_PATH"] = os.path.abspath(args.layer_dir)
    env["GPUZONES_OUTPUT"] = trace
    rc1, out1, err1 = run([exe], env, inst_dir)
    ck.expect(rc0 == 0, "the sample failed without the layer (status %d): %s" % (rc0, tail(err0, 10)))
    ck.expect(rc1 == rc0, "exit status %d with the layer installed, %d without" % (rc1, rc0))
    ck.expect(out1 == out0, "stdout differs:\n--- without\n%s--- installed\n%s" % (out0, out1))
    ck.expect(err1 == err0, "stderr differs:\n--- without\n%s--- installed\n%s" % (err0, err1))
    ck.expect(not os.path.exists(trace), "a trace file was written although the layer is not enabled")
    stray = [f for f in os.listdir(inst_dir) if f.startswith("gpuzones")]
    ck.expect(not stray, "files written in the working directory: %s" % stray)
    # prove the manifest was really visible to the loader, else this test
    # would pass with a broken layer directory
    env["VK_LOADER_DEBUG"] = "layer"
    rc2, _, err2 = run([exe], env, inst_dir)
    manifest = os.path.join(os.path.abspath(args.layer_dir), "VkLayer_gpuzones_timing.json")
    ck.expect(manifest in err2, "the loader never looked at %s" % manifest)
    ck.expect(not any(LAYER in layers for _, layers in gztrace.loader_callstacks(err2)), "the layer was in a call chain")
    return ck


def sample_enabled(args, tmp):
    """Enabled: the trace has the sample's zones and the output is unchanged."""
    ck = Checks()
    exe = os.path.abspath(args.sample)
    trace = os.path.join(tmp, "trace.json")
    rc0, out0, _ = run([exe, "--frames", "5"], base_env(args, tmp), tmp)
    rc, out, err = run([exe, "--frames", "5"], layer_env(args, tmp, trace), tmp)
    ck.expect(rc0 == 0 and rc == 0, "sample exit status %d without / %d with the layer: %s" % (rc0, rc, tail(err, 10)))
    ck.expect(out == out0, "stdout differs with the layer:\n%s---\n%s" % (out0, out))
    check_layer_order(ck, err, True, None)
    try:
        t = gztrace.load(trace)
    except (OSError, gztrace.TraceError) as e:
        ck.fail("cannot load the trace: %s" % e)
        return ck
    check_generic(ck, t, None)
    check_totals(ck, t)
    cmdbufs = {z["name"] for z in t.gpu_zones(level="cmdbuf")}
    for n in ("main cmdbuf", "worker 0", "worker 1"):
        ck.expect(n in cmdbufs, "no command buffer zone %r (have %s)" % (n, sorted(cmdbufs)))
    frames = t.gpu_zones(level="label", name="Frame")
    ck.expect(len(frames) == 5, "%d 'Frame' label zones, expected 5" % len(frames))
    for tid in {z["tid"] for z in frames}:
        t.build_tree(tid)
    # the main buffer: Frame > Simulate > Integrate; the workers: Worker k > Integrate
    in_frame = 0
    for z in t.gpu_zones(level="label", name="Integrate"):
        p = z.get("_parent")
        pp = p.get("_parent") if p is not None else None
        if p is not None and p["name"] == "Simulate" and pp is not None and pp["name"] == "Frame":
            in_frame += 1
        else:
            ck.expect(p is not None and p["name"].startswith("Worker "),
                      "'Integrate' nested in neither Frame > Simulate nor Worker: %s" % gztrace.describe(z))
    ck.expect(in_frame == 5, "%d 'Integrate' zones in Frame > Simulate, expected 5" % in_frame)
    ck.count("frames", len(frames))
    return ck


def sample_kill(args, tmp):
    """SIGKILL mid-run: the file a killed process leaves still loads and has
    GPU zones (the sink writes incrementally and flushes while running)."""
    ck = Checks()
    exe = os.path.abspath(args.sample)
    trace = os.path.join(tmp, "trace.json")
    p = subprocess.Popen([exe, "--frames", "100000", "--sleep-ms", "2"], env=layer_env(args, tmp, trace),
                         cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    seen = False
    while time.monotonic() < deadline and p.poll() is None:
        try:
            with open(trace, encoding="utf-8", errors="replace") as f:
                seen = '"cat":"gpu"' in f.read().replace(" ", "")
        except OSError:
            pass
        if seen:
            break
        time.sleep(0.05)
    time.sleep(0.3)  # let it be in the middle of something
    still_running = p.poll() is None
    if still_running:
        p.send_signal(signal.SIGKILL)
    p.wait()
    ck.expect(still_running, "the sample exited (status %s) before it was killed" % p.returncode)
    ck.expect(seen, "no GPU zone reached the file within 15 s while the program ran")
    try:
        t = gztrace.load(trace)
    except (OSError, gztrace.TraceError) as e:
        ck.fail("the killed process's trace does not load: %s" % e)
        return ck
    ck.expect(not t.complete, "the trace of a killed process claims to be complete")
    check_generic(ck, t, p.pid, require_complete=False)
    n = len(t.gpu_zones())
    ck.expect(n > 0, "no GPU zones in the killed process's trace")
    ck.count("gpu zones", n)
    if t.dropped_partial:
        ck.note("dropped a partial last line")
    return ck


def implicit_env(args, tmp, trace, enable, disable):
    """The implicit manifest copied under $XDG_DATA_HOME, as an installed
    layer would be found; XDG_DATA_DIRS keeps /usr/share (else the system
    ICDs and layers vanish)."""
    xdg = os.path.join(tmp, "xdg")
    d = os.path.join(xdg, "vulkan", "implicit_layer.d")
    if not os.path.isdir(d):
        os.makedirs(d)
        shutil.copy(args.implicit_manifest, os.path.join(d, "VkLayer_gpuzones_timing.json"))
    env = base_env(args, tmp)
    env["XDG_DATA_HOME"] = xdg
    env["XDG_DATA_DIRS"] = "/usr/local/share:/usr/share"
    env["GPUZONES_OUTPUT"] = trace
    if enable:
        env["GPUZONES_ENABLE"] = "1"
    if disable:
        env["GPUZONES_DISABLE"] = "1"
    return env


def sample_implicit(args, tmp):
    """The implicit manifest: off unless GPUZONES_ENABLE=1, and
    GPUZONES_DISABLE=1 wins over it."""
    ck = Checks()
    exe = os.path.abspath(args.sample)
    rc0, out0, err0 = run([exe], base_env(args, tmp), tmp)
    ck.expect(rc0 == 0, "the sample failed without the layer (status %d)" % rc0)
    for name, enable, disable, want in (("installed", False, False, False), ("enabled", True, False, True),
                                        ("enabled+disabled", True, True, False)):
        trace = os.path.join(tmp, "trace-%s.json" % name.replace("+", "-"))
        env = implicit_env(args, tmp, trace, enable, disable)
        rc, out, err = run([exe], env, tmp)
        ck.expect(rc == 0, "%s: exit status %d: %s" % (name, rc, tail(err, 10)))
        ck.expect(out == out0, "%s: stdout differs:\n%s---\n%s" % (name, out0, out))
        if want:
            try:
                t = gztrace.load(trace, strict=True)
                ck.expect(t.gpu_zones(), "%s: the trace has no GPU zones" % name)
            except (OSError, gztrace.TraceError) as e:
                ck.fail("%s: no loadable trace: %s" % (name, e))
        else:
            ck.expect(not os.path.exists(trace), "%s: a trace was written" % name)
            ck.expect(err == err0, "%s: stderr differs:\n%s---\n%s" % (name, err0, err))
        env["VK_LOADER_DEBUG"] = "layer"
        _, _, dbg = run([exe], env, tmp)
        ck.expect("VkLayer_gpuzones_timing.json" in dbg, "%s: the loader never saw the implicit manifest" % name)
        chained = any(LAYER in layers for _, layers in gztrace.loader_callstacks(dbg))
        ck.expect(chained == want, "%s: the layer is %sin the call chain" % (name, "" if chained else "not "))
        try:
            os.remove(trace)
        except OSError:
            pass
    return ck


def mode_sample(args):
    tmp = tempfile.mkdtemp(prefix="gz-sample-%s-" % args.sample_test)
    fn = {"not-enabled": sample_not_enabled, "enabled": sample_enabled, "kill": sample_kill,
          "implicit": sample_implicit}[args.sample_test]
    ck = fn(args, tmp)
    return finish(ck, "vk sample %s" % args.sample_test, tmp, args.keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", help="the gz-test-vk executable")
    ap.add_argument("--case", help="the case to run")
    ap.add_argument("--count", type=int, default=0, help="case size knob passed to the program")
    ap.add_argument("--sample", help="the gz-sample-vk-compute executable")
    ap.add_argument("--sample-test", choices=("not-enabled", "enabled", "kill", "implicit"))
    ap.add_argument("--implicit-manifest", help="the implicit manifest file (--sample-test implicit)")
    ap.add_argument("--layer-dir", help="directory of the explicit manifest VkLayer_gpuzones_timing.json")
    ap.add_argument("--validation", choices=("above", "below", "between"),
                    help="also load VK_LAYER_KHRONOS_validation, above (app side of) or below our layer")
    ap.add_argument("--no-layer", action="store_true", help="run without our layer (checks the program itself)")
    ap.add_argument("--slack-us", type=float, default=DEFAULT_GPU_SLACK_NS / 1000.0,
                    help="allowed GPU zone overhang outside the host window (default %(default)s)")
    ap.add_argument("--icd", default=LAVAPIPE_ICD, help="VK_ICD_FILENAMES value (default lavapipe)")
    ap.add_argument("--readback", choices=("host", "copy"),
                    help="GPUZONES_VK_READBACK for the layer (default: the driver's own path)")
    ap.add_argument("--level", choices=PASS_LEVELS,
                    help="GPUZONES_LEVEL for the layer, and check its render pass and command zones "
                         "(default: the layer's default, labels, and no such zones)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--fault", action="append", default=[], metavar="GZFAULT_X=V",
                    help="load the clock-fault layer below ours with this setting (repeatable)")
    ap.add_argument("--fault-layer-dir", help="directory of the fault layer's manifest")
    ap.add_argument("--expect", choices=("all", "no-zones"), default="all",
                    help="what the fault takes away: nothing, the label zones, every GPU zone")
    args = ap.parse_args()
    if args.fault and not args.fault_layer_dir:
        ap.error("--fault needs --fault-layer-dir")
    if args.sample:
        if not args.sample_test or not (args.layer_dir or args.implicit_manifest):
            ap.error("--sample needs --sample-test and --layer-dir (or --implicit-manifest)")
        if args.sample_test == "implicit" and not args.implicit_manifest:
            ap.error("--sample-test implicit needs --implicit-manifest")
        return mode_sample(args)
    if not args.program or not args.case or not (args.layer_dir or args.no_layer):
        ap.error("needs --program, --case and --layer-dir (or --no-layer)")
    return mode_case(args)


if __name__ == "__main__":
    sys.exit(main())
