#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mkimage.sh OUTDIR GUESTDIR -- build the vcluster guest initramfs.
#
# Produces (each file replaced atomically):
#   OUTDIR/initramfs.cpio.gz   newc cpio, gzip: busybox, our init scripts,
#                              virtio modules, qemu-ga, guest tools
#   OUTDIR/vmlinuz             the kernel matching the shipped modules: by
#                              default its uncompressed ELF image, booted by
#                              QEMU via PVH (see "kernel" below)
#   OUTDIR/kernel-version      its version string (uname -r)
#
# GUESTDIR (all optional):
#   bin/*        guest programs       -> /usr/bin/ (+ their shared libraries)
#   lib/*.so     guest libraries      -> /usr/lib/ (+ theirs; e.g. the
#                LD_PRELOAD socket library libpsock.so)
#   modules/*.ko extra kernel modules -> /lib/modules/extra/ (loaded at boot)
#   firmware/*   firmware files       -> /lib/firmware/
#   rootfs/...   files made at build time (ssh keys) -> the same path
#
# images/packages.list names files of Debian packages to carry as they are
# (Open MPI's plugins, PVM, dropbear, NetPIPE), with their libraries.
#
# Environment overrides (all optional):
#   VC_KVER     kernel version to use (default: the one linux-image-amd64
#               depends on, else the newest /lib/modules/*-amd64 with a
#               matching /boot/vmlinuz-*)
#   VC_BUSYBOX  static busybox binary      (default /bin/busybox)
#   VC_QEMU_GA  qemu guest agent binary    (default /usr/sbin/qemu-ga)
#   VC_KERNEL_FORMAT  elf (default) or bzimage: what OUTDIR/vmlinuz is
#   VC_PACKAGES package list           (default images/packages.list)
#   SOURCE_DATE_EPOCH  mtime stored for every file (default 0)
#
# See docs/guest-image.md.
set -eu

PROG=mkimage.sh
die() { echo "$PROG: error: $*" >&2; exit 1; }
warn() { echo "$PROG: warning: $*" >&2; }

[ $# -eq 2 ] || { echo "usage: $PROG OUTDIR GUESTDIR" >&2; exit 2; }
OUTDIR=$1
GUESTDIR=$2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOTFS_SRC=$HERE/rootfs
# Base kernel modules; everything they depend on is added from modules.dep.
# qemu_fw_cfg shows QEMU's -fw_cfg files under /sys/firmware/qemu_fw_cfg/
# (vcluster hands the myrinet route table over that way).
BASE_MODULES="virtio_pci virtio_net virtio_console qemu_fw_cfg"
EPOCH=${SOURCE_DATE_EPOCH:-0}
export LC_ALL=C
umask 022   # the modes in the image do not depend on the caller's

# ---------------------------------------------------------------- inputs ---
BUSYBOX=${VC_BUSYBOX:-/bin/busybox}
QEMU_GA=${VC_QEMU_GA:-/usr/sbin/qemu-ga}

for tool in cpio gzip ldd awk sort find; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "'$tool' not found (needed to build the image); run: make deps"
done

[ -x "$BUSYBOX" ] ||
    die "busybox not found at $BUSYBOX (Debian package busybox-static); run: make deps"
if ldd "$BUSYBOX" >/dev/null 2>&1; then
    die "$BUSYBOX is dynamically linked; the image needs the static one (Debian package busybox-static); run: make deps"
fi
[ -x "$QEMU_GA" ] ||
    die "qemu guest agent not found at $QEMU_GA (Debian package qemu-guest-agent); run: make deps"
[ -f "$ROOTFS_SRC/etc/inittab" ] || die "missing $ROOTFS_SRC/etc/inittab"
[ -d "$GUESTDIR" ] || warn "$GUESTDIR does not exist: no guest tools, extra modules or firmware"

# Kernel version: the one the linux-image-amd64 meta package points at, if
# its modules and image are here; else the newest complete */lib/modules/*-amd64.
kernel_ok() { [ -n "$1" ] && [ -f "/lib/modules/$1/modules.dep" ] && [ -f "/boot/vmlinuz-$1" ]; }
KVER=${VC_KVER:-}
if [ -n "$KVER" ]; then
    kernel_ok "$KVER" ||
        die "VC_KVER=$KVER: need /boot/vmlinuz-$KVER and /lib/modules/$KVER/modules.dep"
else
    if command -v dpkg-query >/dev/null 2>&1; then
        KVER=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
               tr ',|' '\n\n' | sed -n 's/^ *linux-image-\([^ ]*\).*/\1/p' |
               head -n 1) || KVER=
        # linux-image-6.1.0-56-amd64 -> 6.1.0-56-amd64 ; ignore "-unsigned" variants
        KVER=${KVER%-unsigned}
    fi
    if ! kernel_ok "$KVER"; then
        KVER=
        for d in $(ls -d /lib/modules/*-amd64 2>/dev/null | sort -V -r); do
            v=${d##*/}
            if kernel_ok "$v"; then KVER=$v; break; fi
        done
    fi
    [ -n "$KVER" ] ||
        die "no usable kernel: need /boot/vmlinuz-<ver> and /lib/modules/<ver>/modules.dep (Debian package linux-image-amd64); run: make deps"
