#!/bin/sh
# Run here (Debian 12, with network): downloads into .gl/ the loaders a bare
# GPU machine lacks (Vulkan, glvnd EGL/GL/GLES, libepoxy, ocl-icd, the
# validation layer, X client libraries for glvnd's libGL). .gl/ travels to
# the machine as a carried, git-ignored folder; see docs/DRIVERS.md.
set -e
cd "$(dirname "$0")/../.."
grep -qx '/.gl/' .git/info/exclude || echo /.gl/ >> .git/info/exclude
mkdir -p .gl /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
apt-get $o update >/dev/null
cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 \
    libepoxy0 ocl-icd-libopencl1 vulkan-validationlayers \
    libx11-6 libxcb1 libxau6 libxdmcp6 libxext6 libbsd0 libmd0
