#!/bin/sh
# Builds gpuzones and runs every test on Mesa's software drivers: once as
# built, once more under AddressSanitizer + UndefinedBehaviorSanitizer.
# Exits non-zero when any test failed.
set -u
cd "$(dirname "$0")/.."
sh scripts/setup-debian.sh || exit 1
. scripts/env.sh

status=0
sh scripts/build.sh || exit 1
meson test -C build --print-errorlogs --num-processes 2 || status=1

# Sanitized build: the layer, the client and the test programs are
# instrumented (lavapipe and the loader are not). Left out there: the
# clock-accuracy suite (it measures microseconds, which sanitizers slow
# down) and the checker's self-test (it tests the Python checker; the test
# program it drives runs under the sanitizers in every Vulkan test).
[ -f build-asan/build.ninja ] ||
    meson setup build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
        >/dev/null || exit 1
ninja -C build-asan >/dev/null || exit 1
ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite clock --no-suite checker || status=1
exit $status
