#!/usr/bin/env python3
"""GPUZONES_CLOCK_RECORD and its replay: a recorded run (steps-busy,
seed 1) replays through the same model to the very same times
(gz-clock-replay --check), its re-evaluation (replay.py) gives the live
check's figures, a record with inputs left out does not replay the same, one
cut off in a line is refused; a record that cannot be written (no such
directory, a FIFO nobody reads) is said so while the program runs on, and
one to the program's redirected stdout is appended to it.

    record_replay.py --sample S --load-program L --layer-dir D --fault-layer-dir F --replay R
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import clockcheck  # noqa: E402
import replay  # noqa: E402

SCENARIO, SEED = "steps-busy", 1
MIN_CONVERSIONS = 1000  # a 6 s run converts ~20 000 times


def check_replay(replay_bin, record, expect_differ):
    p = subprocess.run([replay_bin, record, "--check"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    print("  " + p.stdout.strip())
    words = p.stdout.split()
    try:
        conversions, differ = int(words[1]), int(words[3])
    except (IndexError, ValueError):
        return ["gz-clock-replay printed %r" % p.stdout]
    errors = []
    if conversions < MIN_CONVERSIONS:
        errors.append("%s: only %d conversions recorded" % (record, conversions))
    if expect_differ != (differ > 0) or (p.returncode == 1) != (differ > 0):
        errors.append("%s: %d of %d conversions differ (exit %d), expected %s" % (
            record, differ, conversions, p.returncode, "some" if expect_differ else "none"))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for a in ("--sample", "--load-program", "--layer-dir", "--fault-layer-dir", "--replay"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    for a in ("sample", "load_program", "layer_dir", "fault_layer_dir", "replay"):
        setattr(args, a, os.path.abspath(getattr(args, a)))
    args.record, args.busy_loop = True, False
    tmp = tempfile.mkdtemp(prefix="gz-record-")
    errors = []
    print("a recorded run: %s seed %d" % (SCENARIO, SEED))
    clockcheck.apply_seed(SCENARIO, SEED)
    live, failures = clockcheck.run_scenario(args, SCENARIO, tmp)
    errors += ["live run: " + f for f in failures]
    record = os.path.join(tmp, SCENARIO + ".rec")
    if not live["checked"]:
        errors.append("the live run gave nothing to check; no replay")
    elif not os.path.exists(record):
        errors.append("GPUZONES_CLOCK_RECORD=%s: no record was written" % record)
    else:
        print("the record replayed through the same model:")
        errors += check_replay(args.replay, record, expect_differ=False)
        again, _ = replay.reevaluate(tmp, SCENARIO, SEED, args.replay)
        same = [k for k in ("checked", "worst", "doubted", "doubt") if again[k] != live[k]]
        print("  re-evaluated: %s" % clockcheck.row(again))
        if same:
            errors.append("re-evaluated from the record, %s differ: live %s, replayed %s"
                          % (", ".join(same), clockcheck.row(live), clockcheck.row(again)))
        # The sync points left out after the first second: the model must
        # come out different, or the check above proves nothing.
        cut = os.path.join(tmp, "cut.rec")
        with open(record) as f:
            lines = f.readlines()
        half = len(lines) // 6
        with open(cut, "w") as out:
            out.writelines(l for i, l in enumerate(lines) if i < half or not l.startswith("P "))
        print("the record without its sync points after line %d:" % half)
        errors += check_replay(args.replay, cut, expect_differ=True)
        # A record cut off in a line is refused, with the line's number.
        at = next((i for i in range(1000, len(lines)) if lines[i][0] in "BZH"), None)
        if at is None:
            errors.append("the record has fewer than 1000 lines")
            return clockcheck.conclude(errors, tmp)
        with open(cut, "w") as out:
            out.writelines(lines[:at])
            out.write(lines[at][:5])
        p = subprocess.run([args.replay, cut], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        print("  a record cut off: exit %d, %s" % (p.returncode, p.stderr.strip()))
        if p.returncode != 2 or ":%d:" % (at + 1) not in p.stderr:
            errors.append("a record cut off in line %d: exit %d, %r"
                          % (at + 1, p.returncode, p.stderr))
        # A damaged clock id is refused (2^31 + 1 once wrapped the table's size).
        with open(cut, "w") as out:
            out.write("C 1\nC 2147483649\nF 2147483649\n")
        p = subprocess.run([args.replay, cut], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        print("  clock id 2147483649: exit %d, %s" % (p.returncode, p.stderr.strip()))
        if p.returncode != 2 or ":2: no clock id" not in p.stderr:
            errors.append("clock id 2147483649: exit %d, %r" % (p.returncode, p.stderr))
    # Odd paths: the program runs on and says why there is no record; its
    # own stdout, redirected to a file, is written through, not truncated.
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    out_path = os.path.join(tmp, "stdout.txt")
    for path, says in ((os.path.join(tmp, "no-such-dir", "x.rec"), "no clock record is kept"),
                       (fifo, "nobody opened it for reading"),
                       ("/dev/stdout", None)):
        env = clockcheck.base_env()
        env.update(VK_ADD_LAYER_PATH=args.layer_dir, VK_INSTANCE_LAYERS=clockcheck.LAYER,
                   GPUZONES_OUTPUT="none", GPUZONES_CLOCK_RECORD=path)
        with open(out_path, "w") as out:
            out.write("the program's line\n")
        with open(out_path, "a") as out:
            p = subprocess.run([args.sample, "--frames", "3", "--sleep-ms", "1"], env=env,
                               cwd=tmp, stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)
        with open(out_path) as f:
            written = f.read()
        said = [l for l in p.stderr.splitlines() if "GPUZONES_CLOCK_RECORD" in l]
        print("GPUZONES_CLOCK_RECORD=%s: exit %d, %s" % (os.path.basename(path), p.returncode,
                                                         said or "nothing said"))
        if p.returncode != 0:
            errors.append("GPUZONES_CLOCK_RECORD=%s: exit %d: %s" % (path, p.returncode,
                                                                    p.stderr[-500:]))
        elif says and not (len(said) == 1 and said[0].startswith("gpuzones: ") and
                           says in said[0]):
            errors.append("GPUZONES_CLOCK_RECORD=%s: expected one gpuzones: line saying %r, got %r"
                          % (path, says, said))
        elif not says and (said or not written.startswith("the program's line\nC 1\n")):
            errors.append("GPUZONES_CLOCK_RECORD=/dev/stdout: the program's stdout file holds %r..."
                          % written[:80])
    return clockcheck.conclude(errors, tmp)


if __name__ == "__main__":
    sys.exit(main())
