#!/usr/bin/env bash
# Proves scripts/install-pi.sh on arm64 without a Raspberry Pi, as root:
#     sudo bash scripts/check-pi-arm64.sh [--base-only] [--keep] [--work DIR]
# 1. installs Debian's debootstrap and qemu-user-static when missing (the
#    kernel then runs arm64 programs through qemu-aarch64-static, binfmt_misc);
# 2. builds a Debian bookworm arm64 root with debootstrap (--foreign, second
#    stage under qemu) from the Debian mirror this machine's apt uses, with what
#    a Raspberry Pi OS desktop image ships that matters here (python3,
#    chromium, sudo, curl, systemd, udev) and a desktop user that is not `pi`
#    (`tabletop`, uid 1000). The root is kept as a tarball under the cache
#    directory, so a second check starts from the same clean image in minutes;
# 3. unpacks a fresh copy, runs the installer into it twice (--root: files are
#    written under the root, commands run in it through chroot; no systemd
#    runs there, which the installer must notice and report), then checks:
#    the package and its pi extra came from wheels only, `tablesense --help`
#    and `tablesense hw check` run, `systemd-analyze verify` accepts the unit,
#    `udevadm verify` (or a parse test) accepts the rules, the state directory
#    belongs to the service user, the kiosk entry points at an installed
#    browser, the second run changed no file, and the uninstall removes
#    what the install made.
# Exit codes: 0 every check passed, 1 a check failed, 2 bad usage or not root,
# 3 the Debian mirror could not be reached (debootstrap failed), 4 the machine
# cannot run arm64 programs (no binfmt_misc / qemu).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TABLESENSE_ARM64_CACHE:-/var/cache/tablesense-arm64}"
work=""
base_only=0
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --base-only) base_only=1 ;;
    --keep) keep=1 ;;
    --work) work="${2:?--work needs a directory}"; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) echo "check-pi-arm64: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "check-pi-arm64: run as root: sudo bash $0" >&2; exit 2; }

say() { printf '[check-pi-arm64 %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
failures=0
check() {  # check NAME COMMAND...: run a check, report it, count failures
  local name="$1"; shift
  if "$@"; then say "PASS $name"; else say "FAIL $name"; failures=$((failures + 1)); fi
}

# ------------------------------------------------------------------ tools
need=""
command -v debootstrap >/dev/null 2>&1 || need="$need debootstrap"
command -v qemu-aarch64-static >/dev/null 2>&1 || need="$need qemu-user-static"
if [ -n "$need" ]; then
  say "installing Debian packages:$need"
  # shellcheck disable=SC2086
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need) >/dev/null
fi
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || true
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && command -v update-binfmts >/dev/null 2>&1; then
  update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  say "this kernel cannot run arm64 programs: binfmt_misc has no qemu-aarch64 entry (is qemu-user-static installed and binfmt_misc mounted?)"
  exit 4
fi

# The Debian mirror apt uses here (deb822 .sources first, then sources.list).
mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror="$(awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ && u !~ /security/ {print u; exit}' "$f")"
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror="$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list)"
fi
mirror="${mirror:-http://deb.debian.org/debian}"

# ------------------------------------------------------------------ mounts
# Every mount under a root is undone before anything under it is removed.
mounted_under() { findmnt -rn -o TARGET | awk -v r="$1" 'index($0, r "/") == 1' | sort -r; }
unmount_root() {
  local m
  for m in $(mounted_under "$1"); do umount -l "$m" || true; done
}
mount_root() {
  mount -t proc proc "$1/proc"
  mount --rbind /sys "$1/sys"; mount --make-rslave "$1/sys"
  mount --rbind /dev "$1/dev"; mount --make-rslave "$1/dev"
  cp /etc/resolv.conf "$1/etc/resolv.conf"
  # This machine's own certificate authorities (a proxy that inspects TLS):
  # the root reaches the Debian mirror and PyPI the way this machine does.
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null && [ -x "$1/usr/sbin/update-ca-certificates" ]; then
    cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/"
    chroot "$1" update-ca-certificates >/dev/null 2>&1
  fi
}
remove_root() {
  unmount_root "$1"
  if [ -n "$(mounted_under "$1")" ]; then say "still mounted under $1: not removing it"; return 1; fi
  rm -rf --one-file-system "$1"
}

