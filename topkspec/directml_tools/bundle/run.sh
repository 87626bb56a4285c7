#!/bin/sh
# The entry script of topkspec's portable DirectML bundle (made by `topkspec directml bundle`).
# It runs DirectML.dll and topkspec's worker under the bundle's own Wine, on this machine's
# Vulkan driver, with no Wine installed and no Python needed:
#
#   ./run findings         replay topkspec's two DirectML NaN findings: the rule, what came back
#   ./run corpus [DIR]     replay stored DirectML cases (`topkspec corpus`), exact results checked
#   ./run info             the bundle's versions and the device the worker makes
#   ./run wine PROGRAM...  a Windows program under the bundle's Wine (what topkspec's targets run)
#   ./run xvfb ARGS...     the bundle's X server (Wine's graphics driver needs a display)
#
# Variables: DISPLAY (an X display to use instead of a private Xvfb), TOPKSPEC_DIRECTML_ADAPTER
# (auto, warp, or part of an adapter's name), TOPKSPEC_BUNDLE_HOME (where the Wine prefix is made;
# default $TMPDIR/topkspec-directml-ID-UID), VK_DRIVER_FILES / VK_ICD_FILENAMES (the Vulkan driver).
# Exit codes: 0 all as stored, 1 something not as stored (a finding that reproduces), 2 no device
# or bad usage.
set -u

case "$0" in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
here=$(cd "$here" && pwd -P) || exit 2
bundle_id=$(cat "$here/bundle-id" 2>/dev/null) || bundle_id=unknown
wine_lib="$here/wine/lib/x86_64-linux-gnu/wine"

usage() {
    echo "usage: $0 findings | corpus [DIR] | info | wine PROGRAM [ARGS...] | xvfb [ARGS...]" >&2
    exit 2
}

# -- the environment: the bundle's Wine, the host's libraries first ------------------------------

# A library the host has is the host's (a Vulkan driver may need its newer copy); the bundle's
# copy stands in for each one the host lacks. Links to those live in $home/lib.
host_has() {
    for dir in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /usr/local/lib /lib /usr/lib; do
        [ -e "$dir/$1" ] && return 0
    done
    return 1
}

# The per-user home of this bundle: the Wine prefix (Wine wants one owned by the user) and the
# library links, made once, in a folder of its own and then moved into place.
make_home() {
    uid=$(id -u)
    home=${TOPKSPEC_BUNDLE_HOME:-${TMPDIR:-/tmp}/topkspec-directml-$bundle_id-$uid}
    if [ -f "$home/ready" ] && [ "$(cat "$home/ready")" = "$here" ]; then
        return 0
    fi
    new="$home.new.$$"
    rm -rf "$new"
    mkdir -p "$new/lib" "$new/prefix/dosdevices" "$new/prefix/drive_c/windows/system32/drivers" || exit 2
    cp "$here/prefix/"*.reg "$here/prefix/.update-timestamp" "$new/prefix/" || exit 2
    ln -s ../drive_c "$new/prefix/dosdevices/c:"
    ln -s / "$new/prefix/dosdevices/z:"
    # Wine finds its DLLs through the prefix's system32, as a prefix wineboot made would hold them.
    for dll in "$wine_lib/x86_64-windows/"*; do
        name=${dll##*/}
        case "$name" in
        *.sys) ln -s "$dll" "$new/prefix/drive_c/windows/system32/drivers/$name" ;;
        *) ln -s "$dll" "$new/prefix/drive_c/windows/system32/$name" ;;
        esac
    done
    for lib in "$here/lib/"*; do
        host_has "${lib##*/}" || ln -s "$lib" "$new/lib/${lib##*/}"
    done
    echo "$here" >"$new/ready"
    rm -rf "$home"
    mv "$new" "$home" 2>/dev/null || rm -rf "$new"
}

set_environment() {
    make_home
    export WINEPREFIX="$home/prefix" WINEARCH=win64
    export WINELOADER="$here/wine/lib/wine/wine64" WINESERVER="$here/wine/lib/wine/wineserver64"
    export WINEDEBUG="${WINEDEBUG:--all}" WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
    export VKD3D_CONFIG="${VKD3D_CONFIG:-virtual_heaps}"
    export LD_LIBRARY_PATH="$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # Wine asks fontconfig for fonts; a host with no fontconfig setup gets an empty one, not errors.
    [ -e /etc/fonts/fonts.conf ] || export FONTCONFIG_FILE="${FONTCONFIG_FILE:-$here/fonts.conf}"
    # NVIDIA's container images keep the driver's ICD file under /usr/local/nvidia.
    export XDG_DATA_DIRS="${XDG_DATA_DIRS:-/usr/local/share:/usr/share}:/usr/local/nvidia/share"
}

