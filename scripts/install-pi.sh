#!/usr/bin/env bash
# Install tablesense on Raspberry Pi OS (Bookworm or later), as root:
#     sudo bash scripts/install-pi.sh [TABLE_FILE] [SEATS]
# It creates the `tablesense` service user with access to serial ports
# (dialout), USB boot-ROM devices (plugdev) and GPIO (gpio) — no root at run
# time —, installs the package with its Pi extra through pipx, the udev rules
# for stable board names, the systemd unit (starts `tablesense play` at boot,
# restarts it on failure) and the kiosk autostart for the table's screen.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "run as root: sudo bash $0" >&2; exit 1; }
here="$(cd "$(dirname "$0")/.." && pwd)"
table="${1:-dominoes-4}"   # a shipped layout name, or an absolute path to a geometry file
seats="${2:-South,East,North,West}"

apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pipx python3-venv chromium curl
id tablesense >/dev/null 2>&1 || useradd --create-home --shell /usr/sbin/nologin tablesense
for g in dialout plugdev gpio; do getent group "$g" >/dev/null || groupadd "$g"; usermod -aG "$g" tablesense; done

# The package: on a Pi 5 RPi.GPIO comes from rpi-lgpio (same module name).
extra=pi
if grep -q "Raspberry Pi 5" /proc/device-tree/model 2>/dev/null; then extra=pi5; fi
install -d -o tablesense -g tablesense /home/tablesense/tablesense
cp -r "$here"/. /home/tablesense/tablesense/
chown -R tablesense:tablesense /home/tablesense/tablesense
sudo -u tablesense pipx install --force "/home/tablesense/tablesense[$extra]"

install -m 0644 "$here/hardware/udev/99-tablesense.rules" /etc/udev/rules.d/
udevadm control --reload-rules && udevadm trigger

sed -e "s#^TABLESENSE_TABLE=.*#TABLESENSE_TABLE=$table#" -e "s#^TABLESENSE_SEATS=.*#TABLESENSE_SEATS=$seats#" \
    "$here/hardware/pi/tablesense.default" > /etc/default/tablesense
install -m 0644 "$here/hardware/pi/tablesense.service" /etc/systemd/system/
systemctl daemon-reload
# The service starts once the tag registry exists (tablesense tags enroll);
# before that it would only fail on every start.
tags="$(. /etc/default/tablesense; echo "$TABLESENSE_TAGS")"
if [ -f "$tags" ]; then
  systemctl enable --now tablesense
else
  systemctl enable tablesense
  echo "enrol the tags first, then: sudo systemctl start tablesense"
  echo "  sudo -u tablesense /home/tablesense/.local/bin/tablesense tags enroll --set tiles --table $table --registry $tags"
fi

# Kiosk: for the desktop user who is logged in on the table's screen.
desk_user="${SUDO_USER:-pi}"
if id "$desk_user" >/dev/null 2>&1; then
  install -d -o "$desk_user" "/home/$desk_user/.config/autostart"
  install -m 0644 -o "$desk_user" "$here/hardware/pi/kiosk.desktop" "/home/$desk_user/.config/autostart/tablesense-kiosk.desktop"
fi
echo "tablesense installed: systemctl status tablesense; the display is at http://$(hostname).local:8080/"
