#!/usr/bin/env bash
# Installs handoffd and handoffctl with their systemd unit, sysusers and tmpfiles
# entries, configuration file, shell completions and manual pages, and handoff-agent
# with its systemd user unit and XDG autostart entry; with --uninstall, removes them.
# Run by "make install" (which builds the release binaries first) and
# "make uninstall", which pass:
#   BIN_DIR  where the release build put handoffd and handoffctl (install only)
#   MAN_DIR  where scripts/manpages.sh wrote the manual pages (install only;
#            empty: no manual pages)
#   PREFIX   installation prefix (default /usr/local)
#   DESTDIR  staging root for packaging (default: empty, the live system)
#   BLUETOOTH_CONFIG  "no" to leave /etc/bluetooth/main.conf alone (default yes;
#                     the same as --no-bluetooth-config)
# Install never overwrites a configuration file that differs from the shipped
# one: the new one goes next to it as handoffd.toml.new. It turns on LE address
# privacy in bluetoothd's main.conf ([General] Privacy = device, only that key,
# keeping the original as main.conf.handoff-orig), without restarting bluetooth.
# Uninstall keeps a changed configuration file, the state directory (account
# keys), the 'handoff' account and the Privacy setting, and says so.
set -euo pipefail

source_root=$(cd "$(dirname "$0")/.." && pwd)
shipped_config="$source_root/Config/handoffd.toml"
# shellcheck source=scripts/bluetooth-privacy.sh
source "$source_root/scripts/bluetooth-privacy.sh"
BLUETOOTH_CONFIG=${BLUETOOTH_CONFIG:-yes}

# MARK: Paths (the same for install and uninstall)
#
# systemd searches $PREFIX/lib/systemd/system and $PREFIX/lib/sysusers.d only
# for PREFIX=/usr and PREFIX=/usr/local; any other prefix gets the /etc
# directories, which are always searched. The configuration is always
# /etc/handoffd/handoffd.toml: that is where handoffd looks.

PREFIX=${PREFIX:-/usr/local}
PREFIX=${PREFIX%/}
DESTDIR=${DESTDIR:-}
DESTDIR=${DESTDIR%/}

case "$PREFIX" in
/usr | /usr/local)
    unit_dir="$DESTDIR$PREFIX/lib/systemd/system"
    user_unit_dir="$DESTDIR$PREFIX/lib/systemd/user"
    sysusers_dir="$DESTDIR$PREFIX/lib/sysusers.d"
    tmpfiles_dir="$DESTDIR$PREFIX/lib/tmpfiles.d"
    ;;
*)
    unit_dir="$DESTDIR/etc/systemd/system"
    user_unit_dir="$DESTDIR/etc/systemd/user"
    sysusers_dir="$DESTDIR/etc/sysusers.d"
    tmpfiles_dir="$DESTDIR/etc/tmpfiles.d"
    ;;
esac
# Debian's layout (make deb): system units in /lib/systemd/system, as bookworm's
# packages have them.
[[ -n "${UNIT_DIR:-}" ]] && unit_dir="$DESTDIR$UNIT_DIR"

bin_dir="$DESTDIR$PREFIX/bin"
autostart_file="$DESTDIR/etc/xdg/autostart/handoff-agent.desktop"
config_dir="$DESTDIR/etc/handoffd"
config_file="$config_dir/handoffd.toml"
bash_completion="$DESTDIR$PREFIX/share/bash-completion/completions/handoffctl"
zsh_completion="$DESTDIR$PREFIX/share/zsh/site-functions/_handoffctl"
fish_completion="$DESTDIR$PREFIX/share/fish/vendor_completions.d/handoffctl.fish"
man_dir="$DESTDIR$PREFIX/share/man"
# Every page scripts/manpages.sh may write; uninstall removes those present.
man_pages=(handoffctl.1 handoff-agent.1 handoff-example-viewer.1 handoffd.8 handoffd.toml.5 handoff-protocol.7)
state_dir="$DESTDIR/var/lib/handoffd"
bluetooth_main_conf="/etc/bluetooth/main.conf"

# Whether this is the running system (not a DESTDIR staging tree) under systemd.
live=false
[[ -z "$DESTDIR" && -d /run/systemd/system ]] && live=true

action=install
step() { printf '%s: %s\n' "$action" "$*"; }

# MARK: Uninstall

