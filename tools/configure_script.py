#!/usr/bin/env python3
"""Writes a script from its template with @LAYER_DIR@, @GL_SHIM@ and @CL_LAYER@
(the OpenGL shim's and the OpenCL layer's paths, empty when not built) filled in,
executable (meson's configure_file does not keep the executable bit)."""
import os
import sys

template, output, layer_dir = sys.argv[1:4]
gl_shim = sys.argv[4] if len(sys.argv) > 4 else ""  # the OpenGL shim, if built
cl_layer = sys.argv[5] if len(sys.argv) > 5 else ""  # the OpenCL layer, if built
with open(template) as f:
    text = (f.read().replace("@LAYER_DIR@", layer_dir).replace("@GL_SHIM@", gl_shim)
            .replace("@CL_LAYER@", cl_layer))
with open(output, "w") as f:
    f.write(text)
os.chmod(output, 0o755)
