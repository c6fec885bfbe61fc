#!/usr/bin/env bash
# Wagtail (a Django CMS, from PyPI) on loopback in two major versions, for trying skillshift and
# for its tests.
#
#   deploy/lab/wagtail.sh up   [--dir DIR] [--port 8020] [--target-port 8021]
#   deploy/lab/wagtail.sh down [--dir DIR]
#   deploy/lab/wagtail.sh prepare   (what `up` builds or installs once, nothing started)
#
# `up` builds two virtualenvs once, exactly as locked in wagtail-VERSION.txt next to this script
# (cached under ${SKILLSHIFT_LAB_CACHE:-~/.cache/skillshift-lab}/wagtail): the source is the
# 6.3 LTS, the target 8.0, the newest major. For each it makes a project with `wagtail start`
# (its own SQLite DB), adds a content page type, migrates and collects static files, once, in
# the cache (rebuilt when the files it is made from change; `prepare` does this too), and copies
# it into DIR; then creates the superuser and seeds pages (wagtail-seed.py), and serves it with
# Django's runserver
# (--noreload: one process, no reloader child) and WhiteNoise for the static files: the source on
# --port, the target on --target-port. It prints KEY=value lines (also in DIR/env). Idempotent:
# a running lab is left running. `down` stops every process `up` started, by PID.
# Admin: admin / admin-pass.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
command="${1:-}"; shift || true
dir="${TMPDIR:-/tmp}/wtlab"; port=8020; target_port=8021
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --target-port) target_port="$2"; shift 2 ;;
        *) echo "wagtail.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
source_version=6.3.8
target_version=8.0.1
cache="${SKILLSHIFT_LAB_CACHE:-$HOME/.cache/skillshift-lab}/wagtail"
source_url="http://127.0.0.1:$port"
target_url="http://127.0.0.1:$target_port"
# Where a login form may be posted from (Django checks Origin): either app's URL, since the proxy
# serves the source URL from the target.
origins="$source_url,$target_url,http://localhost:$port,http://localhost:$target_port"
export DJANGO_SETTINGS_MODULE=labsite.settings.production

down() {
    stop_all target source
}

