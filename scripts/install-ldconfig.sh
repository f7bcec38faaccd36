#!/bin/sh
# Run by `meson install` once the files are in place (meson.build), with
# the library directory: a program built against libgpuzones must find
# libgpuzones.so.0 when it starts. In the directories the dynamic linker
# searches it finds libraries through its cache, which a new library joins
# only when ldconfig runs (Debian's meson does not run it). So, where the
# library went into one of those directories, this runs ldconfig (as root)
# or says to; elsewhere it says what such a program needs. A staged install
# (DESTDIR: a package, whose own installation runs ldconfig) is left alone.
set -u
[ -z "${DESTDIR:-}" ] || exit 0
libdir=$1
PATH=$PATH:/sbin:/usr/sbin
command -v ldconfig >/dev/null 2>&1 || exit 0
# The directories ldconfig scans (-N -X: it changes nothing), one a line.
if ldconfig -N -X -v 2>/dev/null | sed -n 's/^\(\/[^:]*\):.*/\1/p' | grep -Fqx "$libdir"; then
    if [ "$(id -u)" = 0 ] && ldconfig; then
        exit 0
    fi
    echo "gpuzones: run 'sudo ldconfig' so that programs built against libgpuzones find" \
         "$libdir/libgpuzones.so.0"
else
    echo "gpuzones: $libdir is not a directory the dynamic linker searches: programs built" \
         "against libgpuzones need LD_LIBRARY_PATH=$libdir (or link with -Wl,-rpath,$libdir)"
fi
