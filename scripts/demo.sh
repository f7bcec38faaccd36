#!/bin/sh
# The main job: build gpuzones, run the Vulkan compute sample under the
# layer on lavapipe, and show the summary and the trace file's path.
set -eu
cd "$(dirname "$0")/.."
sh scripts/build.sh >/dev/null
. scripts/env.sh
trace="$(pwd)/gpuzones-demo.json"
echo "gpuzones demo: running build/samples/vk_compute/gz-sample-vk-compute under VK_LAYER_GPUZONES_timing"
build/tools/gpuzones run -o "$trace" -- build/samples/vk_compute/gz-sample-vk-compute
echo "gpuzones demo: open $trace in https://ui.perfetto.dev (or chrome://tracing)"
