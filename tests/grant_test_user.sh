#!/bin/sh
# Let the attack suite's unprivileged user (tests/security/test_attack_unprivileged.py) reach this checkout and its
# interpreter: run as root by `make test`.  It makes the user if need be, then gives it the right to pass through
# (x, by an ACL naming that user alone: nobody else gains anything) every folder above the interpreter and the
# checkout that it could not pass; it reads nothing it could not read before.
set -eu
user=cxforge-test
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
command -v setfacl >/dev/null 2>&1 || { echo "no setfacl (apt-get install acl): the unprivileged attack run will skip" >&2; exit 0; }
for path in "$@"; do
    dir=$(realpath "$path")
    while [ "$dir" != "/" ]; do
        runuser -u "$user" -- test -x "$dir" 2>/dev/null || setfacl -m "u:$user:x" "$dir"
        dir=$(dirname "$dir")
    done
done
