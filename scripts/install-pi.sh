#!/usr/bin/env bash
# Install tablesense on Raspberry Pi OS Bookworm 64-bit (Pi 4, Pi 5), as root:
#     sudo bash scripts/install-pi.sh [options] [TABLE [SEATS]]
#     sudo bash scripts/install-pi.sh --uninstall [--purge]
# TABLE is a shipped layout name (dominoes-4, kems-4, ...) or a table file's
# path; SEATS the seat names in order (default South,East,North,West). Run it
# again at any time: a second run with the same arguments changes nothing.
#
# What it does (each step only when it is not done yet):
#  - Debian packages: python3-venv and curl; a browser for the kiosk when
#    neither chromium-browser nor chromium is installed;
#  - the `tablesense` service user (groups dialout, plugdev, gpio; no root
#    at run time) and its state directory /var/lib/tablesense, so the tag
#    enrolment it prints works before the service ever started;
#  - the package with its Pi extra into /opt/tablesense/venv, every
#    dependency from a wheel (no compiler): from --wheel FILE, or else a
#    wheel built from this git checkout's tracked files (never .venv,
#    node_modules or .git); `tablesense` on the PATH; a release needs only
#    this script and the wheel (which carries the unit, rules and kiosk);
#  - the udev rules, /etc/default/tablesense, the systemd unit (enabled; started
#    once the tag registry exists);
#  - for the desktop user (--user NAME, else the one that ran sudo, else
#    lightdm's autologin user, else the only user with uid >= 1000): the
#    kiosk for labwc and wayfire, the table file's display rotation;
#  - the table file's referee button (referee_button_pin): GPIO3 wakes a
#    halted Pi 4 (no setting needed); any other pin is reported.
# Options:
#   --wheel FILE   install this release wheel instead of building one
#   --user NAME    the desktop user whose screen shows the display page
#   --root DIR     install into the system root at DIR (files under DIR,
#                  commands in it through chroot): how the arm64 check runs
#   --uninstall    remove what the install made; keeps the state directory,
#                  the service user and /etc/default/tablesense unless --purge
# Exit codes: 0 done, 1 a step failed, 2 bad usage or not root, 3 this system
# cannot run tablesense (32-bit OS, Python < 3.11), 4 nothing to install from
# (no --wheel and not a git checkout).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; }
die() { local code="$1"; shift; echo "install-pi: $*" >&2; exit "$code"; }
say() { echo "install-pi: $*"; }

root=/
wheel=""
desk_user=""
mode=install
purge=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --wheel) wheel="${2:?--wheel needs a file}"; shift ;;
    --user) desk_user="${2:?--user needs a name}"; shift ;;
    --root) root="${2:?--root needs a directory}"; shift ;;
    --uninstall) mode=uninstall ;;
    --purge) purge=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; die 2 "unknown option $1" ;;
    *) args+=("$1") ;;
  esac
  shift
done
[ "${#args[@]}" -le 2 ] || { usage >&2; die 2 "too many arguments: ${args[*]}"; }
table_arg="${args[0]:-}"
seats_arg="${args[1]:-}"
[ "$(id -u)" = 0 ] || die 2 "run as root: sudo bash $0"
[ -d "$root" ] || die 2 "--root $root is not a directory"
root="$(cd "$root" && pwd)"
P="${root%/}"            # prefix for paths in the target system ("" for /)
if [ -n "$wheel" ]; then
  [ -f "$wheel" ] || die 4 "no such wheel: $wheel"
  wheel="$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")"
fi

# A command in the target system; under --root with a clean environment, so
# this machine's settings (pip's index, proxies, certificates) stay out of it.
inroot() {
  if [ -z "$P" ]; then "$@"; else
    chroot "$P" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 "$@"
  fi
}
# Numeric ids from the target's own user database (chown by name would ask
# this machine's, which is not the target's under --root).
uid_of() { awk -F: -v n="$1" '$1 == n {print $3}' "$P/etc/passwd"; }
gid_of() { awk -F: -v n="$1" '$1 == n {print $3}' "$P/etc/group"; }
home_of() { awk -F: -v n="$1" '$1 == n {print $6}' "$P/etc/passwd"; }
in_group() { awk -F: -v g="$1" -v u="$2" '$1 == g {n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) f = 1} END {exit !f}' "$P/etc/group"; }