fi
[ -r "/boot/vmlinuz-$KVER" ] ||
    die "/boot/vmlinuz-$KVER is not readable (run as root or chmod a+r it)"
KMODDIR=/lib/modules/$KVER

# --------------------------------------------------------------- staging ---
mkdir -p "$OUTDIR"
STAGE=$(mktemp -d "$OUTDIR/.mkimage.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
trap 'exit 130' INT TERM HUP
R=$STAGE/root
mkdir -p "$R"

for d in bin sbin usr/bin usr/sbin lib lib/modules/extra lib/firmware \
         etc dev proc sys run tmp root mnt var var/tmp var/log; do
    mkdir -p "$R/$d"
done
ln -s ../run "$R/var/run"
chmod 1777 "$R/tmp" "$R/var/tmp"
chmod 0700 "$R/root"

# busybox and its applet links (relative, so they work from any root)
cp "$BUSYBOX" "$R/bin/busybox"
chmod 0755 "$R/bin/busybox"
"$BUSYBOX" --list-full | while IFS= read -r app; do
    # relative target: usr/bin/x -> ../../bin/busybox, linuxrc -> bin/busybox
    case $app in
        ''|bin/busybox) continue ;;
        */*/*/*) continue ;;                 # busybox never uses such paths
        */*/*) dir=${app%/*}; up=../../ ;;
        */*)   dir=${app%/*}; up=../ ;;
        *)     dir=.;         up= ;;
    esac
    [ -d "$R/$dir" ] || mkdir -p "$R/$dir"
    [ -e "$R/$app" ] || [ -L "$R/$app" ] || ln -s "${up}bin/busybox" "$R/$app"
done
[ -L "$R/sbin/init" ] || die "busybox at $BUSYBOX has no init applet"
# the kernel runs /init from an initramfs: make it busybox init
ln -s bin/busybox "$R/init"

# our files: init scripts, inittab, /etc skeleton (may override applet links)
(cd "$ROOTFS_SRC" && find . -mindepth 1 \( -type f -o -type l \) | sort) |
while IFS= read -r f; do
    f=${f#./}
    mkdir -p "$R/$(dirname "$f")"
    rm -f "$R/$f"
    cp -P "$ROOTFS_SRC/$f" "$R/$f"
    [ -L "$R/$f" ] && continue
    case $f in
        bin/*|sbin/*|usr/bin/*|usr/sbin/*) chmod 0755 "$R/$f" ;;
        *) chmod 0644 "$R/$f" ;;
    esac
done

# ------------------------------------------------- ELF programs + libraries ---
# copy_libs FILE: copy every shared object ldd lists for FILE (and the dynamic
# loader) into the image, at the path ldd prints. Static binaries and scripts
# are accepted as they are.
LIBLIST=$STAGE/libs
: > "$LIBLIST"
copy_libs() {
    out=$(ldd "$1" 2>&1) || {
        case $out in
            *"not a dynamic executable"*|*"statically linked"*) return 0 ;;
        esac
        # ldd fails on scripts too; only complain about ELF files
        if [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; then
            die "ldd $1 failed: $out"
        fi
        return 0
    }
    missing=$(echo "$out" | awk '/=> not found/ { print $1 }')
    [ -z "$missing" ] || die "$1 needs libraries not found on this host: $(echo "$missing" | tr '\n' ' ')"
    echo "$out" | awk '
        $2 == "=>" { if ($3 ~ /^\//) print $3; next }
        $1 ~ /^\// { print $1 }' >> "$LIBLIST"
}

install_bin() { # SRC DEST-in-image
    mkdir -p "$R/$(dirname "$2")"
    cp -L "$1" "$R/$2"
    chmod 0755 "$R/$2"
    copy_libs "$1"
}

install_bin "$QEMU_GA" /usr/sbin/qemu-ga
if [ -d "$GUESTDIR/bin" ]; then
    for f in "$GUESTDIR"/bin/*; do
        [ -f "$f" ] || continue
        install_bin "$f" "/usr/bin/${f##*/}"
        # guest tools are built with -g: keep the image small
        if command -v strip >/dev/null 2>&1 &&
           [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
            strip --strip-debug "$R/usr/bin/${f##*/}" 2>/dev/null || true
        fi
    done
fi
if [ -d "$GUESTDIR/lib" ]; then
    for f in "$GUESTDIR"/lib/*.so; do
        [ -f "$f" ] || continue
        install_bin "$f" "/usr/lib/${f##*/}"
        chmod 0644 "$R/usr/lib/${f##*/}"
        if command -v strip >/dev/null 2>&1; then
            strip --strip-debug "$R/usr/lib/${f##*/}" 2>/dev/null || true
        fi
    done
