# Sourced on a bare NVIDIA machine, in the repository root, with .gl/ and
# build/ carried (scripts/device/fetch-loaders.sh; a build from
# scripts/build.sh). Puts the NVIDIA drivers behind the paths the tests
# name for Mesa's and pocl's, so the registered tests run unchanged:
#   . scripts/device/nvidia-env.sh
#   python3 scripts/device/run_tests.py tests.json OUT 'vk-*' 'gl-epoxy-*' ...
# (tests.json: `meson introspect build --tests`, written before the trip).
# It overwrites lavapipe's manifest and moves OpenCL vendor files aside:
# only on a machine that has no Mesa Vulkan driver to lose.
lvp=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
if [ -f "$lvp" ] && ! grep -q nvidia "$lvp"; then
    echo "gpuzones: nvidia-env.sh: $lvp is Mesa's; this script is for a bare GPU machine only" >&2
    return 1 2>/dev/null || exit 1
fi
for f in .gl/*.deb; do
    case $f in
    *libx11* | *libxcb* | *libxau* | *libxdmcp* | *libxext* | *libbsd* | *libmd0*)
        # the image's own X libraries are newer: only where it has none
        n=$(dpkg-deb -c "$f" | grep -o 'lib[A-Za-z0-9_-]*\.so\.[0-9]*$' | head -1)
        ldconfig -p | grep -q "$n" || dpkg -x "$f" / ;;
    *) dpkg -x "$f" / ;;
    esac
done
ldconfig
nv=/usr/local/nvidia
icd=$(ls $nv/share/vulkan/icd.d/nvidia_icd*.json /usr/share/vulkan/icd.d/nvidia_icd*.json 2>/dev/null | head -1)
echo "gpuzones device: Vulkan ICD $icd"
# the tests pin VK_ICD_FILENAMES to lavapipe's manifest: on this machine it
# names NVIDIA's driver
mkdir -p /usr/share/vulkan/icd.d && cp "$icd" /usr/share/vulkan/icd.d/lvp_icd.x86_64.json
export __EGL_VENDOR_LIBRARY_FILENAMES=$(ls $nv/share/glvnd/egl_vendor.d/*nvidia*.json | head -1)
# OpenCL: NVIDIA's platform alone, through ocl-icd (CUDA's libOpenCL comes
# first in the linker cache and does not load OPENCL_LAYERS)
mkdir -p /etc/OpenCL/vendors /tmp/vendors-off
for v in /etc/OpenCL/vendors/*.icd; do [ "$v" = /etc/OpenCL/vendors/nvidia.icd ] || mv "$v" /tmp/vendors-off/ 2>/dev/null; done
echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_PRELOAD=$(ls /lib/x86_64-linux-gnu/libOpenCL.so.1 /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 2>/dev/null | head -1)
# the build directory names its source directory by absolute path
src=$(python3 -c 'import json; print(json.load(open("build/meson-info/meson-info.json"))["directories"]["source"])')
[ "$src" = "$PWD" ] || { mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"; }
nvidia-smi -L
