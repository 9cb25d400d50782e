"""Shell commands in tool output: the prompt line that echoes one (`$ df -h`), and the words
that say what well-known programs report (docs/excerpts.md, "Commands").

A question names what a program reports in the words of its subject ("which kernel version is
running?", "how much disk space is left?", "which user am I?"), not by the program (`uname
-a`, `df -h`, `id`), and the output seldom holds those words either (`Linux box 6.1.0-28 ...`,
`uid=0(root)`). So a command line that produced an output, and the tool name of an output,
carry the words of what their program reports: the facts of a few dozen common programs,
written down once, not learnt from any data set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["COMMAND_ECHO", "command_words", "form_words", "session_prompts"]

# A shell prompt and the command after it: `$ make test`, `dev@box:~/app$ make test`.
COMMAND_ECHO = re.compile(r"^(?:[\w.-]+@[\w.-]+:\S*)?\$ +\S")

_TOP = "process processes cpu memory load usage"
_NETSTAT = "port ports listening socket sockets connection connections"
_PACKAGES = "package packages install installed version versions"
_ENV = "environment variable variables"
_WORDS: dict[str, str] = {
    "uname": "kernel operating system version architecture machine",
    "hostname": "host name machine",
    "id": "user users uid group groups gid",
    "whoami": "user username",
    "groups": "user group groups",
    "free": "memory ram swap free used available",
    "vmstat": "memory cpu swap processes",
    "df": "disk space filesystem free used available mounted",
    "du": "disk usage size space",
    "ps": "process processes pid cpu memory running",
    "top": _TOP,
    "htop": _TOP,
    "pgrep": "process pid",
    "uptime": "uptime load running boot",
    "ip": "ip address addresses interface network route",
    "ifconfig": "ip address interface network",
    "ss": _NETSTAT,
    "netstat": _NETSTAT,
    "lsof": "open files port process",
    "lsblk": "disk disks block device partition",
    "lscpu": "cpu cores processor architecture",
    "nproc": "cpu cores processors",
    "env": _ENV,
    "printenv": _ENV,
    "date": "date time",
    "timedatectl": "time zone date",
    "mount": "mounted filesystem",
    "dmesg": "kernel messages",
    "journalctl": "log logs journal service",
    "systemctl": "service services unit status",
    "dpkg": _PACKAGES,
    "apt": _PACKAGES,
    "apt-get": _PACKAGES,
    "pip": f"{_PACKAGES} python",
    "pip3": f"{_PACKAGES} python",
    "npm": f"{_PACKAGES} node",
    "which": "path location installed",
    "ls": "files directory listing",
    "wc": "count lines words",
    "ping": "reachable latency network",
    "curl": "http request response",
    "nvidia-smi": "gpu memory utilization",
    "crontab": "cron schedule jobs",
    "last": "logins users",
}
_SUBCOMMANDS: dict[str, dict[str, str]] = {
    "git": {
        "log": "commit commits history",
        "status": "branch changes modified staged untracked",
        "diff": "changes changed",
        "branch": "branch branches",
        "show": "commit changes",
        "blame": "author line",
    },
    "docker": {"ps": "container containers running", "images": "image images"},
    "kubectl": {"top": "cpu memory usage", "logs": "pod log"},
}


# What an output the compressor recognised reports, whichever program wrote it (a tool named
# `git`, `bash` or nothing): a diff its changed files. Not a listing's `files`: every line of
# a `find` then met "which file could not be opened?" over the strace that answers it.
_FORM_WORDS: dict[str, str] = {
    "diff": "diff patch changes changed files",
    "blame": _SUBCOMMANDS["git"]["blame"],
    "tests": "test tests",
}


def form_words(compressor: str) -> str:
    """The words of what an output compressed by `compressor` (its detected form) reports,
    or "" for a form that says nothing of its own (a log, a table, JSON, prose)."""
    return _FORM_WORDS.get(compressor, "")


def session_prompts(lines: Sequence[str], starts: Sequence[int]) -> list[int]:
    """The segments (first lines `starts`) that open with a command line, when there are two
    or more: the text is then a terminal session, each command over its output; else none."""
    prompts = [k for k, start in enumerate(starts) if COMMAND_ECHO.match(lines[start])]
    return prompts if len(prompts) >= 2 else []


# What may come before the program: `sudo`, `time`, `env X=1`, variable assignments.
_PREFIX = frozenset({"sudo", "time", "nice", "env", "command", "exec"})


def command_words(command: str) -> str:
    """The words of what the program of `command` (a command line, or a tool's name) reports,
    or "" for a program not written down here."""
    parts = [p for p in command.split() if "=" not in p]
    while parts and parts[0] in _PREFIX:
        parts = parts[1:]
    if not parts:
        return ""
    program = parts[0].rsplit("/", 1)[-1].lower()
    sub = _SUBCOMMANDS.get(program, {}).get(parts[1].lower(), "") if len(parts) > 1 else ""
    return " ".join(filter(None, (_WORDS.get(program, ""), sub)))