uninstall() {
    remove() {
        if [[ -e "$1" || -L "$1" ]]; then
            rm -f "$1"
            step "removed $1"
        else
            step "$1 was not there"
        fi
    }

    if $live && [[ -e "$user_unit_dir/handoff-agent.service" ]]; then
        systemctl --global disable handoff-agent.service 2>/dev/null || true
        step "disabled handoff-agent.service for every user (running agents stop at logout)"
    fi
    if $live && systemctl cat handoffd.service >/dev/null 2>&1; then
        systemctl disable --now handoffd.service 2>/dev/null || true
        step "stopped and disabled handoffd.service"
    fi

    remove "$bin_dir/handoffd"
    remove "$bin_dir/handoffctl"
    [[ -e "$bin_dir/handoff-agent" ]] && remove "$bin_dir/handoff-agent"
    remove "$unit_dir/handoffd.service"
    [[ -e "$user_unit_dir/handoff-agent.service" ]] && remove "$user_unit_dir/handoff-agent.service"
    [[ -e "$autostart_file" ]] && remove "$autostart_file"
    remove "$sysusers_dir/handoffd.conf"
    remove "$tmpfiles_dir/handoffd.conf"
    for page in "${man_pages[@]}"; do
        for file in "$man_dir/man${page##*.}/$page" "$man_dir/man${page##*.}/$page.gz"; do
            [[ -e "$file" ]] && remove "$file"
        done
    done
    remove "$bash_completion"
    remove "$zsh_completion"
    remove "$fish_completion"

    if [[ -e "$config_file.new" ]]; then
        if cmp -s "$shipped_config" "$config_file.new"; then
            remove "$config_file.new"
        else
            step "kept $config_file.new: it is not the file this version ships"
        fi
    fi
    if [[ -e "$config_file" ]]; then
        if cmp -s "$shipped_config" "$config_file"; then
            remove "$config_file"
        else
            step "kept $config_file: it was changed (delete it yourself if you no longer want it)"
        fi
    fi
    rmdir "$config_dir" 2>/dev/null && step "removed $config_dir" || true

    if [[ -d "$state_dir" ]]; then
        step "kept $state_dir: it holds the account keys (delete it yourself to forget them)"
    fi
    if $live; then
        systemctl daemon-reload
        step "systemctl daemon-reload"
    fi
    if [[ -z "$DESTDIR" && -e "$bluetooth_main_conf.handoff-orig" ]]; then
        step "kept [General] Privacy = device in $bluetooth_main_conf (other software may rely on it;" \
            "the file before install is $bluetooth_main_conf.handoff-orig)"
    fi
    if [[ -z "$DESTDIR" ]] && getent passwd handoff >/dev/null; then
        step "kept the system account 'handoff' (remove it with: userdel handoff; groupdel handoff)"
    fi
    step "done"
}

# MARK: Install

# LE address privacy in bluetoothd's main.conf: without it handoffd never advertises
# connectably, so activities published here cannot be continued elsewhere.
configure_bluetooth_privacy() {
    if [[ "$BLUETOOTH_CONFIG" == no ]]; then
        step "left $bluetooth_main_conf alone (BLUETOOTH_CONFIG=no); activities published here can be" \
            "continued elsewhere only with [General] Privacy = device there ('handoffctl doctor' checks it)"
        return
    fi
    if [[ -n "$DESTDIR" ]]; then
        step "DESTDIR is set: left $bluetooth_main_conf alone (a package sets [General] Privacy = device" \
            "when it is installed)"
        return
    fi
    local report line
    report=$(mktemp)
    # Not in a subshell: BLUETOOTH_PRIVACY_CHANGED must reach this shell.
    if ! set_bluetooth_privacy "$bluetooth_main_conf" > "$report"; then
        BLUETOOTH_PRIVACY_CHANGED=no
        echo "could not edit $bluetooth_main_conf" >> "$report"
    fi
    while IFS= read -r line; do step "$line"; done < "$report"
    rm -f "$report"
    if [[ "$BLUETOOTH_PRIVACY_CHANGED" == yes ]]; then
        step "LE privacy takes effect after 'sudo systemctl restart bluetooth' (which briefly disconnects" \
            "Bluetooth devices) or a reboot; 'handoffctl doctor' checks that it is on"
    fi
}