find_python() {  # Django 6 (the target's) needs Python 3.12 or newer
    local candidates=("${WAGTAIL_LAB_PYTHON:-}" python3.13 python3.12)
    if command -v pyenv >/dev/null 2>&1; then
        candidates+=("$(pyenv root)"/versions/3.1[2-9]*/bin/python3)
    fi
    candidates+=(python3)
    for py in "${candidates[@]}"; do
        [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 \
            && "$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null \
            && { echo "$py"; return 0; }
    done
    echo "wagtail.sh: needs Python >= 3.12 with venv (or set WAGTAIL_LAB_PYTHON)" >&2
    exit 1
}

make_venv() {  # make_venv VERSION: the cached venv, rebuilt when its lock file changes
    local lock="$here/wagtail-$1.txt" venv="$cache/venv-$1" stamp
    stamp="$(sha256sum <"$lock" | cut -c1-16)"
    [ "$(cat "$venv/.lab-lock" 2>/dev/null)" = "$stamp" ] && return 0
    rm -rf "$venv"
    "$(find_python)" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$lock" >"$cache/pip-$1.log" 2>&1 \
        || { tail -20 "$cache/pip-$1.log" >&2; exit 1; }
    echo "$stamp" >"$venv/.lab-lock"  # last: a half-built venv is rebuilt next time
}

manage() {  # manage NAME VERSION ARGS...: run a command in the project with its venv
    local name="$1" version="$2"; shift 2
    (cd "$dir/$name" && WAGTAIL_LAB_NAME="$name" "$cache/venv-$version/bin/python" "$@")
}

project_stamp() {  # project_stamp VERSION: a hash of everything a project is made from
    # (this script too: how it is made is in make_template)
    cat "$here/wagtail-$1.txt" "$here/wagtail-local.py" "$here/wagtail-models.py" \
        "$here"/wagtail-templates/*.html "$here/wagtail.sh" | sha256sum | cut -c1-16
}

make_template() {  # make_template VERSION: a migrated project with its static files, in the cache
    local version="$1" template="$cache/project-$1" stamp
    stamp="$(project_stamp "$version")"
    [ "$(cat "$template/.lab-stamp" 2>/dev/null)" = "$stamp" ] && return 0
    local build="$template.build" log="$cache/project-$1.log"
    rm -rf "$template" "$build"; mkdir -p "$build"
    (   # && throughout: errexit does not hold on the left of ||
        python="$cache/venv-$version/bin/python"
        "$cache/venv-$version/bin/wagtail" start labsite "$build" \
            && install -m 0644 "$here/wagtail-local.py" "$build/labsite/settings/local.py" \
            && { echo; echo; cat "$here/wagtail-models.py"; } >>"$build/home/models.py" \
            && install -m 0644 "$here"/wagtail-templates/*.html "$build/home/templates/home/" \
            && cd "$build" \
            && "$python" manage.py makemigrations home \
            && "$python" manage.py migrate --noinput \
            && "$python" manage.py collectstatic --noinput
    ) >"$log" 2>&1 || { tail -30 "$log" >&2; echo "wagtail.sh: the $version project failed" >&2; exit 1; }
    echo "$stamp" >"$build/.lab-stamp"
    mv "$build" "$template"  # last: a half-built project is rebuilt next time
}

make_project() {  # make_project NAME VERSION: the cached project copied into DIR, once per DIR
    local name="$1" version="$2" project="$dir/$1"
    [ -f "$project/.lab-ready" ] && return 0
    rm -rf "$project"
    cp -a "$cache/project-$version" "$project"
    rm -f "$project/.lab-stamp"
    touch "$project/.lab-ready"
}

start_server() {  # start_server NAME VERSION PORT
    local name="$1" version="$2" port="$3" url="http://127.0.0.1:$3"
    if running "$name"; then
        [ "$(cat "$dir/$name.port" 2>/dev/null)" = "$port" ] && return 0
        echo "wagtail.sh: $name already runs on another port (run down first)" >&2; exit 1
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "wagtail.sh: port $port is already in use" >&2; exit 1
    fi
    # The seed also points the Site at this port, so a restart on new ports gets full URLs right.
    WAGTAIL_LAB_URL="$url" manage "$name" "$version" "$here/wagtail-seed.py" \
        >"$dir/$name-admin-pages" 2>"$dir/$name-seed.log" \
        || { cat "$dir/$name-seed.log" >&2; exit 1; }
    # runserver rather than gunicorn: one process per app (nothing forked to track), threaded,
    # and WhiteNoise (in wagtail-local.py) serves the collected static files.
    WAGTAIL_LAB_NAME="$name" WAGTAIL_LAB_URL="$url" WAGTAIL_LAB_ORIGINS="$origins" \
        setsid env -C "$dir/$name" "$cache/venv-$version/bin/python" manage.py runserver \
        --noreload --nostatic "127.0.0.1:$port" </dev/null >"$dir/$name.log" 2>&1 &
    echo $! >"$dir/$name.pid"; echo "$port" >"$dir/$name.port"
    if ! wait_for 60 curl -sf -o /dev/null "$url/admin/login/"; then
        tail -20 "$dir/$name.log" >&2
        echo "wagtail.sh: $name on $port did not start" >&2; exit 1
    fi
}

prepare() {  # both virtualenvs and both migrated projects in the cache, nothing served
    mkdir -p "$cache"
    (
        flock 9  # two labs coming up at once share the cache
        make_venv "$source_version"
        make_venv "$target_version"
        make_template "$source_version"
        make_template "$target_version"
    ) 9>"$cache/.lock"
}

up() {
    mkdir -p "$dir"
    prepare
    (
        flock 9  # copied while no other lab rebuilds them
        make_project source "$source_version"
        make_project target "$target_version"
    ) 9>"$cache/.lock"
    start_server source "$source_version" "$port"
    start_server target "$target_version" "$target_port"
    # The admin paths hold page ids; both DBs are seeded alike, so they agree.
    if ! cmp -s "$dir/source-admin-pages" "$dir/target-admin-pages"; then
        echo "wagtail.sh: source and target page ids differ" >&2; exit 1
    fi
    cat >"$dir/env" <<ENV
LAB_APP=wagtail
LAB_URL=$source_url
LAB_TARGET_URL=$target_url
LAB_PAGES=/,/about-us/,/admin/login/,/news/,/news/library-reopens/
LAB_ADMIN_PAGES=$(cat "$dir/source-admin-pages")
LAB_USER=admin
LAB_PASSWORD=admin-pass
LAB_SOURCE_VERSION=$source_version
LAB_TARGET_VERSION=$target_version
ENV
    cat "$dir/env"
}

case "$command" in
    up) up ;;
    prepare) prepare ;;
    down) down ;;
    *) echo "usage: wagtail.sh up|down|prepare [--dir DIR] [--port P] [--target-port P]" >&2; exit 2 ;;
esac