# ------------------------------------------------------------------ base image
base_tar="$cache/bookworm-arm64-base.tar"
base_packages="python3,ca-certificates,curl,sudo,systemd,systemd-sysv,udev,dbus"
if [ ! -f "$base_tar" ]; then
  mkdir -p "$cache"
  build="$cache/build.$$"
  trap 'remove_root "$build" || true' EXIT
  say "debootstrap bookworm arm64 from $mirror (first stage)"
  t0=$(date +%s)
  if ! debootstrap --arch=arm64 --foreign --include="$base_packages" bookworm "$build" "$mirror" \
      > "$cache/debootstrap.log" 2>&1; then
    tail -n 15 "$cache/debootstrap.log" >&2
    say "debootstrap could not fetch bookworm arm64 from $mirror (log: $cache/debootstrap.log)"
    exit 3
  fi
  cp /usr/bin/qemu-aarch64-static "$build/usr/bin/"
  say "second stage (arm64 programs under qemu)"
  chroot "$build" /debootstrap/debootstrap --second-stage >> "$cache/debootstrap.log" 2>&1 \
    || { tail -n 15 "$cache/debootstrap.log" >&2; say "second stage failed"; exit 1; }
  mount_root "$build"
  # What Raspberry Pi OS (desktop) ships that the installer relies on, but not
  # what the installer itself must bring (python3-venv): the browser.
  say "the desktop image's browser (apt-get install chromium under qemu)"
  chroot "$build" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium' \
    >> "$cache/debootstrap.log" 2>&1 || { tail -n 15 "$cache/debootstrap.log" >&2; say "chromium install failed"; exit 1; }
  chroot "$build" useradd --create-home --uid 1000 --shell /bin/bash tabletop
  chroot "$build" apt-get clean
  unmount_root "$build"
  tar -C "$build" -cf "$base_tar.tmp" .
  mv "$base_tar.tmp" "$base_tar"
  remove_root "$build"
  trap - EXIT
  say "base image ready in $(( $(date +%s) - t0 )) s: $base_tar"
fi
[ "$base_only" = 1 ] && exit 0

# ------------------------------------------------------------------ the check
rootfs="${work:-$cache/run}"
logs="$cache/logs"
if [ -e "$rootfs" ]; then remove_root "$rootfs" || exit 1; fi
mkdir -p "$rootfs" "$logs"
finish() {
  unmount_root "$rootfs"
  if [ "$keep" = 1 ]; then say "kept the root: $rootfs"; else remove_root "$rootfs" || true; fi
}
trap finish EXIT
tar -C "$rootfs" -xf "$base_tar"
mount_root "$rootfs"
in_rootfs() { chroot "$rootfs" "$@"; }
as_service() { chroot --userspec=tablesense:tablesense "$rootfs" env HOME=/var/lib/tablesense "$@"; }
t_start=$(date +%s)

# A listing of the root that a rewrite of any file would change (content by
# size and time, owner, mode); what runs and caches under /proc, /tmp, logs is left out.
manifest() {
  (cd "$rootfs" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run \
      -o -path ./tmp -o -path ./var/log -o -path ./var/cache -o -path ./root/.cache \) -prune \
      -o -printf '%p %U:%G %m %s %T@ %l\n') | sort
}

say "install 1: scripts/install-pi.sh --root (the source: this checkout's tracked files)"
t0=$(date +%s)
rc=0; bash "$here/scripts/install-pi.sh" --root "$rootfs" > "$logs/install-1.log" 2>&1 || rc=$?
sed 's/^/    /' "$logs/install-1.log"
say "install 1 took $(( $(date +%s) - t0 )) s, exit $rc"
check "install exits 0" test "$rc" = 0
check "install says systemd is not running" grep -q "systemd is not running here" "$logs/install-1.log"
manifest > "$logs/manifest-1.txt"

say "install 2 (the same arguments: nothing may change)"
t0=$(date +%s)
rc=0; bash "$here/scripts/install-pi.sh" --root "$rootfs" > "$logs/install-2.log" 2>&1 || rc=$?
sed 's/^/    /' "$logs/install-2.log"
say "install 2 took $(( $(date +%s) - t0 )) s, exit $rc"
manifest > "$logs/manifest-2.txt"
check "second install exits 0" test "$rc" = 0
check "second install says nothing changed" grep -q "nothing changed" "$logs/install-2.log"
check "second install left every file as it was" diff -u "$logs/manifest-1.txt" "$logs/manifest-2.txt"