changed=0
note_change() { changed=$((changed + 1)); say "$*"; }
# put_file MODE UID GID DEST: write stdin to DEST when its content, mode or
# owner differ (so a second run leaves the file and its time alone). Feed it
# with < or <<<, not a pipe: in a pipe it would count its change in a subshell.
put_file() {
  local mode="$1" uid="$2" gid="$3" dest="$4" tmp
  tmp="$(mktemp)"
  cat > "$tmp"
  if [ -f "$dest" ] && cmp -s "$tmp" "$dest" \
      && [ "$(stat -c '%a %u %g' "$dest")" = "$mode $uid $gid" ]; then
    rm -f "$tmp"; return 0
  fi
  install -m "$mode" -o "$uid" -g "$gid" "$tmp" "$dest"
  rm -f "$tmp"
  note_change "wrote ${dest#"$P"}"
}
# put_dir MODE UID GID DIR: one directory, made or fixed only when needed.
put_dir() {
  local mode="$1" uid="$2" gid="$3" dir="$4"
  if [ -d "$dir" ] && [ "$(stat -c '%a %u %g' "$dir")" = "$mode $uid $gid" ]; then return 0; fi
  install -d -m "$mode" -o "$uid" -g "$gid" "$dir"
  note_change "made ${dir#"$P"} (owner $uid:$gid)"
}
remove_path() {
  if [ -e "$1" ] || [ -L "$1" ]; then rm -rf --one-file-system "$1"; note_change "removed ${1#"$P"}"; fi
}
# A block of lines between markers in a file we share with the user (a
# compositor's autostart, wayfire.ini): replaced as a whole, or removed.
# strip_block FILE [KEY]: FILE without our block KEY (without all of ours).
mark="# >>> tablesense"
end_mark="# <<< tablesense"
strip_block() {
  awk -v b="$mark${2:+ $2}" -v e="$end_mark" \
    'index($0, b) == 1 {skip = 1; next} skip && $0 == e {skip = 0; next} !skip' "$1"
}

systemd_running=0
if [ -z "$P" ] && [ -d /run/systemd/system ]; then systemd_running=1; fi

venv=/opt/tablesense/venv
unit=/etc/systemd/system/tablesense.service
kiosk=/usr/local/bin/tablesense-kiosk