install_all() {
    : "${BIN_DIR:?BIN_DIR must name the directory holding the release build of handoffd and handoffctl}"

    for binary in handoffd handoffctl handoff-agent; do
        [[ -x "$BIN_DIR/$binary" ]] || {
            step "$BIN_DIR/$binary is missing: build it first (make install does)" >&2
            exit 1
        }
    done

    # Binaries, without their DWARF debug information (a third of their size);
    # the symbols stay, so crash backtraces still name functions.
    programs=(handoffd handoffctl)
    [[ -x "$BIN_DIR/handoff-agent" ]] && programs+=(handoff-agent)
    for binary in "${programs[@]}"; do
        install -D -m 0755 "$BIN_DIR/$binary" "$bin_dir/$binary"
        if command -v "${STRIP:-strip}" >/dev/null; then
            "${STRIP:-strip}" --strip-debug "$bin_dir/$binary"
        fi
        step "$bin_dir/$binary"
    done

    # The unit: ExecStart follows PREFIX.
    unit_text=$(sed "s|^ExecStart=/usr/local/bin/handoffd\$|ExecStart=$PREFIX/bin/handoffd|" "$source_root/systemd/handoffd.service")
    grep -qx "ExecStart=$PREFIX/bin/handoffd" <<<"$unit_text" \
        || { step "could not set ExecStart in systemd/handoffd.service" >&2; exit 1; }
    install -d -m 0755 "$unit_dir"
    printf '%s\n' "$unit_text" > "$unit_dir/handoffd.service"
    chmod 0644 "$unit_dir/handoffd.service"
    step "$unit_dir/handoffd.service (ExecStart=$PREFIX/bin/handoffd)"

    # The desktop agent: a user unit for sessions systemd manages, an autostart entry for
    # the others (it carries X-systemd-skip, so the two never both run); both follow PREFIX.
    install -d -m 0755 "$user_unit_dir" "$(dirname "$autostart_file")"
    sed "s|/usr/local/bin/handoff-agent|$PREFIX/bin/handoff-agent|" "$source_root/systemd/user/handoff-agent.service" \
        > "$user_unit_dir/handoff-agent.service"
    chmod 0644 "$user_unit_dir/handoff-agent.service"
    step "$user_unit_dir/handoff-agent.service"
    sed "s|/usr/local/bin/handoff-agent|$PREFIX/bin/handoff-agent|" "$source_root/Config/autostart/handoff-agent.desktop" \
        > "$autostart_file"
    chmod 0644 "$autostart_file"
    step "$autostart_file"

    # The system account, and its state directory.
    install -D -m 0644 "$source_root/systemd/handoffd.sysusers.conf" "$sysusers_dir/handoffd.conf"
    step "$sysusers_dir/handoffd.conf"
    install -D -m 0644 "$source_root/systemd/handoffd.tmpfiles.conf" "$tmpfiles_dir/handoffd.conf"
    step "$tmpfiles_dir/handoffd.conf"

    # The configuration: kept when the administrator changed it.
    install -d -m 0755 "$config_dir"
    if [[ ! -e "$config_file" ]]; then
        install -m 0644 "$shipped_config" "$config_file"
        step "$config_file"
    elif cmp -s "$shipped_config" "$config_file"; then
        rm -f "$config_file.new"
        step "$config_file (unchanged)"
    else
        install -m 0644 "$shipped_config" "$config_file.new"
        step "$config_file differs from the shipped one and is kept;" \
            "the new one is $config_file.new: compare them and merge by hand"
    fi

    configure_bluetooth_privacy

    # Shell completions, generated by handoffctl itself.
    declare -A completion_paths=(
        [bash]="$bash_completion"
        [zsh]="$zsh_completion"
        [fish]="$fish_completion"
    )
    for shell in bash zsh fish; do
        target=${completion_paths[$shell]}
        scratch=$(mktemp)
        if "$BIN_DIR/handoffctl" --generate-completion-script "$shell" > "$scratch" 2>/dev/null && [[ -s "$scratch" ]]; then
            # Completions are sourced, not run: no #! line (bash-completion's rule).
            sed -i '1{/^#!/d}' "$scratch"
            install -D -m 0644 "$scratch" "$target"
            step "$target"
        else
            step "skipped the $shell completion: 'handoffctl --generate-completion-script $shell' failed" \
                "(is handoffctl complete yet?)" >&2
        fi
        rm -f "$scratch"
    done

    # Manual pages, as scripts/manpages.sh wrote them.
    if [[ -n "${MAN_DIR:-}" ]]; then
        for page in "${man_pages[@]}"; do
            [[ -e "$MAN_DIR/$page" ]] || continue
            # A program's page only with the program.
            [[ $page == *.1 && " ${programs[*]} " != *" ${page%.1} "* ]] && continue
            install -D -m 0644 "$MAN_DIR/$page" "$man_dir/man${page##*.}/$page"
            step "$man_dir/man${page##*.}/$page"
        done
    else
        step "skipped the manual pages: MAN_DIR is not set (make install sets it)"
    fi

    # Make the live system pick it all up.
    if $live; then
        systemd-sysusers "$sysusers_dir/handoffd.conf"
        step "systemd-sysusers: account 'handoff' present"
        systemd-tmpfiles --create "$tmpfiles_dir/handoffd.conf"
        step "systemd-tmpfiles: /var/lib/handoffd present"
        systemctl daemon-reload
        step "systemctl daemon-reload"
        if systemctl --quiet is-active handoffd.service; then
            step "handoffd is running the old binary: systemctl restart handoffd"
        else
            step "start it with: systemctl enable --now handoffd"
        fi
        step "let a user use Handoff with: usermod -aG handoff USER (then log in again)"
        systemctl --global enable handoff-agent.service
        step "enabled handoff-agent.service for every user's graphical session (from their next login)"
    elif [[ -z "$DESTDIR" ]]; then
        step "systemd is not running: skipped systemd-sysusers and systemctl daemon-reload"
    fi
    step "done"
}

mode=install
for argument in "$@"; do
    case "$argument" in
    --uninstall) mode=uninstall ;;
    --no-bluetooth-config) BLUETOOTH_CONFIG=no ;;
    *) echo "usage: $0 [--no-bluetooth-config] | --uninstall" >&2; exit 2 ;;
    esac
done
case "$mode" in
install) install_all ;;
uninstall) action=uninstall; uninstall ;;
esac
