"""The child process of a supervised run: started in a process group of its own with a memory
limit, and ended with everything it started.

- The group: every process the child starts (pytest-xdist's workers, a learner's
  subprocess) is in it unless it leaves on purpose, and one signal ends them all.
- The memory limit: the child's address space (RLIMIT_AS, inherited by what it starts); a
  piece that allocates without end meets MemoryError, an ordinary failure of its test. No
  core file is written when a piece crashes the interpreter.
- The subreaper (Linux): a process that left the group (a daemon: fork, setsid, fork) is
  handed to this process when its parent ends, instead of to init, and is ended with the
  rest, so that nothing the learner's code started outlives the run and rewrites a result.
"""
import ctypes
import os
import signal
import subprocess
import sys

PR_SET_CHILD_SUBREAPER = 36


def start(command, cwd, env, memory_mb, pass_fds):
    """Start `command` (its output and errors on one pipe, no input) as the leader of a new
    process group, under the memory limit."""

    def in_the_child():  # runs in the new process, before the command
        import resource

        os.setpgid(0, 0)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_mb:
            limit = memory_mb * 1024 * 1024
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard == resource.RLIM_INFINITY or hard > limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, pass_fds=pass_fds, preexec_fn=in_the_child,
    )


def end_group(process):
    """Kill the child's process group (the child and whatever stayed in its group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def interrupt_group(process):
    """Pass a Ctrl-C on to the child's group (it is not in the terminal's foreground group)."""
    try:
        os.killpg(process.pid, signal.SIGINT)
    except (ProcessLookupError, PermissionError):
        pass


def _prctl(option, value):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class Strays:
    """The processes the child's processes left behind when they ended, reparented to this
    one (Linux; elsewhere only the process group is ended)."""

    def __init__(self):
        self.active = sys.platform.startswith("linux") and _prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.before = set(_children(os.getpid())) if self.active else set()

    def end(self, keep=()):
        """Kill and reap every child of this process that it did not have before (`keep`:
        those it started itself and still waits for)."""
        if not self.active:
            return []
        ended = []
        for _ in range(20):  # each round's killed processes may hand their own children over
            strays = set(_children(os.getpid())) - self.before - set(keep)
            if not strays:
                break
            for pid in strays:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, ChildProcessError, PermissionError):
                    pass
                ended.append(pid)
        return ended

    def close(self):
        if self.active:
            _prctl(PR_SET_CHILD_SUBREAPER, 0)


def _children(pid):
    """The ids of the processes whose parent is `pid` (from /proc)."""
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def describe_exit(returncode):
    """How the child ended, in words: "exited with status 0", "was killed by SIGSEGV (a
    segmentation fault)"."""
    if returncode is None:
        return "is still running"
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    why = {"SIGSEGV": " (a segmentation fault: a crash of the interpreter, as from a recursion too deep)",
           "SIGKILL": " (from outside: out of memory?)", "SIGABRT": " (an abort: a C library gave up)",
           "SIGBUS": " (a bus error: a crash of the interpreter)"}.get(name, "")
    return f"was killed by {name}{why}"