# ---------------------------------------------------------------- desktop user
find_desktop_user() {
  if [ -n "$desk_user" ]; then
    [ -n "$(uid_of "$desk_user")" ] || die 2 "--user $desk_user: no such user"
    echo "$desk_user"; return
  fi
  if [ -z "$P" ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then echo "$SUDO_USER"; return; fi
  local auto=""
  if [ -f "$P/etc/lightdm/lightdm.conf" ]; then
    auto="$(sed -n 's/^autologin-user=//p' "$P/etc/lightdm/lightdm.conf" | tail -n 1)"
  fi
  if [ -n "$auto" ] && [ -n "$(uid_of "$auto")" ]; then echo "$auto"; return; fi
  awk -F: '$3 >= 1000 && $3 < 60000 && $7 !~ /(nologin|false)$/ {print $1}' "$P/etc/passwd"
}

# ---------------------------------------------------------------- uninstall
if [ "$mode" = uninstall ]; then
  if [ -f "$P$unit" ]; then
    inroot systemctl disable tablesense >/dev/null 2>&1 || true
    if [ "$systemd_running" = 1 ]; then systemctl stop tablesense || true; fi
  fi
  remove_path "$P$unit"
  [ "$systemd_running" = 1 ] && systemctl daemon-reload
  remove_path "$P/etc/udev/rules.d/99-tablesense.rules"
  remove_path "$P/usr/local/bin/tablesense"
  remove_path "$P$kiosk"
  remove_path "$P/opt/tablesense"
  for user in $(find_desktop_user); do
    home="$P$(home_of "$user")"
    for f in "$home/.config/labwc/autostart" "$home/.config/wayfire.ini" "$home/.config/kanshi/config"; do
      if [ -f "$f" ] && grep -q "^$mark" "$f"; then
        strip_block "$f" > "$f.tablesense-tmp" && cat "$f.tablesense-tmp" > "$f" && rm -f "$f.tablesense-tmp"
        note_change "removed the tablesense lines of ${f#"$P"}"
      fi
    done
    remove_path "$home/.config/autostart/tablesense-kiosk.desktop"
  done
  if [ "$purge" = 1 ]; then
    remove_path "$P/var/lib/tablesense"
    remove_path "$P/etc/default/tablesense"
    if [ -n "$(uid_of tablesense)" ]; then inroot userdel tablesense; note_change "removed the user tablesense"; fi
  else
    say "kept: the tag registry and journal in /var/lib/tablesense, /etc/default/tablesense and the user tablesense (--purge removes them)"
  fi
  say "uninstalled ($changed changes)"
  exit 0
fi

# ---------------------------------------------------------------- the system
arch="$(inroot dpkg --print-architecture)"
model=""
if [ -r "$P/proc/device-tree/model" ]; then model="$(tr -d '\0' < "$P/proc/device-tree/model")"; fi
case "$arch" in
  arm64|amd64) ;;
  armhf|armel) die 3 "this is 32-bit Raspberry Pi OS ($arch): flash Raspberry Pi OS (64-bit), where every dependency has a wheel" ;;
  *) die 3 "unsupported architecture $arch" ;;
esac
case "$model" in
  *"Raspberry Pi 5"*|*"Raspberry Pi 4"*|*"Compute Module 4"*|*"Compute Module 5"*)
    say "$model" ;;
  *"Raspberry Pi 3"*|*"Zero 2"*)
    say "$model: installs and runs, but below the measured budget: its Cortex-A53 cores are slower than a Pi 4's, so the search player samples fewer worlds within its 200 ms (docs/pi-install.md); on a Zero 2 W (512 MB) show the display page on another device rather than with the kiosk" ;;
  *"Raspberry Pi"*) die 3 "$model: tablesense needs a 64-bit Pi (Pi 3, Zero 2 W, Pi 4, Pi 5)" ;;
  *) say "not a Raspberry Pi (no device-tree model): installing anyway (an image being prepared or a test root)" ;;
esac
inroot python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die 3 "tablesense needs Python 3.11 or later (Raspberry Pi OS Bookworm has 3.11)"

