# Helpers shared by the Linux network tests (sourced, not run).

# jget REPORT.json SECTION KEY: prints one value of nicemu's --report-json
# output (one "key": value per line, sections at the top level), without
# needing jq or python.
jget() {
    awk -v s="\"$2\": {" -v k="\"$3\":" '
        index($0, s) == 3 { f = 1; next }
        f && /^  "/ { exit }
        f { t = $0; sub(/^ +/, "", t)
            if (index(t, k) == 1) { sub(/^[^:]*: /, "", t); sub(/[,}]+$/, "", t); gsub(/"/, "", t); print t; exit } }
    ' "$1"
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

# expect_pos WHAT VALUE: a number > 0
expect_pos() { [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -gt 0 ] || fail "$1: got '$2', want a number > 0"; }

# expect_line FILE REGEX WHAT
expect_line() { grep -qE "$2" "$1" || { tail -30 "$1" >&2; fail "$3: no line matching /$2/ in $(basename "$1")"; }; }

# no_kernel_errors CONSOLE
no_kernel_errors() {
    if grep -qE 'Kernel panic|Oops|BUG:|general protection fault|WARNING:' "$1"; then
        tail -40 "$1" >&2; fail "the kernel reported an error"
    fi
}

# The deterministic part of a report: everything but host wall time.
counts() { grep -E '"(instructions|cycles|virtual_time_ns)"' "$1" | head -3; }
