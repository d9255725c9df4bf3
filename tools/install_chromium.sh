#!/usr/bin/env bash
# Install Debian's chromium for the browser checks (make check-site), unless it is already there.
# Idempotent: does nothing when /usr/bin/chromium exists. Uses sudo only when not run as root.
# The checks drive this browser with the Python playwright package (executable_path); they never
# download a browser of their own (no `playwright install`).
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if ! command -v apt-get > /dev/null; then
  echo "install_chromium.sh: no apt-get here; install Chromium so that $CHROMIUM exists" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "installing Debian's chromium package (for make check-site)"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium > /dev/null
"$CHROMIUM" --version 2> /dev/null || true
test -x "$CHROMIUM"
