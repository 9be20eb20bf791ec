#!/bin/sh
# Run a command inside a throwaway D-Bus session with an unlocked gnome-keyring
# Secret Service, so keyring tests use a real OS keyring without touching yours:
#
#   tests/run_with_keyring.sh python -m pytest -m keyring
#
# The keyring daemon keeps its files in a temporary directory that is removed
# afterwards; the command sees FASTCHAT_TEST_KEYRING_SESSION=1, which the
# keyring tests require before they write anything.
# Needs dbus-daemon (dbus-run-session) and gnome-keyring (Debian: apt-get install -y gnome-keyring dbus-daemon);
# without them the command runs as it is and the keyring tests skip.
set -eu

if [ "$#" -eq 0 ]; then
    echo "usage: $0 COMMAND [ARG...]" >&2
    exit 2
fi
for tool in dbus-run-session gnome-keyring-daemon; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        # Without them the command still runs; the keyring tests skip and say why.
        echo "$0: $tool not found, so no private Secret Service: keyring tests will skip" \
             "(Debian: apt-get install -y gnome-keyring dbus-daemon)" >&2
        exec "$@"
    fi
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/fastchat-keyring.XXXXXX")
chmod 700 "$scratch"
cleanup() {
    # The daemon is stopped inside the session; retry briefly in case it was still saving its files.
    tries=0
    while ! rm -rf "$scratch" 2>/dev/null && [ "$tries" -lt 50 ]; do
        tries=$((tries + 1))
        sleep 0.1
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FASTCHAT_KEYRING_SCRATCH=$scratch
export FASTCHAT_KEYRING_SCRATCH

status=0
dbus-run-session -- sh -c '
    set -eu
    mkdir -p "$FASTCHAT_KEYRING_SCRATCH/data" "$FASTCHAT_KEYRING_SCRATCH/run"
    chmod 700 "$FASTCHAT_KEYRING_SCRATCH/run"
    # Only the daemon sees the scratch XDG dirs: its keyring files and control socket live there.
    printf "fastchat-test\n" | XDG_DATA_HOME="$FASTCHAT_KEYRING_SCRATCH/data" \
        XDG_RUNTIME_DIR="$FASTCHAT_KEYRING_SCRATCH/run" XDG_CACHE_HOME="$FASTCHAT_KEYRING_SCRATCH/run" \
        gnome-keyring-daemon --unlock --components=secrets >/dev/null
    FASTCHAT_TEST_KEYRING_SESSION=1
    export FASTCHAT_TEST_KEYRING_SESSION
    status=0
    "$@" || status=$?
    # Stop our daemon (found by the scratch path in its environment) before its files are removed.
    for dir in /proc/[0-9]*; do
        [ "$(cat "$dir/comm" 2>/dev/null)" = "gnome-keyring-d" ] || continue
        tr "\\0" "\\n" < "$dir/environ" 2>/dev/null | grep -qxF "FASTCHAT_KEYRING_SCRATCH=$FASTCHAT_KEYRING_SCRATCH" || continue
        kill "${dir#/proc/}" 2>/dev/null || true
        tries=0
        while [ -d "$dir" ] && [ "$tries" -lt 50 ]; do tries=$((tries + 1)); sleep 0.1; done
    done
    exit "$status"
' fastchat-keyring "$@" || status=$?
exit "$status"
