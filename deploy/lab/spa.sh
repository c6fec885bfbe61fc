#!/usr/bin/env bash
# The official React and Vue starters on loopback, each in an older (source) and a newer (target)
# release, for trying skillshift on single-page apps and for its tests.
#
#   deploy/lab/spa.sh up   --app react|vue [--dir DIR] [--port P] [--target-port P2]
#   deploy/lab/spa.sh down --app react|vue [--dir DIR]
#   deploy/lab/spa.sh prepare --app react|vue   (what `up` builds or installs once, nothing started)
#
# `up` scaffolds each starter non-interactively with its scaffolder from npm, pinned to an exact
# version (react: create-vite's `react` template; vue: create-vue with the router), runs
# `npm install` and `npm run build` once, and keeps the build under
# ${SKILLSHIFT_LAB_CACHE:-$HOME/.cache/skillshift-lab}/spa/<app>-<version>; later runs use the
# cache and never call npm. It serves the source build on --port and the target build on
# --target-port with static_server.py and prints LAB_* KEY=value lines (also in DIR/env). It is
# idempotent: a running lab is left running. `down` stops the servers `up` started, by PID.
# Defaults: DIR ${TMPDIR:-/tmp}/spalab-<app>; ports 8030/8031 (react), 8040/8041 (vue).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
command="${1:-}"; shift || true
app=""; dir=""; port=""; target_port=""
while [ $# -gt 0 ]; do
    case "$1" in
        --app) app="$2"; shift 2 ;;
        --dir) dir="$2"; shift 2 ;;
        --port) port="$2"; shift 2 ;;
        --target-port) target_port="$2"; shift 2 ;;
        *) echo "spa.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
# Exact scaffolder versions, so a build is the same starter every time: the source an older
# release, the target the latest one. create-vite 9's React starter is a redesign of 5's (new
# layout, texts and styles); create-vue's has kept its layout, so its versions differ in texts,
# links and the stack under them (Vue 3.4 -> 3.5, Vue Router 4 -> 5, Vite 5 -> 8). Both targets
# build on Node 20.19+: create-vue 3.22+ declares Node 22 for its projects, but npm only warns.
case "$app" in
    react) scaffolder=create-vite; source_version=5.5.5; target_version=9.3.0
           pages="/"; : "${port:=8030}" "${target_port:=8031}" ;;
    vue)   scaffolder=create-vue; source_version=3.10.4; target_version=3.24.0
           pages="/,/about"; : "${port:=8040}" "${target_port:=8041}" ;;
    *) echo "usage: spa.sh up|down|prepare --app react|vue [--dir DIR] [--port P] [--target-port P2]" >&2
       exit 2 ;;
esac
# The scaffolders' own default project names (newer create-vite puts it in the page title).
project="$([ "$app" = react ] && echo vite-project || echo vue-project)"
dir="${dir:-${TMPDIR:-/tmp}/spalab-$app}"
cache="${SKILLSHIFT_LAB_CACHE:-$HOME/.cache/skillshift-lab}/spa"

down() {
    stop_all target source
    rm -f "$dir/target.serves" "$dir/source.serves"
}

scaffold() {  # scaffold VERSION (in the current directory, into ./$project)
    # Flags rather than prompts: create-vite takes the template (the --no-* flags keep newer
    # releases from asking to install and start a dev server; older ones ignore them);
    # create-vue skips its questions once any feature flag is given.
    case "$app" in
        react) npm exec --yes --package="create-vite@$1" -- \
                   create-vite "$project" --template react --no-interactive --no-immediate ;;
        vue) npm exec --yes --package="create-vue@$1" -- create-vue "$project" --router ;;
    esac </dev/null
}

build() {  # build VERSION: the starter's dist/ under the cache, built at most once
    local out="$cache/$app-$1" work
    [ -f "$out/dist/index.html" ] && return 0
    command -v npm >/dev/null 2>&1 || { echo "spa.sh: npm is needed for the first build" >&2; exit 1; }
    mkdir -p "$cache"
    # Build beside the cache and move into place at the end: an interrupted build leaves no
    # half-built directory that a later run would take for a good one.
    work="$(mktemp -d "$cache/.$app-$1.XXXXXX")"
    local log="$dir/build-$1.log"
    # (`&&` throughout: `set -e` does not apply inside the condition of an `if`.)
    if ! (
        cd "$work" && scaffold "$1" && cd "$project" &&
        # The starters ask for ^ ranges; take the exact versions they were written against
        # (the lower bounds), so a build months later resolves the same direct dependencies.
        node -e '
            const fs = require("fs"), pkg = JSON.parse(fs.readFileSync("package.json"));
            for (const k of ["dependencies", "devDependencies"])
                for (const [n, v] of Object.entries(pkg[k] || {})) pkg[k][n] = v.replace(/^[\^~]/, "");
            fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");' &&
        npm install --no-audit --no-fund &&
        npm run build
    ) </dev/null >"$log" 2>&1; then
        rm -rf "$work"
        tail -n 30 "$log" >&2
        echo "spa.sh: the $app $scaffolder@$1 build failed (see $log)" >&2
        exit 1
    fi
    # The sources, npm's lock file and the build are kept; node_modules is big and not needed.
    rm -rf "$work/$project/node_modules"
    rm -rf "$out"  # a build interrupted before it moved into place
    mv -T "$work/$project" "$out"
    rm -rf "$work"
}

serve() {  # serve NAME PORT VERSION
    # A server already up on this port with this build stays; one on another port or build
    # (an earlier `up` with other options) is replaced, so DIR/env never describes the wrong one.
    if running "$1"; then
        [ "$(cat "$dir/$1.serves" 2>/dev/null)" = "$2 $app-$3" ] && return 0
        stop_pid "$(cat "$dir/$1.pid")"
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
        echo "spa.sh: port $2 is already in use" >&2; exit 1
    fi
    setsid python3 "$here/static_server.py" --dir "$cache/$app-$3/dist" --port "$2" \
        </dev/null >"$dir/$1.log" 2>&1 &
    echo $! >"$dir/$1.pid"
    echo "$2 $app-$3" >"$dir/$1.serves"
    wait_for 15 curl -sf -o /dev/null "http://127.0.0.1:$2/" \
        || { echo "spa.sh: the $1 server on $2 did not start (see $dir/$1.log)" >&2; exit 1; }
}

prepare() {  # both builds in the cache, nothing served
    mkdir -p "$cache" "$dir"  # (DIR holds the build logs)
    (
        flock 9  # two labs coming up at once share the cache: one builds, the other waits
        build "$source_version"
        build "$target_version"
    ) 9>"$cache/.lock-$app"
}

up() {
    mkdir -p "$dir"
    prepare
    serve source "$port" "$source_version"
    serve target "$target_port" "$target_version"
    cat >"$dir/env" <<ENV
LAB_APP=$app
LAB_URL=http://127.0.0.1:$port
LAB_TARGET_URL=http://127.0.0.1:$target_port
LAB_PAGES=$pages
LAB_SOURCE_VERSION=$scaffolder@$source_version
LAB_TARGET_VERSION=$scaffolder@$target_version
ENV
    cat "$dir/env"
}

case "$command" in
    up) up ;;
    prepare) prepare ;;
    down) down ;;
    *) echo "usage: spa.sh up|down|prepare --app react|vue [--dir DIR] [--port P] [--target-port P2]" >&2
       exit 2 ;;
esac
