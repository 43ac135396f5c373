#!/bin/sh
# Benchbay telemetry sampler: every INTERVAL seconds, one framed tick of the host's /proc counters on stdout.
#   sampler.sh RUN_DIR INTERVAL [auto|posix|compat] [SECONDS]
# (auto: bash when the host has it; posix: plain sh; compat: bash as before 5.2, for tests)
# With SECONDS (> 0), the measurement ends by itself once the ticks span SECONDS of the host's uptime: a slow
# link that reads the ticks late cannot make it longer. The sampler then writes RUN_DIR/sampler.done and
# waits, still guarding the deadline, until the workbench has read everything and stops it.
# The workbench computes iostat-style figures from the raw counters; here we only copy them, as cheaply
# as we can: under bash (>= 4) a tick forks nothing (builtin reads, one printf, a timed read on a fifo
# as the sleep). Plain POSIX sh (dash, busybox) runs one `cat` and one `sleep` per tick, same output.
# It stops by itself when RUN_DIR disappears, RUN_DIR/stop appears, or the host's uptime passes the
# number in RUN_DIR/deadline; on the deadline it also stops the agent and removes RUN_DIR (orphan run).
LC_ALL=C
export LC_ALL
run=$1
iv=$2
mode=${3:-auto}
span=${4:-0}

if [ "$mode" != posix ] && [ -z "$BASH_VERSION" ] && command -v bash >/dev/null 2>&1; then
    exec bash "$0" "$@"
fi
if [ -z "$run" ] || [ ! -d "$run" ]; then
    echo "sampler: no run directory: $run" >&2
    exit 2
fi

nl='
'
trap 'exit 0' TERM INT
trap '' HUP

# A full disk must not stop the sampler silently: 4 KB set aside now are freed to write why it stopped.
reserve=$run/.sampler-reserve
nospace() {
    rm -f "$reserve"
    _av=$(df -Pk "$run" 2>/dev/null | awk 'NR > 1 {print $4}')
    case $_av in '' | *[!0-9]*) _av=64 ;; esac
    if [ "$_av" -lt 64 ]; then
        echo "no space left in $run; telemetry stopped" >&2
    else
        echo "could not write $run/samples.raw; telemetry stopped" >&2
    fi
    exit 1
}
printf '%4096s' '' 2>/dev/null >"$reserve" || nospace

# Seconds with up to two decimals ("1046.65", "0.5", "300") -> centiseconds in $cs; fails on anything else.
# The leading 1 keeps a fraction like 05 from being read as octal.
to_cs() {
    _i=${1%%.*}
    case $1 in *.*) _f=${1#*.}00 ;; *) _f=00 ;; esac
    _f=${_f%"${_f#??}"}
    _i=${_i#"${_i%%[!0]*}"}
    case $_i$_f in '' | *[!0-9]*) return 1 ;; esac
    cs=$((${_i:-0} * 100 + 1$_f - 100))
}

if ! to_cs "$iv" || [ "$cs" -lt 50 ] || [ "$cs" -gt 1000 ]; then
    echo "sampler: interval must be 0.5 to 10 seconds, not: $iv" >&2
    exit 2
fi
ivcs=$cs
# the first tick is the baseline (rates need two): the last one is the first at or past SPAN - INTERVAL/2
limit=0
if [ "$span" != 0 ]; then
    if ! to_cs "$span" || [ "$cs" -le 0 ]; then
        echo "sampler: seconds must be a positive number with at most two decimals, not: $span" >&2
        exit 2
    fi
    limit=$((cs - ivcs / 2))
    [ "$limit" -gt 0 ] || limit=1   # shorter than half a tick: the first tick after the baseline
fi
first=

# Orphan protection, checked before every tick ($1 = whole seconds of uptime now). The deadline is in
# whole seconds too (a fraction is dropped); an unreadable deadline file keeps the last value read, and
# until one is read it is five minutes after the start.
deadline=
check_stop() {
    if [ -r "$run/deadline" ] && read -r _dl <"$run/deadline"; then
        _dl=${_dl%%[!0-9]*}
        [ -n "$_dl" ] && deadline=$_dl
    elif [ ! -d "$run" ]; then
        exit 0
    fi
    [ -e "$run/stop" ] && exit 0
    [ -n "$deadline" ] || deadline=$(($1 + 300))
    [ "$1" -gt "$deadline" ] && expire
}

expire() {
    if [ -r "$run/agent.pid" ] && read -r _a <"$run/agent.pid"; then
        case $_a in
            '' | *[!0-9]* | 0 | 1) ;;
            *)
                # only while the pid is still the agent (it works in RUN): an agent that ended long ago
                # may have left its pid to someone else's process group
                _h=$(cd "$run" 2>/dev/null && pwd -P)
                [ -n "$_h" ] && [ "$(cd "/proc/$_a/cwd" 2>/dev/null && pwd -P)" = "$_h" ] || _a=
                # two seconds to stop cleanly, then SIGKILL for what is left of its process group
                if [ -n "$_a" ] && kill -TERM -"$_a" 2>/dev/null; then
                    _n=0
                    while [ "$_n" -lt 20 ] && kill -0 -"$_a" 2>/dev/null; do
                        nap 0.1
                        _n=$((_n + 1))
                    done
                    kill -KILL -"$_a" 2>/dev/null
                fi
                ;;
        esac
    fi
    # what left the agent's process group (fio's jobs call setsid) and the test files it created
    [ -r "$run/kill.sh" ] && sh "$run/kill.sh" >/dev/null 2>&1
    rm -rf "$run"
    exit 0
}

