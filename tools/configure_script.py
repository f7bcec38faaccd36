#!/usr/bin/env python3
"""Writes a script from its template with @LAYER_DIR@ (and @CL_LAYER@, the
OpenCL layer's path, empty when not given) filled in, executable (meson's
configure_file does not keep the executable bit)."""
import os
import sys

template, output, layer_dir = sys.argv[1:4]
cl_layer = sys.argv[4] if len(sys.argv) > 4 else ""
with open(template) as f:
    text = f.read().replace("@LAYER_DIR@", layer_dir).replace("@CL_LAYER@", cl_layer)
with open(output, "w") as f:
    f.write(text)
os.chmod(output, 0o755)
