#!/usr/bin/env bash
# rlxc-man.sh RLXC > rlxc.1 - the man page, made from `rlxc --help`.
#
# The help text is the one description of rlxc's command line, so the man
# page is generated from it rather than written again: its usage lines become
# the SYNOPSIS, the "options:", "environment:" and "targets:" blocks (an item at two
# spaces of indent, its text at column 20 or on the lines below) become
# OPTIONS, ENVIRONMENT and TARGETS. Everything is escaped for roff (backslashes,
# hyphens, a leading dot or quote). `make` runs this into build/rlxc.1.
set -euo pipefail
rlxc=${1:?usage: rlxc-man.sh RLXC}
version=$("$rlxc" --version | awk '{ print $2 }')
"$rlxc" --help | awk -v version="$version" '
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    sub(/^[.'"'"']/, "\\\\\\&&", s)
    return s
}
BEGIN {
    print ".TH RLXC 1 \"\" \"rlxc " version "\" \"User Commands\""
    print ".SH NAME"
    print "rlxc \\- ahead-of-time compiler for neural-network inference"
    section = "synopsis"
    print ".SH SYNOPSIS"
}
/^usage: / { sub(/^usage: +/, ""); }
section == "synopsis" && /^ *rlxc / {
    line = $0
    sub(/^ +/, "", line)
    # "rlxc ARGS   what it does": the command, then its description
    n = index(line, "  ")
    cmd = n ? substr(line, 1, n - 1) : line
    what = n ? substr(line, n) : ""
    sub(/^ +/, "", what)
    print ".TP"
    print ".B " esc(cmd)
    if (what != "") print esc(what)
    last = "synopsis"
    next
}
section == "synopsis" && /^  +[^ ]/ && last == "synopsis" {   # a description continued
    line = $0; sub(/^ +/, "", line); print esc(line); next
}
/^options:$/ { section = "options"; print ".SH OPTIONS"; next }
/^environment:$/ { section = "env"; print ".SH ENVIRONMENT"; next }
/^targets:$/ { section = "targets"; print ".SH TARGETS"; next }
/^$/ { next }
section != "synopsis" && /^  [^ ]/ {
    line = substr($0, 3)
    n = index(line, "  ")
    item = n ? substr(line, 1, n - 1) : line
    text = n ? substr(line, n) : ""
    sub(/^ +/, "", text)
    print ".TP"
    print ".B " esc(item)
    if (text != "") print esc(text)
    next
}
section != "synopsis" && /^   +[^ ]/ { line = $0; sub(/^ +/, "", line); print esc(line); next }
END {
    print ".SH EXIT STATUS"
    print "0 on success; 1 with a one-line message on standard error for any error in the model,"
    print "the flags or the build, which leaves no output file behind."
    print ".SH SEE ALSO"
    print "The README and docs/ of the rlxc sources."
}'
