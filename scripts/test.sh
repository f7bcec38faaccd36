#!/bin/sh
# Builds gpuzones and runs every test on Mesa's software drivers: once as
# built, once more under AddressSanitizer + UndefinedBehaviorSanitizer, the
# multi-threaded ones under ThreadSanitizer, and the fuzz targets.
# Exits non-zero when any test failed.
set -u
cd "$(dirname "$0")/.."
sh scripts/setup-debian.sh || exit 1
. scripts/env.sh

# The real Tracy tools that the Tracy tests record with (test instruments,
# never part of gpuzones; README.md, "Tracy", says how to build them). CI
# keeps a script beside the checkout that builds them from Tracy's sources
# into ~/.cache (minutes the first time, nothing after); elsewhere, or if
# that build fails, the Tracy tests say they skip.
if [ -f ../shared/tools/build-tracy.sh ]; then
    bash ../shared/tools/build-tracy.sh >build-tracy.log 2>&1 ||
        echo "scripts/test.sh: the Tracy tools did not build (see build-tracy.log); the Tracy tests skip"
fi

status=0
sh scripts/build.sh || exit 1
# The 'targets' suite (tests/countlayer/check_targets.py) holds the goals of
# the Vulkan path's design, not all met yet: run it by hand with --suite targets.
meson test -C build --print-errorlogs --num-processes 2 --no-suite targets || status=1

# Sanitized build: the layer, the client and the test programs are
# instrumented (lavapipe and the loader are not). Left out there: the
# clock-accuracy suite (it measures microseconds, which sanitizers slow
# down) and the checker's self-test (it tests the Python checker; the test
# program it drives runs under the sanitizers in every Vulkan test).
[ -f build-asan/build.ninja ] ||
    meson setup build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
        >/dev/null || exit 1
ninja -C build-asan >/dev/null || exit 1
# intercept_tls_get_addr=0: with the validation layer, libepoxy and lavapipe
# loaded, LeakSanitizer's thread-stopping tracer crashed (signal 11) reading
# dynamically allocated TLS at exit; leaks are still checked.
# Drivers' leaks are not ours: the loader unloads the ICDs and layers, Mesa
# its GL driver, before exit, and LeakSanitizer then reports their leaks from
# "<unknown module>" (Mesa 22.3.6's lavapipe leaks 128 bytes on some
# machines). libgz_lsan_keep.so keeps every library loaded, so each leak's
# stack names its library, and tests/lsan.supp suppresses the drivers' only
# (the lsan suite checks both directions). It is preloaded into every
# process of this stage (it is not instrumented); verify_asan_link_order=0
# lets it come before the sanitizer runtime of the instrumented programs.
LD_PRELOAD="$PWD/build-asan/tests/lsan/libgz_lsan_keep.so${LD_PRELOAD:+:$LD_PRELOAD}" \
ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0:verify_asan_link_order=0" \
LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite clock --no-suite checker \
    --no-suite targets || status=1

# ThreadSanitizer: everything that runs our threads against each other (the
# client's queue and worker, the layer under several app threads, device
# loss, freed command buffers, the load test, a lower layer calling back
# during a submit, sync points and their spinner thread, the OpenCL burst,
# frames on a swapchain, the host programs whose signals, exit() and
# unloading race our threads). Left out: what measures time
# (TSan slows it tenfold), the two programs that exit with threads still
# inside the loader (TSan reports the loader's mutex, with or without us),
# and the SIG_DFL-with-SA_SIGINFO set-up (TSan's own sigaction takes it for
# a handler: the signal is lost with or without us).
# The GL shim runs preloaded into the TSan-built test programs, after the
# TSan runtime (run_gl.py and `gpuzones run` put it first).
[ -f build-tsan/build.ninja ] ||
    meson setup build-tsan -Dwerror=true -Db_sanitize=thread -Db_lundef=false >/dev/null || exit 1
ninja -C build-tsan >/dev/null || exit 1
TSAN_OPTIONS="halt_on_error=1:suppressions=$PWD/tests/tsan.supp" \
    meson test -C build-tsan --print-errorlogs --num-processes 2 \
    unit_calibration unit_queue unit_track_end unit_tracy tracy-listen-capture \
    vk-onetime vk-reuse vk-simultaneous vk-unsubmitted \
    vk-secondary vk-threads vk-submit vk-labels vk-instances vk-timeline-wait \
    rel-device-lost rel-out-of-memory rel-calibration-lost rel-fork-exec rel-free-pending \
    rel-signal-vk-int rel-signal-vk-term rel-signal-gl-int rel-output-fifo-stalled \
    load-million-zones cl-layer cl-macros \
    gl-epoxy-groups gl-epoxy-state gl-direct-groups gl-direct-state gl-epoxy-contexts \
    gl-macros-shim gl-macros-no-shim gl-gpuzones-run gl-glx-groups gl-glx-macros-no-shim \
    rel-reenter rel-batch-3000 vk-fault-families vk-fault-no-calibration-labels \
    vk-present-frames cl-stress-burst countlayer-threads \
    host-exit-race host-plugin-unloaded host-signal-default host-signal-mask \
    host-layers-exit-without-atexit pf-vk-same-run pf-gl-same-run pf-cl-same-run \
    pf-cl-macros || status=1

# libFuzzer (clang): the environment parser, the JSON string writer, the
# Perfetto trace writer and what listen mode reads from a peer on its
# socket, a bounded time each on the committed seed corpus.
[ -f build-fuzz/build.ninja ] ||
    CC=clang meson setup build-fuzz -Dwerror=true -Dfuzz=true -Dtests=false \
        -Db_sanitize=address,undefined -Db_lundef=false >/dev/null || exit 1
ninja -C build-fuzz >/dev/null || exit 1
meson test -C build-fuzz --print-errorlogs --suite fuzz || status=1
exit $status
