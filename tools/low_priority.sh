#!/usr/bin/env bash
# Run a command at the lowest CPU priority this machine allows, so that it uses only the cycles other work leaves
# idle (make test's background run, beside the chapters that time themselves). Prints how, then runs the command and
# exits with its status.
#
# Linux groups the processes of each session for its scheduler (autogroup), and a kernel or a sandbox that starts a
# session of its own gets a fair share of the cores whatever its own priority; so a process's SCHED_IDLE or nice 19
# holds only within its session. A cgroup marked idle (cgroup v1's or v2's cpu.idle, Linux 5.15 or newer) holds for
# every process in it and every process they start. Where no such cgroup can be made (not root, no cpu
# controller), the command runs under SCHED_IDLE (chrt --idle 0), and failing that nice 19, and says so.
#
# `tools/low_priority.sh --release PID` gives the command started by the script of process PID an ordinary share of
# the cores from now on (its cgroup is no longer idle); where it runs under SCHED_IDLE or nice, nothing changes.
set -u
if [ "${1:-}" = "--release" ]; then
    for root in /sys/fs/cgroup/cpu /sys/fs/cgroup; do
        [ -e "$root/parallel-mcmc-low-priority-${2:?give the process id of the script}/cpu.idle" ] || continue
        echo 0 >"$root/parallel-mcmc-low-priority-$2/cpu.idle" && exit 0
    done
    exit 0
fi
group=""
for root in /sys/fs/cgroup/cpu /sys/fs/cgroup; do
    [ -w "$root/cgroup.procs" ] && [ -e "$root/cpu.idle" ] || continue
    candidate="$root/parallel-mcmc-low-priority-$$"
    if mkdir "$candidate" 2>/dev/null; then
        if echo 1 >"$candidate/cpu.idle" 2>/dev/null && echo $$ >"$candidate/cgroup.procs" 2>/dev/null; then
            group="$candidate"
            break
        fi
        rmdir "$candidate" 2>/dev/null
    fi
done
if [ -n "$group" ]; then
    echo "low priority: an idle cgroup ($group)"
    "$@" &
    child=$!
    trap 'kill "$child" 2>/dev/null' INT TERM  # stopping this script stops the command
    wait "$child"
    status=$?
    if kill -0 "$child" 2>/dev/null; then wait "$child"; status=$?; fi  # the trap ended the first wait
    echo $$ >"$(dirname "$group")/cgroup.procs" 2>/dev/null  # out of the group, so that it can be removed
    for _ in 1 2 3 4 5; do rmdir "$group" 2>/dev/null && break; sleep 1; done  # once its last process has gone
    exit $status
elif command -v chrt >/dev/null 2>&1; then
    echo "low priority: SCHED_IDLE (chrt --idle 0), within this session only: no idle cgroup could be made here"
    exec chrt --idle 0 "$@"
else
    echo "low priority: nice 19, within this session only: no idle cgroup could be made here, and no chrt"
    exec nice -n 19 "$@"
fi
