#!/bin/bash
# The root file system of esi's Debian cloud image (src/osimage/debian.ts runs this script; its
# contents are part of the image's cache key).
#
# Runs as root inside a private mount namespace (`unshare --mount --propagation private`), so
# every mount it makes (debootstrap's /proc and /sys, ours for the chroot) disappears with the
# process, even when it is killed: nothing stays mounted under the work directory.
#
# Environment (all required):
#   ESI_ROOT             empty directory to build the tree in (under the cache directory)
#   ESI_SUITE            Debian suite, e.g. bookworm
#   ESI_MIRROR           Debian mirror, e.g. http://deb.debian.org/debian
#   ESI_SECURITY_MIRROR  security mirror, e.g. http://deb.debian.org/debian-security
#   ESI_PACKAGES         packages to install (space separated), without recommends
#   ESI_DATASOURCES      cloud-init datasource list, e.g. "ConfigDrive, NoCloud, None"
#   ESI_MANIFEST         file to write the installed packages to (`dpkg-query -W` format)
#   ESI_FSTAB            the image's /etc/fstab (written before the kernel is installed, so
#                        that the initramfs carries fsck for the root file system's type)
#
# What it does: debootstrap --variant=minbase; sources for the suite, -updates and -security;
# full-upgrade; install the packages; configure (cloud-init, SSH host keys, hostname, apt and
# dpkg without docs/man/locales); slim (docs, man pages, translations, apt lists and caches,
# logs, machine-id, SSH host keys, the build host's resolv.conf). The boot loader, fstab and the
# disk itself are made by src/osimage/disk.ts from the tree.
set -euo pipefail

: "${ESI_ROOT:?}" "${ESI_SUITE:?}" "${ESI_MIRROR:?}" "${ESI_SECURITY_MIRROR:?}" "${ESI_PACKAGES:?}" "${ESI_DATASOURCES:?}" "${ESI_MANIFEST:?}" "${ESI_FSTAB:?}"
R=$ESI_ROOT
export LC_ALL=C.UTF-8 LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

step() { echo "== $*"; }
in_root() { chroot "$R" "$@"; }

step "debootstrap ${ESI_SUITE} (minbase) from ${ESI_MIRROR}"
debootstrap --variant=minbase --components=main "$ESI_SUITE" "$R" "$ESI_MIRROR"

step "chroot mounts (private to this mount namespace)"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --rbind /dev "$R/dev"
mount --make-rslave "$R/dev"
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"

# No service starts inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
# Name resolution for apt while building only (removed below).
rm -f "$R/etc/resolv.conf"
cp -L /etc/resolv.conf "$R/etc/resolv.conf"

# Packages installed from now on leave out documentation, man pages and translations (the
# copyright files stay); the same rules keep applying to packages installed on the node later.
cat >"$R/etc/dpkg/dpkg.cfg.d/01-esi-nodoc" <<'EOF'
# esi image: no documentation, man pages, info pages or translations.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF

rm -f "$R/etc/apt/sources.list"
cat >"$R/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: ${ESI_MIRROR}
Suites: ${ESI_SUITE} ${ESI_SUITE}-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${ESI_SECURITY_MIRROR}
Suites: ${ESI_SUITE}-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF

printf '%s' "$ESI_FSTAB" >"$R/etc/fstab"

step "apt-get update, full-upgrade, install: ${ESI_PACKAGES}"
apt_get() { in_root apt-get -y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"; }
apt_get update
apt_get full-upgrade
# shellcheck disable=SC2086
apt_get install --no-install-recommends $ESI_PACKAGES

step "configure"
echo debian >"$R/etc/hostname"
cat >"$R/etc/hosts" <<'EOF'
127.0.0.1	localhost
::1		localhost ip6-localhost ip6-loopback
ff02::1		ip6-allnodes
ff02::2		ip6-allrouters
EOF

cat >"$R/etc/cloud/cloud.cfg.d/95-esi.cfg" <<EOF
# esi image (src/osimage/debian-rootfs.sh): esi deploys it with a config drive (label config-2)
# holding openstack/latest/{meta_data.json,user_data,network_data.json}. Without any of these
# datasources, ds-identify turns cloud-init off for the boot (SSH host keys then come from
# esi-ssh-host-keys.service).
datasource_list: [ ${ESI_DATASOURCES} ]
# /etc/hosts names the host given by the config drive's meta_data (sudo resolves it).
manage_etc_hosts: true
# Grow the root partition and file system into the rest of the disk on first boot.
growpart:
  mode: auto
  devices: ['/']
resize_rootfs: true
# C.UTF-8 is built into glibc: nothing to generate (cloud-init's Debian default, en_US.UTF-8,
# would need the locale generated first).
locale: C.UTF-8
EOF
echo LANG=C.UTF-8 >"$R/etc/default/locale"

# sshd refuses to start without host keys: cloud-init makes them on first boot; when it does
# not run (no datasource), this unit makes the missing ones.
cat >"$R/etc/systemd/system/esi-ssh-host-keys.service" <<'EOF'
[Unit]
Description=Generate missing SSH host keys (esi image)
After=cloud-init.service
Before=ssh.service

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A

[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/esi-ssh-host-keys.service "$R/etc/systemd/system/multi-user.target.wants/esi-ssh-host-keys.service"

mkdir -p "$R/boot/efi"
# systemd's serial getty on ttyS0 comes from the kernel command line (console=ttyS0,115200).

step "manifest"
in_root dpkg-query -W -f '${Package}\t${Version}\n' | sort >"$ESI_MANIFEST"

step "slim"
apt_get clean
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R"/var/cache/debconf/*-old "$R"/var/lib/dpkg/*-old
find "$R/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$R/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$R"/usr/share/man/* "$R"/usr/share/info/* "$R"/usr/share/lintian "$R"/usr/share/linda "$R"/var/cache/man
find "$R/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
rm -f "$R/usr/sbin/policy-rc.d"
rm -f "$R"/etc/ssh/ssh_host_*_key "$R"/etc/ssh/ssh_host_*_key.pub
: >"$R/etc/machine-id"
rm -f "$R/var/lib/dbus/machine-id" "$R/var/lib/systemd/random-seed"
rm -rf "$R"/var/lib/cloud/* "$R/etc/resolvconf/resolv.conf.d/original"
find "$R/var/log" -type f -exec truncate -s 0 {} +
rm -rf "$R/debootstrap"
# /etc/resolv.conf: resolvconf's link into /run when it is installed, else empty (DHCP writes it).
if [ -d "$R/etc/resolvconf" ]; then
  ln -sfn ../run/resolvconf/resolv.conf "$R/etc/resolv.conf"
else
  rm -f "$R/etc/resolv.conf"
  : >"$R/etc/resolv.conf"
fi
# /run and /tmp are empty file systems on the node: leave nothing under them.
umount "$R/run" "$R/tmp"
rm -rf "${R:?}"/run/* "${R:?}"/tmp/*
step "root file system done: $(du -sh --one-file-system "$R" | cut -f1)"