# The measurement is over (SPAN reached): no more ticks; the run directory stays for the workbench to read.
measured() {
    : >"$run/sampler.done" 2>/dev/null
    while :; do
        read -r _u _x </proc/uptime
        check_stop "${_u%%.*}"
        nap 1
    done
}

# $1: the tick's uptime in centiseconds
past_span() {
    [ -n "$first" ] || first=$1
    [ $(($1 - first)) -ge "$limit" ]
}

nap() {
    sleep "$1" &
    _sp=$!
    trap 'kill $_sp 2>/dev/null; exit 0' TERM INT
    wait $_sp
    trap 'exit 0' TERM INT
}

# Which optional files this kernel has (PSI: 4.20+, and only when not disabled with psi=0; mountstats:
# 2.6.17+, the NFS mounts' counters that nfsiostat reads, and every mount's filesystem type).
psi=
for _p in cpu io memory; do
    { read -r _x </proc/pressure/$_p; } 2>/dev/null && psi="$psi $_p"
done
mstats=
{ read -r _x </proc/self/mountstats; } 2>/dev/null && mstats=/proc/self/mountstats
# mountstats only matters with a network filesystem mounted: without one its section stays empty, so a
# tick is no bigger for it (these types, as " fstype TYPE" begins, are what the workbench looks for)
netfs_types='nfs fuse cifs smb3 smbfs ceph 9p afs glusterfs lustre gpfs beegfs orangefs pvfs2 davfs ncpfs coda'

header() {
    printf '@benchbay-telemetry 1\n@interval %s\n@shell %s\n' "$iv" "$1"
    _ep=$EPOCHREALTIME
    if [ -z "$_ep" ]; then
        _ep=$(date +%s.%N 2>/dev/null)
        case $_ep in '' | *[!0-9.]*) _ep=$(date +%s) ;; esac
    fi
    read -r _up _x </proc/uptime
    printf '@clock %s %s\n' "$_ep" "$_up"
    _dl=
    for _d in /sys/block/*; do
        [ -e "$_d" ] && _dl="$_dl ${_d##*/}"
    done
    printf '@disks%s\n' "$_dl"
    for _d in /sys/block/dm-*/dm/name; do
        [ -r "$_d" ] || continue
        read -r _n <"$_d" || continue
        _d=${_d%/dm/name}
        printf '@dm %s %s\n' "${_d##*/}" "$_n"
    done
    for _d in /sys/block/*/*/partition; do
        [ -e "$_d" ] || continue
        _d=${_d%/partition}
        _x=${_d%/*}
        printf '@part %s %s\n' "${_d##*/}" "${_x##*/}"
    done
    printf '@psi%s\n@header-end\n' "$psi"
}

# POSIX sh: one `cat` writes the whole tick; its section markers are small files made once.
loop_posix() {
    set --
    for _f in uptime diskstats stat loadavg meminfo; do
        printf '@%s\n' "$_f" 2>/dev/null >"$run/.m-$_f" || nospace
        set -- "$@" "$run/.m-$_f" "/proc/$_f"
    done
    for _p in $psi; do
        printf '@psi-%s\n' "$_p" 2>/dev/null >"$run/.m-psi-$_p" || nospace
        set -- "$@" "$run/.m-psi-$_p" "/proc/pressure/$_p"
    done
    # whether a network filesystem is mounted: one grep every 10th tick (a mount shows within 10 ticks)
    ms_re=$(printf '%s|' $netfs_types)
    ms_re=" fstype (${ms_re%|})"
    ms_net=
    [ -n "$mstats" ] && { printf '@mountstats\n' 2>/dev/null >"$run/.m-mountstats" || nospace; }
    seq=0
    next=
    while :; do
        read -r up _x </proc/uptime
        to_cs "$up" || cs=0
        now=$cs
        check_stop "${up%%.*}"
        seq=$((seq + 1))
        if [ -n "$mstats" ] && [ $((seq % 10)) -eq 1 ]; then
            grep -qE "$ms_re" "$mstats" 2>/dev/null && ms_net=1 || ms_net=
        fi
        if [ -n "$ms_net" ]; then
            { printf '@tick %s\n' "$seq" && cat "$@" "$run/.m-mountstats" "$mstats" && printf '@end %s\n' "$seq"; } \
                2>/dev/null || nospace
        else
            { printf '@tick %s\n' "$seq" && cat "$@" && printf '@end %s\n' "$seq"; } 2>/dev/null || nospace
        fi
        [ "$limit" -gt 0 ] && past_span "$now" && measured
        [ -n "$next" ] || next=$now
        next=$((next + ivcs))
        d=$((next - now))
        if [ "$d" -le 0 ] || [ "$d" -gt "$ivcs" ]; then
            next=$((now + ivcs))
            d=$ivcs
        fi
        _f=$((d % 100))
        [ "$_f" -lt 10 ] && _f=0$_f
        nap "$((d / 100)).$_f"
    done
}

