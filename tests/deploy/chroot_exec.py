"""Start a command of a container image inside its mounted filesystem, as the image would run it.

Run as root, standard library only, in two ways (test_image.py does both):

    unshare --net --mount -- python chroot_exec.py --setup SPEC    # the image's entry point
    nsenter --target PID --net --mount -- python chroot_exec.py SPEC  # a command beside it

SPEC is JSON: {"root": ..., "user": "UID[:GID]" or a name, "workdir": ..., "env": {...},
"argv": [...]}. With --setup this process is the first in new network and mount namespaces (made
by unshare): it brings up loopback, so 127.0.0.1 works while nothing else is reachable, and
mounts /proc, /dev and /sys inside the root (private to the mount namespace, so they vanish with
it). Then, in both modes, it chroots, drops to the image's user and execs the command in place:
the process id stays the one its parent started, which is how the test signals the server.

`podman run` would do all of this itself, but it cannot start containers where cgroups are not
delegated; this is the part of a container runtime that the image test needs.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

# <linux/sockios.h> and <net/if.h>: get and set an interface's flags; IFF_UP.
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def loopback_up() -> None:
    """`ip link set lo up`, without needing iproute2: a new network namespace starts with lo
    down, and the server and its health check talk over 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def mount_kernel_filesystems(root: Path) -> None:
    """What a runtime gives a container: /proc (onnxruntime and Python read /proc/self), /dev
    (null, urandom) and a read-only /sys (onnxruntime reads the CPU topology there)."""
    for args in (
        ["-t", "proc", "proc", str(root / "proc")],
        ["--rbind", "/dev", str(root / "dev")],
        ["-t", "sysfs", "-o", "ro", "sysfs", str(root / "sys")],
    ):
        subprocess.run(["mount", *args], check=True)


def resolve_user(root: Path, user: str) -> tuple[int, int]:
    """UID and GID for a Dockerfile USER value ("10001:10001", "10001", "name[:group]"), names
    looked up in the image's own /etc/passwd and /etc/group, as a runtime does."""
    name, _, group = user.partition(":")
    passwd = [line.split(":") for line in (root / "etc/passwd").read_text().splitlines() if line]
    if name.isdigit():
        uid = int(name)
        gid = next((int(p[3]) for p in passwd if int(p[2]) == uid), uid)
    else:
        (entry,) = (p for p in passwd if p[0] == name)
        uid, gid = int(entry[2]), int(entry[3])
    if group:
        if group.isdigit():
            gid = int(group)
        else:
            groups = [line.split(":") for line in (root / "etc/group").read_text().splitlines()]
            (entry,) = (g for g in groups if g[0] == group)
            gid = int(entry[2])
    return uid, gid


def main(argv: list[str]) -> None:
    setup = argv[:1] == ["--setup"]
    spec = json.loads(argv[-1])
    root = Path(spec["root"])
    uid, gid = resolve_user(root, spec["user"] or "0")
    if setup:
        loopback_up()
        mount_kernel_filesystems(root)
    os.chroot(root)
    os.chdir(spec["workdir"] or "/")
    # No supplementary groups: root's (group 0 among them) must not survive the switch.
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    command = spec["argv"]
    os.execvpe(command[0], command, spec["env"])


if __name__ == "__main__":
    main(sys.argv[1:])
