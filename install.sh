#!/usr/bin/env bash
# Installs Benchbay into ./.venv with the system libraries Qt needs, then `.venv/bin/benchbay` opens it.
set -euo pipefail
. "$(dirname "$0")/scripts/common.sh"

apt_install python3 python3-venv python3-pip openssh-client "${QT_RUNTIME_PACKAGES[@]}"
make_venv ""
say "installed: start it with $VENV/bin/benchbay (or: $VENV/bin/benchbay --help for the command line)"
