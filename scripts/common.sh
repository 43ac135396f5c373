# Shared by install.sh and run-tests.sh: system packages and the virtual environment.
# shellcheck shell=bash

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="${BENCHBAY_VENV:-$ROOT_DIR/.venv}"
PYTHON="${PYTHON:-python3}"

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Names differ between Debian and Ubuntu releases: take the first alternative apt knows.
pick_packages() {
    local want alt chosen
    for want in "$@"; do
        chosen=""
        IFS='|' read -r -a alts <<<"$want"
        for alt in "${alts[@]}"; do
            if apt-cache show "$alt" >/dev/null 2>&1; then chosen="$alt"; break; fi
        done
        if [ -n "$chosen" ]; then echo "$chosen"; else echo "warning: no package for $want" >&2; fi
    done
}

QT_RUNTIME_PACKAGES=(
    libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
    libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcb-xfixes0 libegl1 libgl1
    libfontconfig1 libdbus-1-3 "libglib2.0-0t64|libglib2.0-0" libxrender1 libxi6 libsm6
)

apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        say "no apt-get here: install these yourself: $*"
        return 0
    fi
    say "installing system packages (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt_get update -qq
    # shellcheck disable=SC2046
    apt_get install -y -qq --no-install-recommends $(pick_packages "$@") >/dev/null
}

# apt may be busy (unattended upgrades, another install): wait for its lock with a message, not fail.
APT_LOCK_WAIT_S="${APT_LOCK_WAIT_S:-600}"
APT_LOCK_RETRY_S="${APT_LOCK_RETRY_S:-5}"

apt_get() {
    local errors rc waited=0 told=""
    errors=$(mktemp)
    while true; do
        rc=0
        $SUDO "${APT_GET:-apt-get}" "$@" 2>"$errors" || rc=$?
        if [ "$rc" -eq 0 ] || ! grep -qiE 'could not get lock|unable to acquire|is another process using it' "$errors"; then
            cat "$errors" >&2
            rm -f "$errors"
            return "$rc"
        fi
        if [ "$waited" -ge "$APT_LOCK_WAIT_S" ]; then
            cat "$errors" >&2
            rm -f "$errors"
            say "apt is still busy after ${APT_LOCK_WAIT_S} s: let the other installation finish, then run this again"
            return "$rc"
        fi
        if [ -z "$told" ]; then
            say "apt is busy (another installation or automatic updates): waiting for it, up to ${APT_LOCK_WAIT_S} s"
            told=1
        fi
        sleep "$APT_LOCK_RETRY_S"
        waited=$((waited + APT_LOCK_RETRY_S))
    done
}

make_venv() {
    local extra="$1"
    if [ ! -x "$VENV/bin/python" ]; then
        say "creating the virtual environment in $VENV"
        "$PYTHON" -m venv "$VENV"
    fi
    say "installing Benchbay and its Python packages"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    # setuptools warns about every editable install; the notice is not for Benchbay users
    PYTHONWARNINGS=ignore "$VENV/bin/python" -m pip install -q -e "$ROOT_DIR$extra"
}