fi
# glibc dlopen()s libgcc_s for pthread_cancel and backtrace(); ship it.
if [ -f /lib/x86_64-linux-gnu/libgcc_s.so.1 ]; then
    echo /lib/x86_64-linux-gnu/libgcc_s.so.1 >> "$LIBLIST"
fi

# ------------------------------------------------------ Debian packages ---
# Files of installed packages that ldd does not find (plugins loaded with
# dlopen, data files, programs), named in images/packages.list: each one at
# its own path, with its libraries. Paths come from dpkg, so the image holds
# exactly what the host's packages hold.
PKGLIST=${VC_PACKAGES:-$HERE/packages.list}
if [ -f "$PKGLIST" ]; then
    command -v dpkg-query >/dev/null 2>&1 ||
        die "dpkg-query not found: $PKGLIST needs Debian's package database"
    PKGFILES=$STAGE/pkgfiles
    : > "$PKGFILES"
    # pkg_match PATH PATTERN...: PATH matches a pattern and no !pattern
    pkg_match() {
        _p=$1; shift; _hit=1
        for _pat; do
            case $_pat in
                !*) case $_p in ${_pat#!}) return 1 ;; esac ;;
                *)  case $_p in $_pat) _hit=0 ;; esac ;;
            esac
        done
        return $_hit
    }
    set -f   # the patterns are for case, not for the build host's files
    # one line per package, its patterns gathered from all its lines
    awk '$1 !~ /^(#|$)/ { if (!($1 in pats)) order[n++] = $1
                         for (i = 2; i <= NF; i++) pats[$1] = pats[$1] " " $i }
         END { for (i = 0; i < n; i++) print order[i] pats[order[i]] }' \
        "$PKGLIST" > "$STAGE/pkglines"
    while read -r pkg pats; do
        if [ "$pkg" = alternative ]; then
            for a in $pats; do
                case $(readlink "$a") in
                    /etc/alternatives/*) echo "$a" >> "$PKGFILES" ;;
                    *) die "$PKGLIST: $a is not a Debian alternative on this host; run: make deps" ;;
                esac
            done
            continue
        fi
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
            die "package $pkg is not installed (needed by $PKGLIST); run: make deps"
        n=0
        for f in $(dpkg-query -L "$pkg"); do
            [ -d "$f" ] && [ ! -L "$f" ] && continue
            pkg_match "$f" $pats || continue
            echo "$f" >> "$PKGFILES"
            n=$((n + 1))
        done
        [ "$n" -gt 0 ] || die "$PKGLIST: no file of $pkg matches:$pats"
    done < "$STAGE/pkglines"
    set +f
    # pkg_copy PATH: the host's file at the same path in the image; a
    # symlink is copied as it is, and its target too (link chains through
    # /etc/alternatives included)
    pkg_copy() {
        _p=$1
        while [ ! -e "$R$_p" ] && [ ! -L "$R$_p" ]; do
            mkdir -p "$R${_p%/*}"
            if [ -L "$_p" ]; then
                cp -P "$_p" "$R$_p"
                _t=$(readlink "$_p")
                case $_t in /*) ;; *) _t=${_p%/*}/$_t ;; esac
                _p=$(realpath -m -s "$_t")
            elif [ -f "$_p" ]; then
                cp "$_p" "$R$_p"
                if [ -x "$_p" ]; then chmod 0755 "$R$_p"; else chmod 0644 "$R$_p"; fi
                if [ "$(head -c 4 "$_p" | od -An -c | tr -d ' ')" = '177ELF' ]; then
                    copy_libs "$_p"
                fi
            else
                die "$_p (from $PKGLIST) is missing on this host; run: make deps"
            fi
        done
    }
    for f in $(sort -u "$PKGFILES"); do pkg_copy "$f"; done
fi

sort -u "$LIBLIST" | while IFS= read -r lib; do
    [ -e "$R$lib" ] && continue
    mkdir -p "$R$(dirname "$lib")"
    cp -L "$lib" "$R$lib"
done

# ------------------------------------------------------------- modules ---
# The guest loads the modules listed in /lib/modules/load-order, in order,
# with busybox insmod (dependencies first). Compressed modules are
# decompressed here: the kernel and busybox insmod then need no decompressor.
ORDER=$STAGE/load-order
: > "$ORDER"

modname() { # path -> module name (dashes as underscores)
    n=${1##*/}
    n=${n%.xz}; n=${n%.zst}; n=${n%.gz}; n=${n%.ko}
    echo "$n" | tr - _
}

