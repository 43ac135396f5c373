#!/usr/bin/env bash
# Installs what the test suite needs (sshd, PostgreSQL, MariaDB, sysbench, Redis, Xvfb, fio, sysstat, Qt libraries, QEMU and a Debian kernel (cgroup v2 test hosts), Python
# packages) and runs it: lint, unit, integration (real sshd and PostgreSQL) and GUI tests.
set -euo pipefail
. "$(dirname "$0")/scripts/common.sh"

# Postfix for the mail-storm tests: installed "Local only"; tests/fixtures/postfix.py then configures it
# (loopback only, benchbay.invalid to discard:, everything else to error:) and starts it.
if command -v debconf-set-selections >/dev/null 2>&1; then
    printf '%s\n' "postfix postfix/main_mailer_type select Local only" \
        "postfix postfix/mailname string localhost" | $SUDO debconf-set-selections
fi
apt_install postfix python3 python3-venv python3-pip openssh-server openssh-client postgresql postgresql-client sshfs \
    fio sysstat xvfb xauth x11-utils imagemagick poppler-utils procps fish tcsh zsh dash sudo iproute2 faketime \
    util-linux e2fsprogs unbound bind9 nsd bind9-dnsutils \
    postgresql-contrib mariadb-server mariadb-client sysbench redis-server redis-tools \
    dnsperf \
    qemu-system-x86 linux-image-amd64 busybox-static kmod \
    "${QT_RUNTIME_PACKAGES[@]}"
make_venv "[test]"

# DNS servers for the dns test: the tests start their own Unbound, BIND and NSD on loopback addresses and
# high ports (tests/fixtures/dns_servers.py). The packaged services would take port 53 and change how this
# machine resolves names: stopped and kept from starting at boot.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    for unit in unbound.service unbound-resolvconf.service named.service named-resolvconf.service nsd.service; do
        if systemctl list-unit-files "$unit" >/dev/null 2>&1; then
            $SUDO systemctl disable --now "$unit" >/dev/null 2>&1 || true
        fi
    done
fi
for name in unbound named nsd; do
    if [ -x "/etc/init.d/$name" ]; then
        $SUDO "/etc/init.d/$name" stop >/dev/null 2>&1 || true
        if command -v update-rc.d >/dev/null 2>&1; then $SUDO update-rc.d "$name" disable >/dev/null 2>&1 || true; fi
    fi
done

# PostgreSQL: started if it is not running; the current user gets a role for peer login on the socket.
if command -v pg_lsclusters >/dev/null 2>&1; then
    if ! pg_lsclusters --no-header | awk '{print $4}' | grep -q online; then
        say "starting PostgreSQL"
        pg_lsclusters --no-header | while read -r ver name _; do
            $SUDO pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start || true
        done
    fi
    me=$(id -un)
    if ! psql -h /var/run/postgresql -d postgres -Atc 'select 1' >/dev/null 2>&1; then
        say "creating PostgreSQL role $me for the tests"
        if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u postgres --); else as_pg=(sudo -u postgres); fi
        "${as_pg[@]}" psql -d postgres -qc "CREATE ROLE \"$me\" LOGIN SUPERUSER" || true
    fi
    export BENCHBAY_TEST_PG_ADMIN="${BENCHBAY_TEST_PG_ADMIN:-postgresql+psycopg2:///postgres?host=/var/run/postgresql}"
fi

# MariaDB for the database load tests (sysbench): started if it does not answer (ping answers even when the
# login is refused); tests/fixtures/mariadb.py logs in as root over TCP or the socket.
if command -v mysqladmin >/dev/null 2>&1 && ! mysqladmin --protocol=TCP -h 127.0.0.1 ping >/dev/null 2>&1; then
    say "starting MariaDB"
    $SUDO service mariadb start || $SUDO service mysql start || true
fi
if command -v mysql >/dev/null 2>&1 && [ "$(id -u)" -ne 0 ] && ! mysql -e 'select 1' >/dev/null 2>&1; then
    me=$(id -un)
    say "creating MariaDB user $me (socket login) for the tests"
    $SUDO mysql -e "CREATE USER IF NOT EXISTS '$me'@'localhost' IDENTIFIED VIA unix_socket; GRANT ALL PRIVILEGES ON *.* TO '$me'@'localhost' WITH GRANT OPTION" || true
fi

# Redis for the database load tests: most start a redis-server of their own (the package is enough); a few use
# the machine's on 127.0.0.1:6379 (database 15, a key prefix of their own), started here if it does not answer.
if command -v redis-server >/dev/null 2>&1 && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    say "starting Redis"
    $SUDO service redis-server start >/dev/null 2>&1 || true
    if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
        $SUDO redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --daemonize yes >/dev/null
    fi
fi

cd "$ROOT_DIR"
say "ruff"
"$VENV/bin/ruff" check .
say "pytest"
export QT_QPA_PLATFORM=offscreen
# The tests wait on servers far more than they compute: several worker processes (pytest-xdist) even on two
# cores. Tests sharing one machine-wide fixture stay in one worker (tests/conftest.py, ONE_WORKER).
# BENCHBAY_TEST_WORKERS=1 runs everything in one process.
workers="${BENCHBAY_TEST_WORKERS:-4}"
parallel=()
if [ "$workers" != 1 ]; then parallel=(-n "$workers" --dist loadgroup); fi
# A temporary directory of this run's own: pytest's numbered ones in the shared /tmp/pytest-of-USER are
# cleaned up by other test runs on the same machine
basetemp=$(mktemp -d "${TMPDIR:-/tmp}/bb-test-run.XXXXXX")
set +e
# the slowest tests are listed at the end of every run: a suite that grows slow says where
"$VENV/bin/python" -m pytest --durations=20 --basetemp="$basetemp/pytest" "${parallel[@]}" "$@"
status=$?
rm -rf --one-file-system "$basetemp"
set -e
if [ "$status" -eq 5 ]; then
    echo "no test was collected: that is a failure" >&2
    exit 1
fi
exit "$status"