exec_xvfb() {
    # Xvfb runs xkbcomp from a folder fixed when it was built (/usr/bin); the preloaded
    # xkb_bindir.so points it at the bundle's copy.
    TOPKSPEC_XKB_BINDIR="$here/xvfb/bin" LD_PRELOAD="$here/xvfb/xkb_bindir.so" \
        exec "$here/xvfb/bin/Xvfb" -xkbdir "$here/xvfb/xkb" -extension GLX "$@"
}

# -- a display of its own, for the commands that run the worker once -----------------------------

xvfb_pid=
start_display() {
    [ -n "${DISPLAY:-}" ] && return 0
    number_file="$home/display.$$"
    rm -f "$number_file"
    "$0" xvfb -displayfd 3 -nolisten tcp -screen 0 640x480x24 3>"$number_file" </dev/null >/dev/null 2>"$home/xvfb.log" &
    xvfb_pid=$!
    tries=0
    while [ $tries -lt 100 ]; do
        number=$(cat "$number_file" 2>/dev/null)
        if [ -n "$number" ]; then
            export DISPLAY=":$number"
            rm -f "$number_file"
            return 0
        fi
        kill -0 "$xvfb_pid" 2>/dev/null || break
        sleep 0.2
        tries=$((tries + 1))
    done
    echo "run: the bundle's Xvfb did not start; its log ($home/xvfb.log):" >&2
    cat "$home/xvfb.log" >&2
    exit 2
}

stop_display() {
    # The Wine session (wineserver, explorer) is tied to this display: end it first.
    "$WINESERVER" -k 2>/dev/null
    "$WINESERVER" -w 2>/dev/null
    if [ -n "$xvfb_pid" ]; then
        kill "$xvfb_pid" 2>/dev/null
        wait "$xvfb_pid" 2>/dev/null
    fi
    xvfb_pid=
}

# The worker's replay of a folder of cases (its own verdict lines and summary on standard output).
replay() {
    start_display
    "$WINELOADER" "$here/directml/topk_worker.exe" --dll 'Z:'"$(echo "$here/directml/DirectML.dll" | tr / '\\')" \
        --adapter "${TOPKSPEC_DIRECTML_ADAPTER:-auto}" --metacommand-workaround \
        --replay 'Z:'"$(echo "$1" | tr / '\\')" </dev/null
    code=$?
    stop_display
    return $code
}

# One finding's line of the worker ("NAME.json: what it found"): the case, the rule, what came back.
show_case() {
    name=${1%%.json:*}
    echo
    echo "$name"
    sed -n "s/^$name: /  /p" "$here/cases/findings/expected.txt"
    echo "  actual:   ${1#*.json: }"
    echo "  => the finding $2"
}

# -- the commands ---------------------------------------------------------------------------------

command=${1:-}
[ $# -gt 0 ] && shift
case "$command" in
findings)
    [ $# -eq 0 ] || usage
    set_environment
    echo "topkspec DirectML bundle $bundle_id: the DirectML NaN findings"
    echo "Each case's rule holds whatever the NaN policy (the spec's out.nan.unspecified and"
    echo "out.indices.range_distinct): 'as stored' means DirectML kept it here, 'NOT AS STORED' that the"
    echo "finding reproduces."
    output=$(replay "$here/cases/findings")
    code=$?
    printf '%s\n' "$output" | while IFS= read -r line; do
        case "$line" in
        "as stored "*) show_case "${line#as stored }" "does NOT reproduce on this device" ;;
        "NOT AS STORED "*) show_case "${line#NOT AS STORED }" "reproduces on this device" ;;
        "not judged "*) show_case "${line#not judged }" "was not judged" ;;
        *) echo "$line" ;;
        esac
    done
    exit $code
    ;;
corpus)
    [ $# -le 1 ] || usage
    folder=${1:-$here/cases/corpus}
    [ -d "$folder" ] || { echo "run corpus: no folder $folder" >&2; exit 2; }
    folder=$(cd "$folder" && pwd -P)
    set_environment
    echo "topkspec DirectML bundle $bundle_id: the cases in $folder"
    output=$(replay "$folder")
    code=$?
    # Every line but the cases as stored: the device, what differed or was not judged, the summary.
    printf '%s\n' "$output" | grep -v '^as stored '
    exit $code
    ;;
info)
    [ $# -eq 0 ] || usage
    set_environment
    cat "$here/versions.txt"
    replay "$here/cases/smoke" | sed -n 's/^device: /device: /p'
    ;;
wine)
    [ $# -ge 1 ] || usage
    set_environment
    exec "$WINELOADER" "$@"
    ;;
xvfb)
    set_environment
    exec_xvfb "$@"
    ;;
*)
    usage
    ;;
esac