# kmod_chain NAME: print kernel module paths (relative to $KMODDIR), the
# dependencies first, NAME last. modules.dep lists deps so that loading them
# in reverse order is correct.
kmod_chain() {
    awk -v want="$1" '
        function norm(p) { sub(/.*\//, "", p); sub(/\.ko(\.(xz|zst|gz))?$/, "", p); gsub(/-/, "_", p); return p }
        { p = $1; sub(/:$/, "", p)
          if (norm(p) == want) { for (i = NF; i >= 2; i--) print $i; print p; found = 1; exit } }
        END { exit found ? 0 : 1 }' "$KMODDIR/modules.dep"
}

add_kmod() { # NAME -> append its chain to $ORDER as image paths
    chain=$(kmod_chain "$1") ||
        die "kernel module '$1' not found in $KMODDIR/modules.dep (is it built in or missing from linux-image-$KVER?)"
    for rel in $chain; do
        src=$KMODDIR/$rel
        [ -f "$src" ] || die "$src listed in modules.dep but missing"
        dst=${rel%.xz}; dst=${dst%.zst}; dst=${dst%.gz}
        if [ ! -f "$R$KMODDIR/$dst" ]; then
            mkdir -p "$R$KMODDIR/$(dirname "$dst")"
            case $rel in
                *.ko)     cp "$src" "$R$KMODDIR/$dst" ;;
                *.ko.xz)  xz -dc "$src" > "$R$KMODDIR/$dst" ||
                              die "cannot decompress $src (need xz-utils)" ;;
                *.ko.zst) zstd -q -dc "$src" > "$R$KMODDIR/$dst" ||
                              die "cannot decompress $src (need zstd)" ;;
                *.ko.gz)  gzip -dc "$src" > "$R$KMODDIR/$dst" ;;
                *) die "unknown module format: $src" ;;
            esac
        fi
        echo "$KMODDIR/$dst" >> "$ORDER"
    done
}

for m in $BASE_MODULES; do add_kmod "$m"; done