# ---------------------------------------------------------------- Debian packages
# shellcheck disable=SC2016  # ${Status} is dpkg-query's field, not the shell's
installed() { inroot dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
browser=""
for b in chromium-browser chromium; do
  if installed "$b" && [ -x "$P/usr/bin/$b" ]; then browser="/usr/bin/$b"; break; fi
done
mapfile -t desktop_users < <(find_desktop_user)
missing=()
for pkg in python3-venv curl; do installed "$pkg" || missing+=("$pkg"); done
if [ -z "$browser" ] && [ "${#desktop_users[@]}" = 1 ]; then
  # Raspberry Pi OS names it chromium-browser for much of Bookworm, Debian chromium.
  # (Debian knows chromium-browser only as a name without a package.)
  if inroot apt-cache policy chromium-browser 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    missing+=(chromium-browser)
  else
    missing+=(chromium)
  fi
fi
if [ "${#missing[@]}" -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  inroot apt-get update -qq
  inroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  changed=$((changed + 1))
  for b in chromium-browser chromium; do
    if [ -z "$browser" ] && [ -x "$P/usr/bin/$b" ]; then browser="/usr/bin/$b"; fi
  done
fi

# ---------------------------------------------------------------- service user
for g in dialout plugdev gpio; do
  [ -n "$(gid_of "$g")" ] || { inroot groupadd --system "$g"; note_change "made the group $g"; }
done
if [ -z "$(uid_of tablesense)" ]; then
  inroot useradd --system --user-group --home-dir /var/lib/tablesense --no-create-home \
    --shell /usr/sbin/nologin tablesense
  note_change "made the service user tablesense"
fi
for g in dialout plugdev gpio; do
  in_group "$g" tablesense || { inroot usermod -aG "$g" tablesense; note_change "added tablesense to $g"; }
done
svc_uid="$(uid_of tablesense)"
svc_gid="$(gid_of tablesense)"
# The state directory exists before the first start, owned by the service
# user, so `sudo -u tablesense tablesense tags enroll --registry ...` works.
put_dir 750 "$svc_uid" "$svc_gid" "$P/var/lib/tablesense"

# ---------------------------------------------------------------- the package
put_dir 755 0 0 "$P/opt/tablesense"
if [ ! -x "$P$venv/bin/python" ]; then
  inroot python3 -m venv "$venv"
  note_change "made $venv"
fi
log="$P/var/log/tablesense-install.log"
if [ -n "$wheel" ]; then
  stamp="wheel $(sha256sum < "$wheel" | cut -d' ' -f1)"
else
  git -C "$here" rev-parse --git-dir >/dev/null 2>&1 \
    || die 4 "$here is not a git checkout: pass a release wheel with --wheel FILE"
  # What a fresh clone would hold: the tracked files as they are on disk
  # (their content and links only, so a second run recognises them).
  tracked() { (cd "$here" && git ls-files -z | tar --null -T - --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf -); }
  stamp="git $(tracked | sha256sum | cut -d' ' -f1)"
fi
if [ "$(cat "$P/opt/tablesense/installed" 2>/dev/null)" != "$stamp" ]; then
  work="$(mktemp -d "$P/tmp/tablesense-install.XXXXXX")"
  trap 'rm -rf --one-file-system "$work"' EXIT
  if [ -n "$wheel" ]; then
    cp "$wheel" "$work/"
  else
    mkdir "$work/src" "$work/dist"
    tracked | tar -C "$work/src" -xf -
    say "building the tablesense wheel from the checkout's $(cd "$here" && git ls-files | wc -l) tracked files"
    inroot "$venv/bin/pip" wheel --no-deps --only-binary=:all: -w "${work#"$P"}/dist" "${work#"$P"}/src" >> "$log" 2>&1 \
      || die 1 "building the wheel failed (see ${log#"$P"})"
    mv "$work"/dist/tablesense-*.whl "$work/"
  fi
  whl="$(ls "$work"/tablesense-*.whl)"
  whl="${whl#"$P"}"
  say "pip install $(basename "$whl")[pi], every dependency from a wheel (log: ${log#"$P"})"
  # The wheel itself again (its version may be unchanged), then what it needs.
  inroot "$venv/bin/pip" install --no-deps --force-reinstall "$whl" >> "$log" 2>&1 \
    || die 1 "pip install failed (see ${log#"$P"})"
  inroot "$venv/bin/pip" install --only-binary=:all: "${whl}[pi]" >> "$log" 2>&1 \
    || die 1 "pip install of the pi extra failed (see ${log#"$P"})"
  put_file 644 0 0 "$P/opt/tablesense/installed" <<< "$stamp"
fi
if [ "$(readlink "$P/usr/local/bin/tablesense" 2>/dev/null)" != "$venv/bin/tablesense" ]; then
  ln -sfn "$venv/bin/tablesense" "$P/usr/local/bin/tablesense"
  note_change "linked /usr/local/bin/tablesense"
fi

# ---------------------------------------------------------------- configuration
# The unit, rules and launcher as the installed package carries them (its
# hardware/ folder), so a release wheel needs nothing beside this script.
hw="$P$(inroot "$venv/bin/python" -c 'import pathlib, tablesense; print(pathlib.Path(tablesense.__file__).parent / "hardware")')"
[ -f "$hw/pi/tablesense.service" ] || die 1 "the installed package has no hardware/pi folder ($hw)"
before=$changed
put_file 644 0 0 "$P/etc/udev/rules.d/99-tablesense.rules" < "$hw/udev/99-tablesense.rules"
if [ "$changed" != "$before" ] && [ "$systemd_running" = 1 ]; then
  udevadm control --reload-rules && udevadm trigger --subsystem-match=tty --subsystem-match=usb
fi
defaults="$P/etc/default/tablesense"
if [ -f "$defaults" ]; then
  current="$(cat "$defaults")"   # kept: the director options and other edits
else
  current="$(cat "$hw/pi/tablesense.default")"
  : "${table_arg:=dominoes-4}"
fi
wanted="$(printf '%s\n' "$current" | sed \
  -e "${table_arg:+s#^TABLESENSE_TABLE=.*#TABLESENSE_TABLE=$table_arg#}" \
  -e "${seats_arg:+s#^TABLESENSE_SEATS=.*#TABLESENSE_SEATS=$seats_arg#}")"
# A setting (read, not sourced: the file is data).
setting() { printf '%s\n' "$wanted" | sed -n "s/^$1=//p" | tail -n 1 | tr -d "\"'"; }
table="$(setting TABLESENSE_TABLE)"
tags="$(setting TABLESENSE_TAGS)"
# The table file's referee button and display, read by the package itself;
# a table it cannot read is refused before anything is written.
geo="$(inroot "$venv/bin/python" -c '
import sys
from tablesense.table.geometry import TableGeometry
try:
    g = TableGeometry.load(sys.argv[1])
except (OSError, ValueError) as exc:
    sys.exit(str(exc))
print(g.referee_button_pin if g.referee_button_pin is not None else "-", g.display_rotation, g.display_output)
' "$table")" || die 2 "TABLE: cannot use the table file $table (a shipped layout name, or a table file's absolute path in the system)"
read -r ref_pin rotation output <<< "$geo"
put_file 644 0 0 "$defaults" <<< "$wanted"

put_file 644 0 0 "$P$unit" < "$hw/pi/tablesense.service"
if [ ! -L "$P/etc/systemd/system/multi-user.target.wants/tablesense.service" ]; then
  inroot systemctl enable tablesense 2>&1 | sed 's/^/install-pi: systemctl: /'
  note_change "enabled tablesense.service"
fi

case "$ref_pin" in
  -) say "the table file has no referee button" ;;
  3) say "referee button on GPIO3: it also wakes a halted Pi 4 (a Pi 5 wakes with its own power button)" ;;
  *) say "referee button on GPIO$ref_pin: only GPIO3 wakes a halted Pi; wire the button to GPIO3 (referee_button_pin = 3) if it should" ;;
