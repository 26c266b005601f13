#!/usr/bin/env bash
# Installs code-server (VS Code in a browser, from the npm registry) into a
# cache folder, once:   install_code_server.sh DEST
# Follows shared/reference/editor-testing.md: 4.100.3 is the newest that runs
# on Node 20; its native modules build against /usr's Node headers (no header
# download), with Debian's libkrb5-dev; @vscode/ripgrep's postinstall is fed
# Debian's rg under the archive name it would otherwise download.
set -euo pipefail
version=4.100.3
dest=${1:?usage: install_code_server.sh DEST}
bin="$dest/node_modules/.bin/code-server"
stamp="$dest/.installed-$version"
if [ -x "$bin" ] && [ -f "$stamp" ]; then
  echo "$bin"
  exit 0
fi

command -v rg >/dev/null || { echo "install_code_server: ripgrep (Debian ripgrep) is needed" >&2; exit 1; }
rg_cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
rg_archive="$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ ! -s "$rg_archive" ]; then
  mkdir -p "$rg_cache"
  work=$(mktemp -d)
  cp "$(command -v rg)" "$work/rg"
  tar -czf "$rg_archive" -C "$work" rg
  rm -rf "$work"
fi

mkdir -p "$dest"
[ -f "$dest/package.json" ] || echo '{"name":"oomlens-code-server-cache","private":true}' >"$dest/package.json"
echo "install_code_server: installing code-server@$version into $dest (a few minutes: about 300 MB from the npm registry)" >&2
(
  cd "$dest"
  # unsafe_perm: code-server's postinstall refuses to run as root without it.
  # dangerously_allow_all_scripts: npm 11 blocks dependencies' install scripts
  # unless package.json#allowScripts lists them, and code-server's postinstall
  # runs nested npm installs of VS Code's own package.json (node-pty, spdlog,
  # ripgrep, ...) that no allowScripts here can reach. Older npm ignores both.
  npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
    npm_config_nodedir=/usr npm_config_yes=true \
    npm install --no-audit --no-fund --loglevel=error "code-server@$version" >&2
)
[ -x "$bin" ] || { echo "install_code_server: $bin missing after npm install" >&2; exit 1; }
touch "$stamp"
echo "$bin"