# Extra modules (GUESTDIR/modules/*.ko): dependencies come from the module's
# own .modinfo "depends" (via modinfo), resolved against the other extra
# modules first, then the kernel's modules.dep.
EXTRA_DIR=$GUESTDIR/modules
EXTRA_SEEN=" "
if ls "$EXTRA_DIR"/*.ko >/dev/null 2>&1; then
    command -v modinfo >/dev/null 2>&1 ||
        die "modinfo not found (Debian package kmod), needed for $EXTRA_DIR/*.ko; run: make deps"
fi
EXTRA_MAP=$STAGE/extra-map   # "name path" per extra module
: > "$EXTRA_MAP"
if [ -d "$EXTRA_DIR" ]; then
    for ef in "$EXTRA_DIR"/*.ko; do
        [ -f "$ef" ] || continue
        # the module's own name (modinfo "name", kernel >= 5.x), else the file's
        n=$(modinfo -F name "$ef" 2>/dev/null | tr - _)
        [ -n "$n" ] || n=$(modname "$ef")
        echo "$n $ef" >> "$EXTRA_MAP"
    done
fi
extra_path() { # NAME -> path of the extra module of that name, if any
    awk -v n="$1" '$1 == n { print $2; found = 1; exit } END { exit !found }' "$EXTRA_MAP"
}
visit_extra() { # PATH
    case $EXTRA_SEEN in *" $1 "*) return 0 ;; esac
    EXTRA_SEEN="$EXTRA_SEEN$1 "
    vm=$(modinfo -F vermagic "$1" 2>/dev/null | awk '{ print $1 }')
    [ "$vm" = "$KVER" ] ||
        warn "$1 was built for kernel '$vm', the image boots $KVER: it will not load"
    deps=$(modinfo -F depends "$1" 2>/dev/null | tr ',' ' ')
    # Shell variables are global and visit_extra recurses, but positional
    # parameters are per call: keep the deps and (last) this module there.
    # shellcheck disable=SC2086 # split the list on purpose
    set -- $deps "$1"
    while [ $# -gt 1 ]; do
        d=$(echo "$1" | tr - _)
        if p=$(extra_path "$d"); then
            visit_extra "$p"
        else
            add_kmod "$d"
        fi
        shift
    done
    cp "$1" "$R/lib/modules/extra/${1##*/}"
    echo "/lib/modules/extra/${1##*/}" >> "$ORDER"
}
if [ -d "$EXTRA_DIR" ]; then
    for f in $(ls "$EXTRA_DIR"/*.ko 2>/dev/null | sort); do
        visit_extra "$f"
    done
fi
awk '!seen[$0]++' "$ORDER" > "$R/lib/modules/load-order"
# ship modules.dep-style data for busybox modprobe too (interactive use)
if [ -f "$KMODDIR/modules.builtin" ]; then
    cp "$KMODDIR/modules.builtin" "$R$KMODDIR/modules.builtin"
fi
if command -v depmod >/dev/null 2>&1; then
    depmod -b "$R" "$KVER" 2>/dev/null || warn "depmod failed; modprobe will not work in the guest (insmod does)"
fi

# ------------------------------------------------------------- firmware ---
if [ -d "$GUESTDIR/firmware" ]; then
    cp -R -L "$GUESTDIR/firmware/." "$R/lib/firmware/"
fi

# ----------------------------------------------------- generated files ---
# GUESTDIR/rootfs/: files made at build time (ssh keys), at the same path in
# the image, each with its own mode (a private key stays 0600)
if [ -d "$GUESTDIR/rootfs" ]; then
    (cd "$GUESTDIR/rootfs" && find . \( -type f -o -type l \) | sort) |
    while IFS= read -r f; do
        f=${f#./}
        mkdir -p "$R/$(dirname "$f")"
        rm -f "$R/$f"
        cp -P --preserve=mode "$GUESTDIR/rootfs/$f" "$R/$f"
    done
fi

# ------------------------------------------------------------ metadata ---
{
    echo "VC_IMAGE_KERNEL=$KVER"
    echo "VC_IMAGE_MODULES=\"$(sed 's|.*/||; s|\.ko$||' "$R/lib/modules/load-order" | tr '\n' ' ' | sed 's/ $//')\""
} > "$R/etc/vcluster-image"

# ---------------------------------------------------------------- pack ---
# Fixed mtimes and owner, sorted names: same inputs give the same archive.
find "$R" -exec touch -h -d "@$EPOCH" {} + 2>/dev/null ||
    find "$R" -exec touch -h -t 197001010000 {} +

