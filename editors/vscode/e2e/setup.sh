#!/usr/bin/env bash
# Set up a real VS Code for the end-to-end suite, offline but for the package registries:
# Chromium from Debian, code-server (VS Code as a web server) from npm, cached by version.
# Idempotent: a second run finds everything in place and returns in a second.
# Usage: setup.sh RG  (an rg binary: code-server's @vscode/ripgrep would fetch one from GitHub)
set -euo pipefail

CODE_SERVER_VERSION=4.99.3 # the last release that runs on Node 20 (VS Code 1.99.3)
RIPGREP_VERSION=1.15.11    # @vscode/ripgrep of that release, and the rg tarball it looks for
CACHE=${LSP_AGENT_CI_CACHE:-$HOME/.cache/lsp-agent-ci}/code-server-$CODE_SERVER_VERSION
RG=$(readlink -f "${1:?usage: setup.sh PATH-TO-rg}")

# Native modules of code-server are built against these headers; Chromium is the browser.
packages=(libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev pkg-config g++ make python3 chromium)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "setup: apt-get install ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ -x $CACHE/node_modules/.bin/code-server ]]; then
	echo "setup: code-server $CODE_SERVER_VERSION cached in $CACHE"
	exit 0
fi

# Build in a scratch folder next to the cache and rename it into place only when complete,
# so an interrupted install is never mistaken for a cached one.
build=$CACHE.partial.$$
trap 'rm -rf "$build"' EXIT
rm -rf "$build" && mkdir -p "$build"
cd "$build"

# @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache (under the temp dir)
# already holds the release tarball: give it one holding our rg.
rg_cache=${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RIPGREP_VERSION
mkdir -p "$rg_cache"
tar czf "$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" \
	-C "$(dirname "$RG")" "$(basename "$RG")" --transform 's,.*,rg,'

echo "setup: npm install code-server@$CODE_SERVER_VERSION (builds native modules: minutes)"
echo '{"private": true}' >package.json
npm install --no-audit --no-fund --ignore-scripts "code-server@$CODE_SERVER_VERSION"
# code-server's postinstall refuses root without unsafe-perm, asks which package manager ran it,
# and node-pty's build calls `npx node-gyp`: give it that environment.
(cd node_modules/code-server &&
	npm_config_user_agent="npm/11 node/v20 linux x64" npm_config_yes=true npm_config_unsafe_perm=true \
		sh ./postinstall.sh)
# argon2's prebuilt download is unreachable; it builds from source instead.
(cd node_modules/argon2 && npm_config_yes=true npx node-pre-gyp install --fallback-to-build)
node_modules/.bin/code-server --version

rm -rf "$CACHE" && mv "$build" "$CACHE"
trap - EXIT
echo "setup: code-server $CODE_SERVER_VERSION installed in $CACHE"