if [ "$mode" = posix ] || [ -z "$BASH_VERSION" ] || [ "${BASH_VERSINFO:-0}" -lt 4 ]; then
    header sh 2>/dev/null || nospace
    loop_posix
    exit 0
fi

# ------------------------------------------------------------------------------------------------------
# bash (4+) only from here on: a POSIX shell has exited above without reading further.
# A tick forks nothing: files are read with builtins ($(<file) since bash 5.2, which no longer forks for
# it; read -d '' before), the tick is built in one expansion and written with one printf. The code that
# reads and writes is generated once for the files this host has, so a tick tests nothing about them.
# Blank lines are harmless (the parser skips them). Sleeps are timed reads on a fifo nobody writes to.
# The schedule is absolute (start + k * interval), in microseconds from EPOCHREALTIME (bash 5), else in
# hundredths from /proc/uptime; late by a whole interval (suspended, clock jump): start again from now.

header "bash $BASH_VERSION" 2>/dev/null || nospace
if mkfifo -m 600 "$run/.nap.$$" 2>/dev/null && exec 4<>"$run/.nap.$$"; then
    rm -f "$run/.nap.$$"
    nap() { read -r -t "$1" -u 4 _; }
fi
if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 502 )) && [[ $mode != compat ]]; then
    get='%s=$(<%s); '
else
    get="IFS= read -r -d '' %s <%s; "
fi
# uptime and diskstats back to back: Δt is measured on the one, the I/O counted by the other
printf -v read_up "$get" up /proc/uptime ds /proc/diskstats
printf -v read_dl "$get" dl '"$run/deadline"'
printf -v read_rest "$get" st /proc/stat la /proc/loadavg mi /proc/meminfo
tick='@tick $seq$nl@uptime$nl$up$nl@stat$nl${st%%"$nl"*}$nl@diskstats$nl$ds$nl@loadavg$nl$la$nl@meminfo$nl$mi$nl'
for p in $psi; do
    printf -v read_rest "%s$get" "$read_rest" "p_$p" "/proc/pressure/$p"
    tick+="@psi-$p\$nl\$p_$p\$nl"
done
# The network filesystem test runs when mountstats changed since the last tick, so a host without NFS
# pays one string comparison per tick; NFS counters change every tick, and "nfs" is looked for first.
check_ms=
if [[ -n $mstats ]]; then
    printf -v read_rest "%s$get" "$read_rest" ms "$mstats"
    for t in $netfs_types; do check_ms+=" | *\" fstype $t\"*"; done
    check_ms="if [[ \$ms != \"\$ms_seen\" ]]; then ms_seen=\$ms; case \$ms in ${check_ms# | }) ms_net=1 ;; *) ms_net= ;; esac; fi"
    tick+='@mountstats$nl${ms_net:+$ms$nl}'
fi
# The loop is a template: the reads for this host's files go in, then it runs through eval (so a tick
# makes no function call at all: with that, a tick costs about what one of `iostat -x 1` does).
loop='
up=$(</proc/uptime)
deadline=$((${up%%.*} + 300))
while :; do
    read_up
    now=$EPOCHREALTIME
    if [[ -r $run/deadline ]] && { dl=; read_dl [[ -n $dl ]]; }; then
        dl=${dl%%[!0-9]*}
        [[ -n $dl ]] && deadline=$((10#$dl))
    elif [[ ! -d $run ]]; then
        exit 0
    fi
    [[ -e $run/stop ]] && exit 0
    ((${up%%.*} > deadline)) && expire
    read_rest
    check_ms
    ((seq += 1))
    printf %s "write_tick@end $seq$nl" 2>/dev/null || nospace
    if ((limit > 0)); then
        to_cs "${up%% *}" || cs=0
        past_span "$cs" && measured
    fi
    if ((unit == 100)); then
        to_cs "${up%% *}" || cs=0
        now=$cs
    else
        now=${now/./}
    fi
    ((next += step, d = next - now))
    if ((d <= 0 || d > step)); then
        ((next = now + step, d = step))
    fi
    f=$((d % unit + unit))
    nap "$((d / unit)).${f:1}"
done'
loop=${loop/read_up/"$read_up"}
loop=${loop/read_dl/"$read_dl"}
loop=${loop/read_rest/"$read_rest"}
loop=${loop/check_ms/"$check_ms"}
loop=${loop/write_tick/"$tick"}
if [[ -n $EPOCHREALTIME ]]; then unit=1000000; else unit=100; fi
step=$((ivcs * unit / 100))
seq=0
next=0
eval "$loop"
