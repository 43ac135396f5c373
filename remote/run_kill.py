"""The last resort of a cancel: a POSIX sh script that kills an agent and every process of its run.

The agent kills what it started itself; this is for an agent that does not answer (stuck, stopped,
overloaded). Killing its process group is not enough: fio's job processes call setsid(). So the
script freezes the agent (SIGSTOP: no new children, no orphans re-parented away), collects its
descendants from the parent links in /proc/*/stat, freezes those too until the set is stable, and
kills them all. Then it kills whatever still carries the run's environment mark (processes whose
parents died before the agent was frozen). Runs with sh, awk, grep, tr, sort, kill and rm: python may be gone.

Last, with everything dead, it removes the test files the agent listed in RUN/created (the agent
cannot anymore): only names of the agent's own pattern, only regular files, never through a symlink.
A file the run did not create is never touched.
"""
from __future__ import annotations

import shlex

from remote.agent.disk_file import CREATED_LIST, FILE_PREFIX, FILE_SUFFIX, NAME_HEX
from remote.agent.process_tree import RUN_MARK_VAR, run_mark

# `below ROOT`: pids below ROOT, sorted; from "pid ppid" lines built with shell builtins only
_FUNCTIONS = r"""
table() {
  for d in /proc/[0-9]*; do
    { read -r l < "$d/stat"; } 2>/dev/null || continue
    s=${l##*) }; set -- $s; echo "${d#/proc/} $2"
  done
}
below() {
  table | awk -v root="$1" '{ up[$1] = $2 } END { for (q in up) { r = up[q]; n = 0
    while (r != root && (r in up) && n < 4096) { r = up[r]; n++ }
    if (r == root) print q } }' | sort -n
}
marked() {
  for e in /proc/[0-9]*/environ; do
    grep -qF -e "$mark" "$e" 2>/dev/null || continue
    tr '\0' '\n' < "$e" 2>/dev/null | grep -qxF -e "$mark" || continue
    x=${e#/proc/}; echo "${x%/environ}"
  done
}
"""

_KILL = r"""
# only the agent of this run: a pid from agent.pid may since belong to someone else (the agent's cwd is RUN)
here=$(cd "$run" 2>/dev/null && pwd -P)
[ -n "$p" ] && [ -n "$here" ] && [ "$(cd "/proc/$p/cwd" 2>/dev/null && pwd -P)" = "$here" ] || p=
if [ -n "$p" ] && kill -STOP "$p" 2>/dev/null; then
  all=; i=0
  while [ $i -lt 8 ]; do
    now=$(below "$p"); [ "$now" = "$all" ] && break; all=$now
    [ -n "$all" ] && kill -STOP $all 2>/dev/null; i=$((i + 1))
  done
  kill -KILL "-$p" 2>/dev/null; kill -KILL "$p" $all 2>/dev/null
fi
i=0
while [ $i -lt 10 ]; do
  m=$(marked); [ -n "$m" ] || break
  kill -KILL $m 2>/dev/null; sleep 0.2; i=$((i + 1))
done
"""

# absolute; the agent's name; a regular file, not a link; no link on the way (the agent listed real paths)
_REMOVE_CREATED = r"""
if [ -r "$run/CREATED" ]; then
  while IFS= read -r f || [ -n "$f" ]; do
    case $f in /*) ;; *) continue ;; esac
    case ${f##*/} in NAME) ;; *) continue ;; esac
    d=${f%/*}; [ -n "$d" ] || d=/
    if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(cd "$d" 2>/dev/null && pwd -P)" = "$d" ]; then rm -f -- "$f"; fi
  done < "$run/CREATED"
fi
true
"""


def kill_run_script(run_dir: str) -> str:
    """sh that SIGKILLs the agent of `run_dir` and everything its run started; always exits 0."""
    mark = f"{RUN_MARK_VAR}={run_mark(run_dir)}"
    head = (f"run={shlex.quote(run_dir)}; p=$(cat \"$run/agent.pid\" 2>/dev/null); "
            f"mark={shlex.quote(mark)}\n")
    name = FILE_PREFIX + "[0-9a-f]" * NAME_HEX + FILE_SUFFIX    # a case pattern: the one unique_file_name makes
    remove = _REMOVE_CREATED.replace("CREATED", CREATED_LIST).replace("NAME", name)
    return head + _FUNCTIONS + _KILL + remove
