#!/usr/bin/env bash
# bench/footprint.sh: the footprint table of BENCHMARKS.md ("Footprint"):
# stripped sizes of the shared library, the static library and the CLI,
# where the library's bytes go (by object file and by folder), and the peak
# RSS of a 10,000-job run and of an idle waiting worker (bench/edge.c).
#
#   bench/footprint.sh [CONFIG...]      (run from the source tree; the
#                                        cross ones need .ci/cross's packages)
#
# CONFIGs: x86-64 (with hiredis), x86-64-nohiredis, arm64-nohiredis,
# armhf-nohiredis (all four by default). Each builds in
# build-footprint-CONFIG (reused when its stamp is there; FOOTPRINT_FRESH=1
# rebuilds) with the default CFLAGS (-g -O2), shared and static. The ARM
# programs run under qemu-user: their RSS is the emulator's and is printed
# only as such; the heap figures (glibc's mallinfo2) are the program's own.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
configs=${*:-x86-64 x86-64-nohiredis arm64-nohiredis armhf-nohiredis}
[ -x configure ] || ./autogen.sh >/dev/null 2>&1

kib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1024 }'; }

for c in $configs; do
    case $c in
        x86-64) host= flags= ;;
        x86-64-nohiredis) host= flags=--without-hiredis ;;
        arm64-nohiredis) host=aarch64-linux-gnu flags=--without-hiredis ;;
        armhf-nohiredis) host=arm-linux-gnueabihf flags=--without-hiredis ;;
        *) echo "footprint: unknown config $c" >&2; exit 2 ;;
    esac
    dir=$root/build-footprint-$c
    if [ -n "${FOOTPRINT_FRESH:-}" ] || [ ! -f "$dir/footprint.stamp" ]; then
        rm -rf "$dir" && mkdir -p "$dir"
        if [ -n "$host" ]; then
            (cd "$dir" && PKG_CONFIG_LIBDIR=/usr/lib/$host/pkgconfig:/usr/share/pkgconfig \
                ../configure -q --host="$host" $flags >configure.out 2>&1)
        else
            (cd "$dir" && ../configure -q $flags >configure.out 2>&1)
        fi
        (cd "$dir" && make -j2 libemqlite.la emqlite bench/emqlite-edge >build.out 2>&1)
        touch "$dir/footprint.stamp"
    fi
    strip=${host:+$host-}strip
    size=${host:+$host-}size
    tmp=$dir/stripped && mkdir -p "$tmp"
    so=$(ls "$dir"/.libs/libemqlite.so.*.*.* | head -1)
    $strip -o "$tmp/libemqlite.so" "$so"
    $strip --strip-debug -o "$tmp/libemqlite.a" "$dir/.libs/libemqlite.a"
    $strip -o "$tmp/emqlite" "$dir/.libs/emqlite"
    echo "== $c"
    echo "shared_kib=$(kib "$(stat -c %s "$tmp/libemqlite.so")")" \
         "static_kib=$(kib "$(stat -c %s "$tmp/libemqlite.a")")" \
         "cli_kib=$(kib "$(stat -c %s "$tmp/emqlite")")" \
         "needed=$(${host:+$host-}readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ',')"
    # text+data of each object of the shared library (its PIC objects).
    objs=$(find "$dir/storage" "$dir/engine" "$dir/remote" -path '*/.libs/*.o')
    $size $objs | awk 'NR > 1 { n = $6; sub(".*/build-footprint-[^/]*/", "", n);
        sub("/.libs/libemqlite_core_la-", "/", n); print $1 + $2, n }' |
        sort -rn >"$dir/objects.txt"
    awk '{ split($2, p, "/"); f = p[1]; if (f == "engine") f = f "/" p[2];
           s[f] += $1; t += $1 } END { for (f in s) printf "%s %d\n", f, s[f];
           printf "total %d\n", t }' "$dir/objects.txt" | sort -k2 -rn |
        awk '{ printf "  %-18s %5.0f KiB\n", $1, $2 / 1024 }'
    echo "  largest objects (text+data):"
    head -8 "$dir/objects.txt" | awk '{ printf "    %-32s %5.0f KiB\n", $2, $1 / 1024 }'
    run=
    [ -n "$host" ] && run="qemu-$( [ "$host" = aarch64-linux-gnu ] && echo aarch64 || echo arm )-static"
    rm -f "$dir"/edge.db* "$dir"/idle.db*
    echo "  $($run "$dir/bench/emqlite-edge" rss "$dir/edge.db" 10000)"
    echo "  $($run "$dir/bench/emqlite-edge" idle "$dir/idle.db" 2000)"
    [ -n "$host" ] && echo "  (RSS under $run is the emulator's, not the program's)"
done