esac

# ---------------------------------------------------------------- kiosk
if [ "${#desktop_users[@]}" -ne 1 ]; then
  if [ "${#desktop_users[@]}" = 0 ]; then
    say "no desktop user found (no sudo user, no autologin user, no user with uid >= 1000): the kiosk is not installed; run again with --user NAME"
  else
    say "several desktop users (${desktop_users[*]}): the kiosk is not installed; run again with --user NAME"
  fi
elif [ -z "$browser" ]; then
  say "no browser (chromium-browser or chromium) could be installed: the kiosk is not installed"
else
  user="${desktop_users[0]}"
  uid="$(uid_of "$user")"
  gid="$(awk -F: -v n="$user" '$1 == n {print $4}' "$P/etc/passwd")"
  home="$P$(home_of "$user")"
  [ -d "$home" ] || die 1 "the desktop user $user has no home directory ${home#"$P"}"
  put_file 755 0 0 "$P$kiosk" < <(sed "s#@BROWSER@#$browser#" "$hw/pi/tablesense-kiosk")
  # shared_file FILE KEY BODY [SECTION]: our block KEY in a file of the user's,
  # inside SECTION (an ini header) when given. Directories made in the user's
  # home belong to the user, never to root.
  shared_file() {
    local f="$1" key="$2" body="$3" section="${4:-}" rest d
    d="$(dirname "$f")"
    [ -d "$(dirname "$d")" ] || put_dir 755 "$uid" "$gid" "$(dirname "$d")"
    [ -d "$d" ] || put_dir 755 "$uid" "$gid" "$d"
    rest=""
    if [ -f "$f" ]; then rest="$(strip_block "$f" "$key")"; fi
    put_file 644 "$uid" "$gid" "$f" < <(
      if [ -n "$section" ] && printf '%s\n' "$rest" | grep -qxF "$section"; then
        printf '%s\n' "$rest" | awk -v s="$section" -v b="$mark $key" -v e="$end_mark" -v body="$body" \
          '{print} $0 == s {print b; print body; print e}'
      else
        [ -n "$rest" ] && printf '%s\n' "$rest"
        printf '%s\n' "$mark $key" ${section:+"$section"} "$body" "$end_mark"
      fi
    )
  }
  # labwc (Raspberry Pi OS's default since late 2024) runs ~/.config/labwc/autostart;
  # wayfire (Bookworm's first desktop) the [autostart] section of ~/.config/wayfire.ini.
  shared_file "$home/.config/labwc/autostart" kiosk "$kiosk &"
  shared_file "$home/.config/wayfire.ini" kiosk "tablesense_kiosk = $kiosk" "[autostart]"
  # The table file's display rotation: kanshi (labwc) and wayfire.ini (wayfire).
  if [ "$rotation" != 0 ]; then
    shared_file "$home/.config/kanshi/config" rotation "profile tablesense {
  output $output transform $rotation
}"
    shared_file "$home/.config/wayfire.ini" rotation "transform = $rotation" "[output:$output]"
  else
    for f in "$home/.config/kanshi/config" "$home/.config/wayfire.ini"; do
      if [ -f "$f" ] && grep -q "^$mark rotation" "$f"; then put_file 644 "$uid" "$gid" "$f" < <(strip_block "$f" rotation); fi
    done
  fi
  # An earlier installer's XDG autostart entry would start a second browser.
  remove_path "$home/.config/autostart/tablesense-kiosk.desktop"
  say "kiosk for $user: $browser shows http://127.0.0.1:8080/ full screen at login (labwc and wayfire)"
