#!/usr/bin/env python3
"""Writes a script from its template with @LAYER_DIR@ (and @GL_SHIM@) filled in, executable
(meson's configure_file does not keep the executable bit)."""
import os
import sys

template, output, layer_dir = sys.argv[1:4]
gl_shim = sys.argv[4] if len(sys.argv) > 4 else ""  # the OpenGL shim, if built
with open(template) as f:
    text = f.read().replace("@LAYER_DIR@", layer_dir).replace("@GL_SHIM@", gl_shim)
with open(output, "w") as f:
    f.write(text)
os.chmod(output, 0o755)
