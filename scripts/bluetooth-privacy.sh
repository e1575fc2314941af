# Sourced by scripts/install.sh (and its tests): turns on LE address privacy in
# bluetoothd's configuration, so that handoffd may advertise connectably
# without showing the adapter's public address (docs/privacy.md, section 5.2).
#
# set_bluetooth_privacy FILE
#   Makes [General] Privacy = device in FILE (bluetoothd's main.conf), changing
#   nothing else: an active Privacy line in [General] is rewritten; otherwise the
#   key is added below a commented-out "#Privacy" line of [General], or below the
#   [General] header, or in a new [General] group at the end. Before the first
#   change it keeps the file as FILE.handoff-orig (never overwritten later).
#   Creates FILE when only it is missing; does nothing when its directory is
#   missing (BlueZ not installed). Idempotent. Prints what it did; sets
#   BLUETOOTH_PRIVACY_CHANGED=yes when it changed FILE.

set_bluetooth_privacy() {
    local file=$1
    local backup="$file.handoff-orig"
    BLUETOOTH_PRIVACY_CHANGED=no
    if [[ ! -e "$file" ]]; then
        if [[ ! -d "$(dirname "$file")" ]]; then
            echo "skipped $file: $(dirname "$file") does not exist (is BlueZ installed?)"
            return 0
        fi
        printf '[General]\nPrivacy = device\n' > "$file"
        chmod 0644 "$file"
        BLUETOOTH_PRIVACY_CHANGED=yes
        echo "created $file with [General] Privacy = device"
        return 0
    fi
    local edited
    edited=$(mktemp "${TMPDIR:-/tmp}/main.conf.XXXXXX") || return 1
    # Two passes: the first finds where [General] has an active or a commented-out
    # Privacy line, the second writes the file with the key set.
    awk '
        function trimmed(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
        function is_group(t) { return t ~ /^\[.*\]$/ }
        FNR == 1 { pass++; group = "" }
        {
            t = trimmed($0)
            if (is_group(t)) {
                group = t
                if (pass == 1 && group == "[General]" && !general) { general = 1; header = FNR }
                if (pass == 2) {
                    print
                    if (FNR == header && !has_active && !comment_line) print "Privacy = device"
                }
                next
            }
            active = (group == "[General]" && t ~ /^Privacy[ \t]*=/)
            commented = (group == "[General]" && t ~ /^[#;][ \t]*Privacy[ \t]*=/)
            if (pass == 1) {
                if (active) has_active = 1
                if (commented && !comment_line) comment_line = FNR
                next
            }
            if (active) { print "Privacy = device"; next }
            print
            if (!has_active && FNR == comment_line) print "Privacy = device"
        }
        END {
            if (!general) { print ""; print "[General]"; print "Privacy = device" }
        }
    ' "$file" "$file" > "$edited" || { rm -f "$edited"; return 1; }
    if cmp -s "$file" "$edited"; then
        rm -f "$edited"
        echo "$file already has [General] Privacy = device"
        return 0
    fi
    local was
    was=$(awk '
        /^[ \t]*\[.*\][ \t]*$/ { group = $0; gsub(/[ \t]/, "", group); next }
        group == "[General]" && /^[ \t]*Privacy[ \t]*=/ { sub(/^[^=]*=[ \t]*/, ""); value = $0 }
        END { print (value == "" ? "not set" : "Privacy = " value) }
    ' "$file")
    if [[ ! -e "$backup" ]]; then
        cp -p "$file" "$backup" || { rm -f "$edited"; return 1; }
        echo "kept the original as $backup"
    fi
    # Rewrite in place: the file keeps its owner, mode and inode.
    cat "$edited" > "$file" || { rm -f "$edited"; return 1; }
    rm -f "$edited"
    BLUETOOTH_PRIVACY_CHANGED=yes
    echo "set [General] Privacy = device in $file (was: $was)"
}
