#!/usr/bin/env bash
# A real MediaWiki from Debian's package on loopback, for trying skillshift and for its tests.
#
#   deploy/lab/mediawiki.sh up   [--dir DIR] [--port 8010] [--target-port 8011]
#   deploy/lab/mediawiki.sh down [--dir DIR]
#   deploy/lab/mediawiki.sh prepare   (what `up` builds or installs once, nothing started)
#
# `up` installs what is missing (mediawiki, php-cli, php-sqlite3 and the PHP extensions MediaWiki
# needs), installs a fresh wiki with SQLite under DIR non-interactively and starts two PHP
# built-in servers on the same wiki and database: the source (skin Vector legacy, 2010) on --port
# and the target variant (skin Vector 2022) on --target-port. It seeds a Main Page, "Lab Table"
# (a sortable table, a collapsible block, sections and a table of contents) and "Lab Notes" (for
# editing), and prints the URLs, pages and credentials as KEY=value lines (also in DIR/env). It
# is idempotent: a running lab is left running. `down` stops every process `up` started, by PID
# (the PHP workers too). Admin: admin / admin-pass-123.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
command="${1:-}"; shift || true
dir="${TMPDIR:-/tmp}/mwlab"; port=8010; target_port=8011
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --target-port) target_port="$2"; shift 2 ;;
        *) echo "mediawiki.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
mw=/usr/share/mediawiki
source_skin=vector           # Vector legacy (2010)
target_skin=vector-2022      # shipped in the same Vector skin directory by Debian's package
user=admin
password=admin-pass-123      # 10+ characters, not in MediaWiki's common-password list
pages=/index.php/Main_Page,/index.php/Lab_Table,/index.php/Lab_Notes,/index.php?title=Special:UserLogin

down() {
    stop_all php-target php-source
}

install_packages() {
    local missing=() modules
    [ -f $mw/skins/Vector/skin.json ] || missing+=(mediawiki)
    command -v php >/dev/null 2>&1 || missing+=(php-cli)
    modules="$(php -m 2>/dev/null || true)"
    [[ "$modules" == *pdo_sqlite* ]] || missing+=(php-sqlite3)
    [[ "$modules" == *intl* ]] || missing+=(php-intl)
    [[ "$modules" == *mbstring* ]] || missing+=(php-mbstring)
    [[ "$modules" == *dom* ]] || missing+=(php-xml)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" != 0 ]; then
            echo "mediawiki.sh: missing packages: ${missing[*]} (apt-get install them as root)" >&2
            exit 1
        fi
        apt-get update -qq
        # No recommends: they would pull a MySQL server, APCu and more that the lab does not use.
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    fi
}

install_wiki() {
    # install.php writes LocalSettings.php last: without it, whatever is in DIR is a failed try.
    if [ ! -f "$dir/LocalSettings.php" ]; then
        rm -rf "$dir/data"
        mkdir -p "$dir/data"
        php $mw/maintenance/install.php --dbtype sqlite --dbpath "$dir/data" --dbname mwlab \
            --server "http://127.0.0.1:$port" --scriptpath "" --lang en --skins Vector \
            --pass "$password" --confpath "$dir" "Lab Wiki" "$user" >"$dir/install.log" 2>&1 \
            || { cat "$dir/install.log" >&2; rm -f "$dir/LocalSettings.php"; exit 1; }
        # The lab's settings (skin per server, URLs from the Host header) override the generated ones.
        echo 'require __DIR__ . "/LabSettings.php";' >>"$dir/LocalSettings.php"
    fi
    install -m 0644 "$here/mediawiki-settings.php" "$dir/LabSettings.php"
    mkdir -p "$dir/cache"
}

start_php() {  # start_php NAME PORT SKIN
    running "php-$1" && return 0
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
        echo "mediawiki.sh: port $2 is already in use" >&2; exit 1
    fi
    # Several workers: a page loads many load.php requests at once, and one slow request
    # (the first one fills the localisation cache) must not stall the rest.
    MW_CONFIG_FILE="$dir/LocalSettings.php" MWLAB_SKIN="$3" PHP_CLI_SERVER_WORKERS=4 \
        setsid php -S "127.0.0.1:$2" -t $mw \
        </dev/null >"$dir/php-$1.log" 2>&1 &
    echo $! >"$dir/php-$1.pid"
    wait_for 60 curl -sf -o /dev/null "http://127.0.0.1:$2/load.php?modules=startup&only=scripts" \
        || { echo "mediawiki.sh: PHP server on $2 did not start (see $dir/php-$1.log)" >&2; exit 1; }
}

up() {
    mkdir -p "$dir"
    with_package_lock install_packages
    install_wiki
    # The seed compares before it writes, so a repeated `up` changes nothing (and keeps user edits
    # to Lab Notes).
    MW_CONFIG_FILE="$dir/LocalSettings.php" MW_INSTALL_PATH=$mw \
        php "$here/mediawiki-seed.php" >"$dir/seed.log" 2>&1 || { cat "$dir/seed.log" >&2; exit 1; }
    start_php source "$port" "$source_skin"
    start_php target "$target_port" "$target_skin"
    cat >"$dir/env" <<ENV
LAB_APP=mediawiki
LAB_URL=http://127.0.0.1:$port
LAB_TARGET_URL=http://127.0.0.1:$target_port
LAB_PAGES=$pages
LAB_USER=$user
LAB_PASSWORD=$password
LAB_SOURCE_SKIN=$source_skin
LAB_TARGET_SKIN=$target_skin
ENV
    cat "$dir/env"
}

case "$command" in
    up) up ;;
    prepare) with_package_lock install_packages ;;
    down) down ;;
    *) echo "usage: mediawiki.sh up|down|prepare [--dir DIR] [--port PORT] [--target-port PORT]" >&2; exit 2 ;;
esac
