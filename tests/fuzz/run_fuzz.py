#!/usr/bin/env python3
"""Runs one libFuzzer target for a bounded time on its committed seed corpus
(read only: new inputs go to a temporary directory) and fails on any crash,
leak or sanitizer report.  run_fuzz.py FUZZER SEED_DIR SECONDS"""
import os
import subprocess
import sys
import tempfile

fuzzer, seeds, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
with tempfile.TemporaryDirectory(prefix="gz-fuzz-") as work:
    cmd = [fuzzer, "-max_total_time=" + seconds, "-close_fd_mask=2", "-timeout=10",
           "-rss_limit_mb=1024", "-max_len=65536", "-artifact_prefix=" + work + "/", work, seeds]
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = p.stderr.splitlines()
    print("\n".join(l for l in lines if l.startswith(("#", "Done", "INFO: seed", "==")))[-3000:])
    crashes = [f for f in os.listdir(work) if f.startswith(("crash-", "leak-", "timeout-", "oom-"))]
    if p.returncode != 0 or crashes:
        print("\n".join(lines[-60:]))
        print("FAIL: %s exited %d, artifacts %s" % (os.path.basename(fuzzer), p.returncode, crashes))
        sys.exit(1)
    print("pass: no crash in %s s" % seconds)
