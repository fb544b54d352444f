#!/usr/bin/env bash
# Checks the deployment recipes with what this machine has: the systemd unit
# (systemd-analyze verify), the Caddyfile (caddy validate), and the
# Containerfile's build and run commands run as a shell would run them.
# Usage: contrib/deploy/check.sh   (from the repository, after cargo build --release)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if command -v systemd-analyze >/dev/null; then
  # verify wants the program to exist: point the unit at the built one.
  sed "s#/usr/local/bin/agon#$repo/target/release/agon#" "$here/agon-serve.service" >"$scratch/agon-serve.service"
  systemd-analyze verify "$scratch/agon-serve.service"
  echo "systemd unit: ok"
else
  echo "systemd unit: not checked (no systemd-analyze)"
fi

if command -v caddy >/dev/null; then
  caddy validate --adapter caddyfile --config "$here/Caddyfile" 2>&1 | tail -1
  echo "Caddyfile: ok"
else
  echo "Caddyfile: not checked (apt-get install caddy)"
fi

# The Containerfile's build stage: its RUN line, in the repository (what COPY . . copies).
run_line=$(sed -n '/^RUN cargo/,/^$/p' "$here/Containerfile" | sed 's/^RUN //' | tr -d '\\\n')
(cd "$repo" && bash -ec "${run_line//\/out\//$scratch/out/}")
test -x "$scratch/out/agon"
# The runtime stage's entry point, with the state directory in the scratch one.
entry=$(sed -n 's/^ENTRYPOINT \[\(.*\)\]/\1/p' "$here/Containerfile" | tr -d '",')
entry=${entry//\/usr\/local\/bin\/agon/$scratch/out/agon}
entry=${entry//\/var\/lib\/agon/$scratch}
read -ra words <<<"${entry/--port 8080/--port 0}"
"${words[@]}" >"$scratch/url" 2>/dev/null &
server=$!
for _ in $(seq 100); do [[ -s $scratch/url ]] && break; sleep 0.1; done
kill -TERM "$server"
wait "$server"
url=$(head -1 "$scratch/url")
[[ $url == http://*:* ]] || { echo "the entry point printed '$url'"; exit 1; }
echo "Containerfile: build and entry point ok ($url, stopped by SIGTERM)"
