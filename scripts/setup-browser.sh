#!/usr/bin/env bash
# Installs headless Chromium and ChromeDriver from Debian's packages for the
# console's browser test (tests/it/console.rs), idempotently. Makes no
# network request when both are present.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-browser: chromium and chromedriver are missing and apt-get is not available; install them by hand" >&2
  exit 1
fi
echo "setup-browser: installing chromium and chromium-driver (apt-get)" >&2
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
chromium --version >&2
chromedriver --version >&2