fi

# ---------------------------------------------------------------- start
if [ "$systemd_running" = 1 ]; then
  systemctl daemon-reload
  # A restart only when something changed: a second run leaves a match alone.
  if [ -f "$P$tags" ] && [ "$changed" -gt 0 ]; then
    systemctl restart tablesense; say "tablesense restarted"
  elif [ -f "$P$tags" ] && ! systemctl is-active --quiet tablesense; then
    systemctl start tablesense; say "tablesense started"
  fi
else
  say "systemd is not running here (a chroot or an image being prepared): the service is enabled and starts at the next boot"
fi
if [ ! -f "$P$tags" ]; then
  say "enrol the tags first (the service starts once $tags exists):"
  echo "  sudo -u tablesense tablesense tags enroll --set tiles --table $table --registry $tags"
  echo "  sudo systemctl start tablesense"
fi
if [ -d "$P/home/tablesense/tablesense" ] || [ -d "$P/home/tablesense/.local/pipx" ]; then
  say "an earlier install's copy and pipx environment in /home/tablesense are no longer used: sudo rm -r /home/tablesense/tablesense /home/tablesense/.local/pipx /home/tablesense/.local/bin/tablesense"
fi
if [ "$changed" = 0 ]; then say "nothing changed (already installed)"; else say "installed ($changed changes)"; fi
say "status: systemctl status tablesense; the display page: http://$(cat "$P/etc/hostname" 2>/dev/null || hostname).local:8080/"
