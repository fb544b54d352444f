#!/usr/bin/env bash
# Every test, the ones that need system packages included: installs Debian's
# Chromium and ChromeDriver (the browser tests of tests/gui.rs) when missing,
# starts a single-node Slurm (tests/slurm.rs), then runs README's test
# command with the ignored tests too, then checks the deployment recipes of
# agon serve with Debian's Caddy. Run as root on Debian; CI calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
if ! command -v caddy >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq caddy >/dev/null
fi
contrib/slurm/single-node.sh
cargo test --release -- --include-ignored
contrib/deploy/check.sh