# newc entry for the /dev/console character device (5,1), appended as a
# second archive so building needs no root (mknod). The kernel opens it for
# PID 1's stdin/stdout/stderr before anything is mounted.
newc_hdr() { # NAME MODE RDEVMAJ RDEVMIN
    namesize=$(( ${#1} + 1 ))
    printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
        0 "$2" 0 0 1 "$EPOCH" 0 0 0 "$3" "$4" "$namesize" 0
    printf '%s\000' "$1"
    pad=$(( (4 - (110 + namesize) % 4) % 4 ))
    while [ "$pad" -gt 0 ]; do printf '\000'; pad=$((pad - 1)); done
}

IMG=$STAGE/initramfs.cpio.gz
{
    (cd "$R" && find . -mindepth 1 | sed 's|^\./||' | sort |
        cpio -o -H newc -R 0:0 --reproducible --quiet)
    newc_hdr dev/console $((0020600)) 5 1
    newc_hdr TRAILER!!! 0 0 0
} | gzip -n -6 > "$IMG"

# ---------------------------------------------------------------- kernel ---
# By default OUTDIR/vmlinuz is the *uncompressed* kernel (ELF vmlinux, taken
# out of the bzImage), which QEMU boots through its PVH entry point: this
# skips the in-guest XZ decompression, ~4-5 s under TCG. VC_KERNEL_FORMAT=
# bzimage (or a kernel without CONFIG_PVH, or no decompressor) gives a plain
# copy of /boot/vmlinuz-$KVER. Either works with qemu -kernel.
KSRC=/boot/vmlinuz-$KVER
KFORMAT=${VC_KERNEL_FORMAT:-elf}
case $KFORMAT in elf|bzimage) ;; *) die "VC_KERNEL_FORMAT must be elf or bzimage" ;; esac
if [ "$KFORMAT" = elf ] && ! grep -q '^CONFIG_PVH=y' "/boot/config-$KVER" 2>/dev/null; then
    warn "kernel $KVER has no CONFIG_PVH (or /boot/config-$KVER is missing): shipping the bzImage"
    KFORMAT=bzimage
fi
KSTAMP="$KVER $KFORMAT $(wc -c < "$KSRC") $(date -r "$KSRC" +%s)"

extract_vmlinux() { # BZIMAGE OUT: succeed if OUT is the ELF kernel
    # boot protocol header: setup_sects @0x1f1, payload_offset @0x248,
    # payload_length @0x24c; the payload follows the setup sectors
    ss=$(od -An -tu1 -j 497 -N 1 "$1" | tr -d ' ')
    po=$(od -An -tu4 -j 584 -N 4 "$1" | tr -d ' ')
    pl=$(od -An -tu4 -j 588 -N 4 "$1" | tr -d ' ')
    [ -n "$ss" ] && [ -n "$po" ] && [ -n "$pl" ] && [ "$pl" -gt 0 ] || return 1
    [ "$ss" -ne 0 ] || ss=4
    off=$(( (ss + 1) * 512 + po ))
    magic=$(tail -c +$((off + 1)) "$1" | head -c 4 | od -An -tx1 | tr -d ' ')
    case $magic in
        fd377a58) dec="xz -dc --single-stream" ;;
        1f8b*)    dec="gzip -dc" ;;
        28b52ffd) dec="zstd -dcq" ;;
        *) return 1 ;;
    esac
    command -v "${dec%% *}" >/dev/null 2>&1 || return 1
    # the payload ends with a 4-byte size, which the decompressors ignore
    tail -c +$((off + 1)) "$1" | head -c "$pl" | $dec > "$2" 2>/dev/null || true
    [ "$(head -c 4 "$2" | od -An -c | tr -d ' ')" = '177ELF' ]
}

if [ -f "$OUTDIR/vmlinuz" ] && [ "$(cat "$OUTDIR/.vmlinuz.stamp" 2>/dev/null)" = "$KSTAMP" ]; then
    : # up to date
elif [ "$KFORMAT" = elf ] && extract_vmlinux "$KSRC" "$STAGE/vmlinuz"; then
    echo "$KSTAMP" > "$STAGE/.vmlinuz.stamp"
else
    if [ "$KFORMAT" = elf ]; then
        warn "cannot extract the ELF kernel from $KSRC (need xz-utils for XZ kernels): shipping the bzImage"
        KSTAMP="$KVER bzimage $(wc -c < "$KSRC") $(date -r "$KSRC" +%s)"
    fi
    cp "$KSRC" "$STAGE/vmlinuz"
    echo "$KSTAMP" > "$STAGE/.vmlinuz.stamp"
fi
echo "$KVER" > "$STAGE/kernel-version"

# atomic replace; the initramfs last, since make tracks it
for f in vmlinuz .vmlinuz.stamp kernel-version initramfs.cpio.gz; do
    [ -f "$STAGE/$f" ] || continue
    if [ "$f" = kernel-version ] && cmp -s "$STAGE/$f" "$OUTDIR/$f"; then
        continue
    fi
    mv -f "$STAGE/$f" "$OUTDIR/$f"
done

size=$(wc -c < "$OUTDIR/initramfs.cpio.gz")
echo "$PROG: $OUTDIR/initramfs.cpio.gz ($((size / 1024)) KiB), kernel $KVER ($(sed 's/^[^ ]* \([^ ]*\).*/\1/' "$OUTDIR/.vmlinuz.stamp")), modules: $(sed 's|.*/||; s|\.ko$||' "$R/lib/modules/load-order" | tr '\n' ' ')"
