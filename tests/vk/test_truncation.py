#!/usr/bin/env python3
"""A trace cut at an arbitrary byte (a killed process) still loads.

Runs the compute sample under the layer, then cuts its real trace file at
many byte offsets (every byte near both ends, and a few hundred spread over
the middle) and checks each cut two ways:
  - the way viewers do it: keep the complete lines, drop the trailing comma,
    close the array: strict JSON, every event an object with "ph";
  - with the tests' loader (gztrace): no error, and exactly the events of the
    complete lines before the cut.
The uncut file must be strict JSON as it is (clean exit).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gztrace  # noqa: E402


def viewer_repair(text):
    """What Perfetto / chrome://tracing effectively do with a cut array."""
    complete = text[: text.rfind("\n") + 1] if "\n" in text else ""
    body = complete.rstrip()
    if body.endswith("]"):
        return body
    return body.rstrip(",") + "\n]"


def is_event(line):
    """Whether a line of the file (maybe the cut one) holds a whole event."""
    line = line.strip().rstrip(",")
    if not line.startswith("{"):
        return False
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", required=True)
    ap.add_argument("--layer-dir", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gz-trunc-")
    trace = os.path.join(tmp, "trace.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUZONES_", "VK_INSTANCE_LAYERS"))}
    env.setdefault("VK_ICD_FILENAMES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
    env.update(VK_ADD_LAYER_PATH=os.path.abspath(args.layer_dir),
               VK_INSTANCE_LAYERS="VK_LAYER_GPUZONES_timing", GPUZONES_OUTPUT=trace,
               GPUZONES_SUMMARY="0")
    subprocess.run([os.path.abspath(args.sample), "--frames", "20"], env=env, check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    with open(trace, encoding="utf-8") as f:
        text = f.read()
    failures = []
    events = json.loads(text)  # a clean exit's file is strict JSON as it is
    if not any(e.get("cat") == "gpu" for e in events):
        failures.append("the trace has no GPU zones")

    n = len(text)
    offsets = set(range(2, min(n, 400))) | set(range(max(2, n - 400), n + 1))
    offsets |= {2 + (n - 2) * k // 500 for k in range(501)}
    for off in sorted(offsets):
        cut = text[:off]
        try:
            repaired = json.loads(viewer_repair(cut))
            if not all(isinstance(e, dict) and "ph" in e for e in repaired):
                failures.append("offset %d: an element that is not an event" % off)
        except ValueError as e:
            failures.append("offset %d: viewer-style repair is not JSON: %s" % (off, e))
        try:
            t = gztrace.loads(cut)
            whole_lines = sum(1 for line in cut.split("\n")[1:] if is_event(line))
            if len(t.events) != max(whole_lines, 0) or t.shape_errors:
                failures.append("offset %d: loader got %d events for %d complete lines %s"
                                % (off, len(t.events), whole_lines, t.shape_errors[:2]))
        except gztrace.TraceError as e:
            failures.append("offset %d: %s" % (off, e))
        if len(failures) > 20:
            break
    for f in failures[:20]:
        print("FAIL:", f)
    print("cut %d bytes at %d offsets: %s" % (n, len(offsets), "FAILED" if failures else "ok"))
    if failures:
        print("files kept in", tmp)
        return 1
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
