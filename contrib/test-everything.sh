#!/usr/bin/env bash
# Every test, the ones that need system packages included: installs Debian's
# Chromium and ChromeDriver (the browser tests of tests/gui*.rs) when missing,
# starts a single-node Slurm (tests/slurm.rs), then runs README's test
# command with the ignored tests too, then builds the Python package into a
# fresh virtual environment with pip and runs its pytest suite against the
# agon binary just tested, then checks the deployment recipes of agon serve
# with Debian's Caddy. Run as root on Debian; CI calls it.
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

if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip >/dev/null
fi
python_env=$(mktemp -d)
trap 'rm -rf "$python_env"' EXIT
python3 -m venv "$python_env"
"$python_env/bin/pip" install -q --upgrade pip
"$python_env/bin/pip" install -q ./python pytest matplotlib
(cd python && AGON_BIN="$PWD/../target/release/agon" "$python_env/bin/pytest" -q)
contrib/deploy/check.sh