pip_log="$rootfs/var/log/tablesense-install.log"
built_only_tablesense() { ! grep -i "building wheel for" "$pip_log" | grep -vi "building wheel for tablesense"; }
check "no dependency was built from source (only the tablesense wheel itself)" built_only_tablesense
check "no sdist was downloaded" bash -c "! grep -E 'Downloading .*\\.(tar\\.gz|zip)( |\$)' '$pip_log'"
check "no C compiler in the root" in_rootfs sh -c '! command -v gcc && ! command -v cc'
no_sdist_dists() {  # every installed distribution came from a wheel pip downloaded or built
  in_rootfs /opt/tablesense/venv/bin/python -c '
import importlib.metadata as m, sys
names = sorted({d.metadata["Name"].lower() for d in m.distributions()})
print("    installed:", " ".join(names))
sys.exit(not {"tablesense", "rpi-lgpio", "lgpio"} <= set(names))'
}
check "the package and its pi extra (rpi-lgpio, lgpio) are installed" no_sdist_dists
# rpi-lgpio refuses to import off a Pi unless told a board revision (a Pi 4B's
# here); lgpio makes its notification pipe in the working folder, which the
# unit sets to /var/lib/tablesense.
gpio_module() {
  as_service env -C /var/lib/tablesense RPI_LGPIO_REVISION=c03114 /opt/tablesense/venv/bin/python -c '
import importlib.metadata as md, sys
import RPi.GPIO
from tablesense.outputs.gpio import GPIOError, RPiGPIOBackend
assert any(str(f) == "RPi/GPIO/__init__.py" for f in md.files("rpi-lgpio")), "RPi.GPIO is not rpi-lgpio"
try:
    RPiGPIOBackend()
except GPIOError as exc:
    print("    RPi.GPIO is rpi-lgpio", md.version("rpi-lgpio"), "on lgpio", md.version("lgpio") + "; no GPIO chip in the root:", exc)
else:
    sys.exit("a GPIO chip in a chroot?")'
}
check "RPi.GPIO is rpi-lgpio's, and tablesense reports a missing GPIO chip as a GPIOError" gpio_module
check "tablesense --help runs (as the service user)" as_service tablesense --help
hw_check() { as_service tablesense hw check > "$logs/hw-check.txt" 2>&1; local r=$?; sed 's/^/    /' "$logs/hw-check.txt" | tail -n 5; return $r; }
check "tablesense hw check runs" hw_check
check "the unit is enabled" test -L "$rootfs/etc/systemd/system/multi-user.target.wants/tablesense.service"
verify_unit() {
  local out
  out="$(in_rootfs systemd-analyze verify /etc/systemd/system/tablesense.service 2>&1)" || { echo "$out"; return 1; }
  [ -z "$out" ] || { echo "$out"; return 1; }
}
check "systemd-analyze verify accepts the unit (in the root)" verify_unit
udev_parse() {  # udev 252 (bookworm) has no `udevadm verify`: `udevadm test` reads every rules file
  local out
  out="$(in_rootfs udevadm test --action=add /sys/class/tty/tty0 2>&1)" || true
  echo "$out" | grep -q "99-tablesense.rules" || { echo "    udevadm test did not read the rules"; return 1; }
  ! echo "$out" | grep -E "99-tablesense.rules:[0-9]+" | grep -iE "invalid|unknown|error|ignor"
}
check "udev reads the rules without a complaint" udev_parse
state_owner() { [ "$(in_rootfs stat -c %U:%G /var/lib/tablesense)" = tablesense:tablesense ]; }
check "/var/lib/tablesense belongs to tablesense" state_owner
check "the service user can write its state directory (the printed enrolment works)" \
  as_service /opt/tablesense/venv/bin/python -c '
from tablesense.table.tags import TagRegistry
TagRegistry.virtual().save("/var/lib/tablesense/probe/tags.json")
import shutil; shutil.rmtree("/var/lib/tablesense/probe")'
kiosk_browser() {
  local b
  b="$(sed -n 's/^exec \([^ ]*\) .*/\1/p' "$rootfs/usr/local/bin/tablesense-kiosk")"
  echo "    kiosk browser: $b"
  [ -n "$b" ] && [ -x "$rootfs$b" ]
}
check "the kiosk launcher runs an installed browser" kiosk_browser
check "labwc autostart starts the kiosk" grep -qx "/usr/local/bin/tablesense-kiosk &" "$rootfs/home/tabletop/.config/labwc/autostart"
check "wayfire.ini autostart starts the kiosk" grep -qx "tablesense_kiosk = /usr/local/bin/tablesense-kiosk" "$rootfs/home/tabletop/.config/wayfire.ini"
config_owner() { [ "$(find "$rootfs/home/tabletop" -not -user 1000 | wc -l)" = 0 ]; }
check "nothing in the desktop user's home belongs to root" config_owner

say "uninstall"
rc=0; bash "$here/scripts/install-pi.sh" --root "$rootfs" --uninstall > "$logs/uninstall.log" 2>&1 || rc=$?
sed 's/^/    /' "$logs/uninstall.log"
gone() { local p; for p in "$@"; do [ ! -e "$rootfs$p" ] || { echo "    still there: $p"; return 1; }; done; }
check "uninstall exits 0" test "$rc" = 0
check "uninstall removed the unit, venv, rules and kiosk" gone /etc/systemd/system/tablesense.service \
  /etc/systemd/system/multi-user.target.wants/tablesense.service /opt/tablesense /usr/local/bin/tablesense \
  /usr/local/bin/tablesense-kiosk /etc/udev/rules.d/99-tablesense.rules
check "uninstall removed the kiosk lines" bash -c "! grep -rq tablesense '$rootfs/home/tabletop/.config'"
check "uninstall kept the state directory" test -d "$rootfs/var/lib/tablesense"
rc=0; bash "$here/scripts/install-pi.sh" --root "$rootfs" --uninstall --purge > "$logs/purge.log" 2>&1 || rc=$?
check "uninstall --purge removed the state and the user" gone /var/lib/tablesense /etc/default/tablesense
check "uninstall --purge removed the service user" bash -c "! grep -q '^tablesense:' '$rootfs/etc/passwd'"

say "checks done in $(( $(date +%s) - t_start )) s: $failures failed (logs: $logs)"
[ "$failures" = 0 ]
