#!/usr/bin/env bash
# Prove the README's two commands on a fresh Debian machine: a minimal
# chroot with the host's Rust toolchain (read-only) and nothing else of the
# project's (no node, npm, chromium, no download or cargo registry cache),
# a clone of a committed branch, then `scripts/run.sh info …` and
# `scripts/test.sh`, each timed, logged under DIR. See docs/internals/testing.md.
#
# Usage (as root, on a Debian host with rustup's toolchain in ~/.rustup):
#   scripts/fresh-machine.sh DIR [BRANCH]     # BRANCH defaults to main
#   scripts/fresh-machine.sh --setup-only DIR [BRANCH]   # make it, clone, stop
# DIR/root is reused if it exists (delete it for a new machine). Everything
# the chroot gets from the host is what a new machine of the same kind has
# already: the apt sources and settings, the local CA certificates, npm's
# configuration files and the network/TLS environment variables.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "run as root (chroot, mounts)" >&2; exit 2; }
setup_only=0
if [ "${1:-}" = --setup-only ]; then setup_only=1; shift; fi
[ $# -ge 1 ] || { echo "usage: $0 [--setup-only] DIR [BRANCH]" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && git rev-parse --path-format=absolute --git-common-dir)"
dir="$(mkdir -p "$1" && cd "$1" && pwd)"
branch="${2:-main}"
root="$dir/root"
. "$here/need.sh"
need debootstrap:debootstrap

# The Debian archive apt already uses here: never a host name of our own.
mirror="$(grep -h -o -E '^URIs: *[^ ]+/debian$|^deb +(\[[^]]*\] +)?[^ ]+/debian ' \
  /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
  head -1 | sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//; s/ +$//' || true)"
suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
[ -n "$mirror" ] || { echo "no Debian archive in this host's apt sources" >&2; exit 2; }

if [ ! -x "$root/bin/bash" ]; then
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$dir/debootstrap.log" 2>&1
fi

# The host's apt sources and settings (proxy, validity checks), its local
# CAs (a TLS-inspecting proxy's root), and npm's configuration files.
cp -n /etc/apt/sources.list.d/* "$root/etc/apt/sources.list.d/" 2>/dev/null || true
if [ -f /etc/apt/sources.list ]; then
  cp /etc/apt/sources.list "$root/etc/apt/"
else # the host's deb822 files are the whole list
  rm -f "$root/etc/apt/sources.list"
fi
cp -n /etc/apt/apt.conf.d/* "$root/etc/apt/apt.conf.d/" 2>/dev/null || true
mkdir -p "$root/usr/local/share/ca-certificates" "$root/usr/etc" "$root/root"
cp /usr/local/share/ca-certificates/* "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
for f in /etc/npmrc /usr/etc/npmrc "$HOME/.npmrc"; do
  if [ -f "$f" ]; then cp -p "$f" "$root${f/#$HOME//root}"; fi
done

mounts=()
bind() { # bind SRC DEST [ro]: a folder or a file
  if [ -d "$1" ]; then mkdir -p "$2"; else [ -e "$2" ] || touch "$2"; fi
  mount --rbind "$1" "$2"
  mounts+=("$2")
  mount --make-rslave "$2"
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R "${mounts[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mkdir -p "$root/proc" && mount -t proc proc "$root/proc" && mounts+=("$root/proc")
bind /sys "$root/sys"
bind /dev "$root/dev"
bind /etc/resolv.conf "$root/etc/resolv.conf"
bind "${RUSTUP_HOME:-$HOME/.rustup}" "$root/root/.rustup" ro
bind "${CARGO_HOME:-$HOME/.cargo}/bin" "$root/root/.cargo/bin" ro
bind "$repo" "$root/src/repo.git" ro

# A fresh login: HOME and PATH as rustup sets them, and only the host's
# network/TLS settings (a new machine of this kind has the same).
envs=(HOME=/root USER=root LANG=C.UTF-8 TERM=dumb RUSTUP_HOME=/root/.rustup
  CARGO_HOME=/root/.cargo
  PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
for v in SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS \
  http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY NPM_CONFIG_REGISTRY; do
  if [ -n "${!v:-}" ]; then envs+=("$v=${!v}"); fi
done
in_root() { chroot "$root" /usr/bin/env -i "${envs[@]}" /bin/bash -c "$1"; }

# What the machine kind has besides the toolchain: gcc, git, CPython with
# pip, qemu-utils, and the CA store.
in_root 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  gcc git python3 python3-pip qemu-utils ca-certificates >/dev/null && update-ca-certificates >/dev/null' \
  >"$dir/base.log" 2>&1
in_root 'for c in node npm chromium; do ! command -v $c >/dev/null || { echo "$c is already here"; exit 1; }; done
  ! [ -e /root/.cache/cc-teardown ] || { echo "a download cache is already here"; exit 1; }'

in_root "rm -rf /root/cc-teardown && git clone -q -b '$branch' file:///src/repo.git /root/cc-teardown"
if ((setup_only)); then
  echo "ready: $root (the clone is /root/cc-teardown; nothing run)"
  exit 0
fi
status=0
in_root 'cd /root/cc-teardown && time nice -n 10 scripts/run.sh info npm:2.1.220/darwin-arm64' \
  >"$dir/run.log" 2>&1 || status=$?
echo "run.sh: exit $status, $(grep -E '^real' "$dir/run.log" || true) (log: $dir/run.log)"
tstatus=0
in_root 'cd /root/cc-teardown && time nice -n 10 scripts/test.sh' >"$dir/test.log" 2>&1 || tstatus=$?
echo "test.sh: exit $tstatus, $(grep -E '^real' "$dir/test.log" || true) (log: $dir/test.log)"
grep -E '^test result:' "$dir/test.log" || true
[ "$status" -eq 0 ] && [ "$tstatus" -eq 0 ]
