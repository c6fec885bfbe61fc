#!/usr/bin/env bash
# A real WordPress from Debian's packages on loopback, for trying skillshift and for its tests.
#
#   deploy/wordpress/wordpress.sh up   [--dir DIR] [--port 8000] [--target-port 8001]
#   deploy/wordpress/wordpress.sh down [--dir DIR]
#   deploy/wordpress/wordpress.sh prepare   (what `up` builds or installs once, nothing started)
#
# `up` installs what is missing (wordpress, a second theme, mariadb-server, php-cli, php-mysql),
# starts MariaDB on a private socket and two PHP built-in servers on the same site and database:
# the source (theme twentytwentyone) on --port and the target variant (theme twentytwentythree)
# on --target-port; installs WordPress non-interactively, seeds posts, pages, categories,
# comments and a second user, and prints the URLs and credentials as KEY=value lines (also in
# DIR/env). It is idempotent: a running lab is left running. `down` stops every process `up`
# started, by PID (the PHP workers too). Admin: admin / admin-pass; editor: editor / editor-pass.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../lab/lib.sh"
command="${1:-}"; shift || true
dir="${TMPDIR:-/tmp}/wplab"; port=8000; target_port=8001
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --target-port) target_port="$2"; shift 2 ;;
        *) echo "wordpress.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
source_theme=twentytwentyone
target_theme=twentytwentythree

down() {
    stop_all php-target php-source mariadb
}

install_packages() {
    local missing=()
    [ -d /usr/share/wordpress ] || missing+=(wordpress)
    [ -d /usr/share/wordpress/wp-content/themes/$source_theme ] \
        || [ -d /var/lib/wordpress/wp-content/themes/$source_theme ] \
        || missing+=(wordpress-theme-$source_theme)
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
    command -v php >/dev/null 2>&1 || missing+=(php-cli)
    [[ "$(php -m 2>/dev/null)" == *mysqli* ]] || missing+=(php-mysql)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" != 0 ]; then
            echo "wordpress.sh: missing packages: ${missing[*]} (apt-get install them as root)" >&2
            exit 1
        fi
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    # The lab configuration, selected by the router (WORDPRESS_CONFIG=wplab).
    install -m 0644 "$here/config-wplab.php" /etc/wordpress/config-wplab.php
}

start_mariadb() {
    running mariadb && return 0
    # A temporary directory of its own: a server starting deletes the `#sql*` files it finds
    # in its tmpdir, and two labs up at once (the tests' workers) shared /tmp, one server
    # deleting the other's install tables mid-install.
    mkdir -p "$dir/db" "$dir/tmp"
    if [ ! -d "$dir/db/mysql" ]; then
        mariadb-install-db --datadir="$dir/db" --tmpdir="$dir/tmp" --user=root \
            --auth-root-authentication-method=socket >"$dir/mariadb-install.log" 2>&1
    fi
    setsid /usr/sbin/mariadbd --datadir="$dir/db" --tmpdir="$dir/tmp" --socket="$dir/mysql.sock" \
        --skip-networking --user=root --pid-file="$dir/mariadbd.pid" --log-error="$dir/mariadb.log" \
        --innodb-buffer-pool-size=64M </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/mariadb.pid"
    wait_for 60 mariadb-admin --socket="$dir/mysql.sock" ping \
        || { echo "wordpress.sh: MariaDB did not start (see $dir/mariadb.log)" >&2; exit 1; }
    mariadb --socket="$dir/mysql.sock" -e "
        CREATE DATABASE IF NOT EXISTS wplab;
        CREATE USER IF NOT EXISTS 'wplab'@'localhost' IDENTIFIED BY 'wplab';
        GRANT ALL ON wplab.* TO 'wplab'@'localhost';"
}

start_php() {  # start_php NAME PORT THEME
    running "php-$1" && return 0
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
        echo "wordpress.sh: port $2 is already in use" >&2; exit 1
    fi
    # Several workers: WordPress calls itself over HTTP, which deadlocks a single worker.
    WPLAB_THEME="$3" PHP_CLI_SERVER_WORKERS=4 setsid php -S "127.0.0.1:$2" -t /usr/share/wordpress \
        "$here/router.php" </dev/null >"$dir/php-$1.log" 2>&1 &
    echo $! >"$dir/php-$1.pid"
    wait_for 30 curl -s -o /dev/null "http://127.0.0.1:$2/wp-includes/css/dashicons.min.css" \
        || { echo "wordpress.sh: PHP server on $2 did not start (see $dir/php-$1.log)" >&2; exit 1; }
}

installed() {  # (no `curl | grep -q`: with pipefail, grep's early exit fails the pipe)
    local page
    page="$(curl -s "$WPLAB_URL/wp-login.php")"
    [[ "$page" == *'id="loginform"'* ]]
}

install_wordpress() {
    installed && return 0
    curl -s -o /dev/null -w '%{http_code}' "$WPLAB_URL/wp-admin/install.php?step=2" \
        --data-urlencode "weblog_title=Lab News" --data-urlencode "user_name=admin" \
        --data-urlencode "admin_password=admin-pass" --data-urlencode "admin_password2=admin-pass" \
        --data-urlencode "pw_weak=1" --data-urlencode "admin_email=admin@lab.test" \
        --data-urlencode "blog_public=0" --data-urlencode "language=" >"$dir/install.status"
    installed || { echo "wordpress.sh: the WordPress install did not complete" >&2; exit 1; }
}

up() {
    mkdir -p "$dir"
    with_package_lock install_packages
    export WPLAB_DB_SOCKET="$dir/mysql.sock" WPLAB_URL="http://127.0.0.1:$port"
    start_mariadb
    start_php source "$port" ""
    install_wordpress
    WPLAB_THEME="" php -d display_errors=stderr "$here/seed.php" >"$dir/seed.log" 2>&1 \
        || { cat "$dir/seed.log" >&2; exit 1; }
    mariadb --socket="$dir/mysql.sock" wplab -e "
        UPDATE wp_options SET option_value='$source_theme' WHERE option_name IN ('template','stylesheet');"
    start_php target "$target_port" "$target_theme"
    cat >"$dir/env" <<ENV
WPLAB_URL=$WPLAB_URL
WPLAB_TARGET_URL=http://127.0.0.1:$target_port
WPLAB_DB_SOCKET=$dir/mysql.sock
WPLAB_ADMIN=admin:admin-pass
WPLAB_EDITOR=editor:editor-pass
WPLAB_SOURCE_THEME=$source_theme
WPLAB_TARGET_THEME=$target_theme
LAB_APP=wordpress
LAB_URL=$WPLAB_URL
LAB_TARGET_URL=http://127.0.0.1:$target_port
LAB_PAGES=/,/?p=4,/wp-login.php
LAB_USER=admin
LAB_PASSWORD=admin-pass
ENV
    cat "$dir/env"
}

case "$command" in
    up) up ;;
    prepare) with_package_lock install_packages ;;
    down) down ;;
    *) echo "usage: wordpress.sh up|down|prepare [--dir DIR] [--port PORT] [--target-port PORT]" >&2; exit 2 ;;
esac
