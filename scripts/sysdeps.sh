#!/usr/bin/env bash
# Installs the Debian packages the project needs when they are missing: gfortran (the judge's
# Fortran deliveries), OpenBLAS, PostgreSQL,
# bubblewrap (the judge's box), libseccomp (its system-call filter), linux-perf and PAPI (/profile's
# counters: libpapi-dev, and papi-tools for papi_avail, which lists what the machine counts),
# libffi's header (the box runner's loop in C calls a kernel of any signature through libffi, the
# library ctypes itself calls through) and Chromium (the headless browser the explorer's and the
# results page's tests drive).
set -u
need=()
command -v gfortran >/dev/null || need+=(gfortran)
[ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ] || need+=(libopenblas-dev)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
command -v bwrap >/dev/null || need+=(bubblewrap)
compgen -G "/usr/lib/*/libseccomp.so.2" >/dev/null || need+=(libseccomp2)
command -v perf >/dev/null || need+=(linux-perf)
[ -e /usr/include/papi.h ] || need+=(libpapi-dev)
command -v papi_avail >/dev/null || need+=(papi-tools)
compgen -G "/usr/include/*/ffi.h" >/dev/null || [ -e /usr/include/ffi.h ] || need+=(libffi-dev)
command -v chromium >/dev/null || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "sysdeps: missing ${need[*]}; install them (tests that need them will skip and say why)" >&2
    exit 0
fi
echo "sysdeps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || echo "sysdeps: apt-get could not install ${need[*]}" >&2
exit 0
