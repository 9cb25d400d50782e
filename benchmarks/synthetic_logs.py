"""A generated loghub-style dataset for `benchmarks.logs`: eight log formats, 2,000 lines each.

    python -m benchmarks.synthetic_logs --out DIR [--seed 20240611] [--lines 2000]
    python -m benchmarks.logs --dataset DIR --out logs.json

The logs are generated, not real: every line comes from a hand-written template in the format
of one of eight common systems (Android, BGL, HPC, Linux, OpenSSH, Spark, Thunderbird,
Zookeeper), its parameters drawn from one seeded random stream, so a seed always gives the
same bytes. They are a generality check of Fit's log excerpts on formats other than the
development split, built to have what makes a rare event hard to find:

- frequent templates in bursts (the same event for several lines in a row);
- rare templates of 1-3 lines, the benchmark's questions, scattered through the log;
- rare templates that share most words with a frequent one ("exceeds critical threshold"
  beside "exceeds warning threshold", "Killing ...: remove task" beside "...: empty #<*>");
- vocabulary shared across systems (sshd and pam_unix lines in Linux, OpenSSH and
  Thunderbird; cron sessions in Linux and Thunderbird), so the system named in the query
  has to count.

Each system gets the layout `benchmarks.logs` reads: `<System>/<System>_2k.log`, the raw lines
(header, then content), and `<System>/<System>_2k.log_structured.csv` with LineId, Content
(the line after its header), EventId and EventTemplate (the content with `<*>` for each
parameter). Frequent templates have a weight; medium (4-20 lines) and rare (1-3 lines)
templates an exact number of lines, placed at random.
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import string
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

SEED = 20240611
LINES = 2000
FREQUENT, MEDIUM, RARE = "frequent", "medium", "rare"
CSV_COLUMNS = ("LineId", "Content", "EventId", "EventTemplate")

Meta = tuple[str, ...]  # a template's header fields (tag, level, component...)
State = dict[str, Any]  # what a log's header keeps from one line to the next


class Template(NamedTuple):
    """One event type of a system."""

    kind: str  # FREQUENT, MEDIUM or RARE
    n: int  # FREQUENT: relative weight; MEDIUM and RARE: exact number of lines
    meta: Meta  # may hold parameters too
    text: str  # the content, with <<name>> for a parameter drawn from PARAMS


def frequent(weight: int, meta: Meta, text: str) -> Template:
    """A template that fills the log in bursts, chosen in proportion to `weight`."""
    return Template(FREQUENT, weight, meta, text)


def medium(count: int, meta: Meta, text: str) -> Template:
    """A template of exactly `count` lines (4-20), at random places."""
    return Template(MEDIUM, count, meta, text)


def rare(count: int, meta: Meta, text: str) -> Template:
    """A template of exactly `count` lines (1-3), at random places: a question's answer."""
    return Template(RARE, count, meta, text)


# ----------------------------------------------------------------------------- parameters

USERS = (
    "admin", "test", "oracle", "guest", "user", "postgres", "ftpuser", "ubuntu", "pi",
    "support", "nagios", "git", "webmaster", "info", "mysql", "tomcat", "zabbix", "hadoop",
)  # fmt: skip
HOSTS = (
    "ns.example.com",
    "mail.kolobok.net",
    "static-ip-62-75-170.inaddr.ip-pool.com",
    "host-5-189-140-13.dyn.bbox.fr",
    "218-188-2-4.static.hinet.net",
    "p5B0C3F22.dip.t-dialin.net",
    "customer-187-141-143-180.uninet-ide.com.mx",
    "dsl-187-155-92-43-dyn.prod-infinitum.com.mx",
    "211.46.224.253",
    "ip-84-38-104-238.easynet.co.uk",
    "adsl-70-242-75-179.dsl.ksc2mo.swbell.net",
)
PACKAGES = (
    "com.tencent.qt.qtl", "com.android.systemui", "com.tencent.mm", "com.android.phone",
    "com.huawei.android.launcher", "com.sina.weibo", "com.android.settings", "com.UCMobile",
)  # fmt: skip
ACTIVITIES = (
    ".activity.info.NewsDetailXmlActivity",
    ".ui.LauncherUI",
    ".MainActivity",
    ".Settings$WifiSettingsActivity",
    ".app.ChatActivity",
)
OOM_PROCESSES = ("java", "httpd", "mysqld", "perl", "sendmail")
COMPONENTS = ("alt0", "scsi0", "eth0", "pci-3", "mem1", "cpu0")
ZNODES = ("replication/peers", "rs/node-3,60020,1437", "splitWAL", "online-snapshot/acquired")


def ip(rng: random.Random) -> str:
    """An IPv4 address."""
    return ".".join(str(rng.randint(1, 254)) for _ in range(4))


def hexdigits(rng: random.Random, n: int) -> str:
    """`n` lowercase hex digits."""
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def spark_attempt(rng: random.Random) -> str:
    """A Hadoop task attempt id (after `attempt_`)."""
    minute, job = rng.randint(10, 59), rng.randint(10, 99)
    return f"2017060920{minute}_00{job}_m_{rng.randint(0, 999):06d}_{rng.randint(0, 3)}"


def bgl_location(rng: random.Random) -> str:
    """A Blue Gene/L node card location."""
    rack, midplane, card = rng.randint(0, 7), rng.randint(0, 1), rng.choice("0123456789ABCDEF")
    slot, unit = rng.randint(2, 17), rng.choice(["01", "11"])
    return f"R{rack:02d}-M{midplane}-N{card}-C:J{slot:02d}-U{unit}"


def ftp_date(rng: random.Random) -> str:
    """A ctime-style date in July 2005."""
    day, hour = rng.randint(10, 28), rng.randint(0, 23)
    minute, second = rng.randint(0, 59), rng.randint(0, 59)
    return f"Sun Jul {day} {hour:02d}:{minute:02d}:{second:02d} 2005"


def ssh_version(rng: random.Random) -> str:
    """A junk protocol banner: 3-9 letters."""
    length = rng.randint(3, 9)
    return "".join(rng.choice(string.ascii_letters) for _ in range(length))


def decimal(rng: random.Random, low: int, high: int) -> str:
    """A number from `low` to `high` with one decimal digit, e.g. `12.3`."""
    return f"{rng.randint(low, high)}.{rng.randint(0, 9)}"


# A parameter's values by the name used in templates (<<name>>). Each draws from the stream
# in a fixed order: changing one changes every line after it.
PARAMS: dict[str, Callable[[random.Random], str]] = {
    "ip": ip,
    "port": lambda rng: str(rng.randint(1024, 65535)),
    "pid": lambda rng: str(rng.randint(1000, 32000)),
    "uid": lambda rng: str(rng.randint(10000, 10199)),
    "n": lambda rng: str(rng.randint(0, 9)),
    "nn": lambda rng: str(rng.randint(1, 99)),
    "int": lambda rng: str(rng.randint(100, 99999)),
    "big": lambda rng: str(rng.randint(10**6, 10**9)),
    "ms": lambda rng: str(rng.randint(1, 6000)),
    "hex": lambda rng: hexdigits(rng, 7),
    "hex8": lambda rng: hexdigits(rng, 8),
    "hex2": lambda rng: hexdigits(rng, 2),
    "sid": lambda rng: "14ede" + hexdigits(rng, 11),
    "user": lambda rng: rng.choice(USERS),
    "host": lambda rng: rng.choice(HOSTS),
    "pkg": lambda rng: rng.choice(PACKAGES),
    "act": lambda rng: rng.choice(ACTIVITIES),
    "f": lambda rng: f"{rng.randint(0, 40)}.{rng.randint(0, 3)}",
    "kb": lambda rng: decimal(rng, 1, 900),
    "mb": lambda rng: decimal(rng, 10, 9000),
    "file": lambda rng: f"part-{rng.randint(0, 999):05d}",
    "attempt": spark_attempt,
    "comp": lambda rng: rng.choice(COMPONENTS),
    "bgl": bgl_location,
    "hnode": lambda rng: f"node-{rng.randint(0, 255)}",
    "mac": lambda rng: ":".join(hexdigits(rng, 2) for _ in range(6)),
    "job": lambda rng: f"{rng.randint(1000, 99999)}.tbird-admin1",
    "date": ftp_date,
    "proc": lambda rng: rng.choice(OOM_PROCESSES),
    "zpath": lambda rng: rng.choice(ZNODES),
    "ver": ssh_version,
    "fp": lambda rng: ":".join(hexdigits(rng, 2) for _ in range(16)),
    "gb": lambda rng: decimal(rng, 1, 30),
}
_PARAM = re.compile(r"<<(\w+)>>")


def fill(text: str, rng: random.Random) -> str:
    """`text` with each <<name>> replaced by a fresh value, left to right."""
    return _PARAM.sub(lambda m: PARAMS[m.group(1)](rng), text)


def template_of(text: str) -> str:
    """`text` as the CSV's EventTemplate: `<*>` for each parameter."""
    return _PARAM.sub("<*>", text)


# ----------------------------------------------------------------------------- headers
# A header turns a template's meta fields and the line's time into the text before the
# content. `state` lives for one log: what a system keeps from line to line (node, pid...).
# Some headers draw a value on every line but keep only the first one: the dataset's bytes
# (and so the benchmark's results) depend on the exact sequence of draws.

Header = Callable[[Meta, datetime, State, random.Random], str]


def epoch(t: datetime) -> int:
    """Seconds since 1970 of `t`, a UTC time (not the machine's time zone)."""
    return int(t.replace(tzinfo=UTC).timestamp())


def android_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`03-17 16:13:39.691 20883  6146 D DisplayPowerController: ` (logcat threadtime)."""
    tag, level = meta
    drawn = (rng.randint(600, 30000), rng.randint(600, 30000))  # on every line, see above
    pid, tid = state.setdefault(tag, drawn)  # one process and thread per tag
    return f"{t:%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} {pid:5d} {tid:5d} {level} {tag}: "


def bgl_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`- 1117813858 2005.06.03 R04-M1-N2-C:J05-U11 2005-06-03-15.50.58.986082 R04-M1-N2-C:J05-U11
    RAS KERNEL INFO ` (one line: label, epoch, date, node, time, node, RAS, component, level)."""
    component, level, label = meta
    node = state.get("node")
    if not node or rng.random() >= 0.8:  # a node reports runs of events
        node = bgl_location(rng)
    state["node"] = node
    stamp = f"{t:%Y-%m-%d-%H.%M.%S}.{t.microsecond:06d}"
    return f"{label} {epoch(t)} {t:%Y.%m.%d} {node} {stamp} {node} RAS {component} {level} "


def hpc_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`155031 gige3 switch_module link.state 1077797373 1 ` (record id first)."""
    node_kind, component, event = meta
    first = rng.randint(100000, 200000)  # on every line, see above
    state["id"] = state.get("id", first) + rng.randint(1, 40)  # ids grow, with gaps
    nodes = {  # all three drawn, one used
        "node": f"node-{rng.randint(0, 255)}",
        "gige": f"gige{rng.randint(0, 30)}",
        "domain": f"node-D{rng.randint(0, 7)}",
    }
    return f"{state['id']} {nodes[node_kind]} {component} {event} {epoch(t)} 1 "


_LINUX_NO_PID = ("kernel", "syslog", "logrotate", "portmap", "irqbalance", "udev", "cups")


def linux_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`Jun 14 15:16:01 combo crond(pam_unix)[9948]: ` (syslog)."""
    (process,) = meta
    pid = "" if process in _LINUX_NO_PID else f"[{rng.randint(1000, 32000)}]"
    return f"{t:%b} {t.day:2d} {t:%H:%M:%S} combo {process}{pid}: "


def openssh_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`Dec 10 07:02:04 LabSZ sshd[13905]: ` (syslog, one sshd process per connection)."""
    pid = state.get("pid")
    if not pid or rng.random() >= 0.7:  # a connection logs several lines
        pid = rng.randint(1000, 32000)
    state["pid"] = pid
    return f"{t:%b} {t.day:2d} {t:%H:%M:%S} LabSZ sshd[{pid}]: "


def spark_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`17/06/09 20:10:41 INFO rdd.HadoopRDD: ` (log4j)."""
    level, component = meta
    return f"{t:%y/%m/%d %H:%M:%S} {level} {component}: "


def thunderbird_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`- 1131537661 2005.11.09 an925 Nov 9 12:01:01 an925/an925 crond(pam_unix)[27173]: `."""
    label, process = meta
    node = state.get("node")
    if not node or rng.random() >= 0.6:  # a node logs runs of lines
        node = f"{rng.choice(['dn', 'an', 'bn', 'cn'])}{rng.randint(1, 999)}"
    state["node"] = node
    if process == "ntpd":
        pid = f"[{rng.randint(1000, 9000)}]"
    elif process in ("kernel", "dhcpd"):
        pid = ""
    else:
        pid = f"[{rng.randint(1000, 32000)}]"
    day = f"{t:%b} {t.day} {t:%H:%M:%S}"
    return f"{label} {epoch(t)} {t:%Y.%m.%d} {node} {day} {node}/{node} {process}{pid}: "


def zookeeper_header(meta: Meta, t: datetime, state: State, rng: random.Random) -> str:
    """`2015-07-29 17:49:36,741 - INFO  [CommitProcessor:1:ZooKeeperServer@595] - `."""
    level, thread = meta
    return f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d} - {level:<5} [{thread}] - "


# ----------------------------------------------------------------------------- templates
# In each table the order matters: it is the order of draws, and a template's EventId is
# E<its 1-based position>. Kept compact by hand: the formatter would spread each entry over
# five lines.

NIO = "NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181"
QP = "QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181"

# fmt: off
ANDROID = (
    frequent(30, ("PowerManagerService", "D"),
        'acquire lock=<<big>>, flags=0x1, tag="View Lock", name=com.android.systemui, ws=null, '
        "uid=<<uid>>, pid=<<pid>>"),
    frequent(28, ("PowerManagerService", "D"),
        'release:lock=<<big>>, flg=0x0, tag="View Lock", name=com.android.systemui, ws=null, '
        "uid=<<uid>>, pid=<<pid>>"),
    frequent(14, ("WindowManager", "D"),
        "printFreezingDisplayLogsopening app wtoken = AppWindowToken{<<hex>> token=Token{<<hex>> "
        "ActivityRecord{<<hex>> u0 <<pkg>>/<<act>> t<<int>>}}}, allDrawn= false, "
        "startingDisplayed =  false, startingMoved =  false, isRelaunching =  false"),
    frequent(10, ("DisplayPowerController", "D"),
        "Animating brightness: target=<<nn>>, rate=<<nn>>"),
    frequent(6, ("PowerManager_screenOn", "I"), "DBG onScreenOn: bright=<<nn>>"),
    frequent(8, ("ActivityManager", "V"),
        "Broadcast: Intent { act=android.intent.action.TIME_TICK flg=0x50000014 (has extras) } "
        "ordered=true userid=-1 callerApp=null"),
    frequent(7, ("AlarmManager", "V"),
        "Triggering alarm #<<nn>>: 3 when <<big>> alarm Alarm{<<hex>> type 3 when <<big>> "
        "com.android.phone}"),
    frequent(9, ("wpa_supplicant", "D"), "wlan0: Control interface command 'SIGNAL_POLL'"),
    frequent(9, ("WifiStateMachine", "D"), "processMsg: ConnectedState"),
    frequent(5, ("ActivityManager", "I"),
        "Killing <<pid>>:<<pkg>>/u0a<<nn>> (adj <<nn>>): empty #<<nn>>"),
    frequent(5, ("AudioManager", "D"), "getStreamVolume streamType: <<n>> volume: <<nn>>"),
    frequent(4, ("Choreographer", "I"),
        "Skipped <<nn>> frames!  The application may be doing too much work on its main thread."),
    frequent(4, ("art", "I"),
        "Background sticky concurrent mark sweep GC freed <<int>>(<<mb>>MB) AllocSpace objects, "
        "<<n>>(<<kb>>KB) LOS objects, <<nn>>% free, <<mb>>MB/<<mb>>MB, paused <<ms>>us "
        "total <<ms>>ms"),
    medium(12, ("SendBroadcastPermission", "D"),
        "action:android.intent.action.SCREEN_ON, mPermissionType:0"),
    medium(15, ("ActivityManager", "I"),
        "Start proc <<pid>>:<<pkg>>/u0a<<nn>> for service <<pkg>>/.PushService"),
    medium(18, ("ActivityManager", "D"), "cleanUpApplicationRecord -- <<pid>>"),
    medium(6, ("PhoneStatusBar", "D"),
        "disable: < expand icons alerts system_info back home recent clock search "
        "quick_settings >"),
    medium(20, ("KeyguardUpdateMonitor", "D"), "handleBatteryUpdate"),
    rare(2, ("ActivityManager", "I"),
        "Killing <<pid>>:<<pkg>>/u0a<<nn>> (adj <<nn>>): remove task"),
    rare(3, ("PowerManagerService", "D"),
        'acquire lock=<<big>>, flags=0x1, tag="RILJ_ACK_WL", name=com.android.phone, ws=null, '
        "uid=1001, pid=<<pid>>"),
    rare(1, ("WindowManager", "D"),
        "printFreezingDisplayLogsopening app wtoken = AppWindowToken{<<hex>> token=Token{<<hex>> "
        "ActivityRecord{<<hex>> u0 <<pkg>>/<<act>> t<<int>>}}}, allDrawn= true, "
        "startingDisplayed =  true, startingMoved =  false, isRelaunching =  true"),
    rare(1, ("WifiStateMachine", "E"), "Failed to set frequency band, reason=<<n>>"),
    rare(2, ("ActivityManager", "W"),
        "Unable to launch app <<pkg>>/<<uid>> for broadcast Intent { "
        "act=android.intent.action.BOOT_COMPLETED flg=0x8000010 (has extras) }: process is bad"),
    rare(1, ("AndroidRuntime", "E"), "FATAL EXCEPTION: main"),
    rare(1, ("WindowManager", "W"), "Window freeze timeout expired."),
    rare(2, ("DisplayPowerController", "I"), "Unblocked screen on after <<ms>> ms"),
    rare(1, ("Choreographer", "W"),
        "Frame time is <<f>> ms in the future!  Check that graphics HAL is generating vsync "
        "timestamps using the correct timebase."),
    rare(2, ("AudioService", "W"), "setStreamVolume streamType: <<n>> volume out of range: <<nn>>"),
    rare(1, ("ActivityManager", "W"),
        "Timeout executing service: ServiceRecord{<<hex>> u0 <<pkg>>/.PushService}"),
    rare(2, ("WifiStateMachine", "D"), "processMsg: DisconnectedState"),
    rare(1, ("BatteryService", "W"), "Battery temperature is too high: <<int>>, shutting down"),
    rare(1, ("PowerManagerService", "I"), "Going to sleep due to power button (uid <<n>>)..."),
    rare(3, ("lowmemorykiller", "I"),
        "Killing '<<pkg>>' (<<pid>>), adj <<nn>>, to free <<int>>kB on behalf of 'kswapd0' (21)"),
)

BGL = (
    frequent(30, ("KERNEL", "INFO", "-"), "instruction cache parity error corrected"),
    frequent(20, ("KERNEL", "INFO", "-"), "generating core.<<int>>"),
    frequent(12, ("KERNEL", "INFO", "-"), "<<nn>> double-hummer alignment exceptions"),
    frequent(12, ("KERNEL", "INFO", "-"), "CE sym <<nn>>, at 0x<<hex8>>, mask 0x<<hex2>>"),
    frequent(10, ("KERNEL", "FATAL", "KERNDTLB"), "data TLB error interrupt"),
    frequent(8, ("KERNEL", "INFO", "-"),
        "<<n>> ddr error(s) detected and corrected on rank 0, symbol <<nn>>, bit <<n>>"),
    frequent(8, ("KERNEL", "INFO", "-"), "total of <<nn>> ddr error(s) detected and corrected"),
    frequent(8, ("APP", "FATAL", "APPREAD"),
        "ciod: failed to read message prefix on control stream (CioStream socket to "
        "<<ip>>:<<port>>"),
    frequent(6, ("KERNEL", "INFO", "-"), "<<nn>> floating point alignment exceptions"),
    frequent(5, ("KERNEL", "FATAL", "KERNSTOR"), "data storage interrupt"),
    medium(12, ("KERNEL", "INFO", "-"), "ciod: Message code <<n>> is not <<nn>> or 4294967295"),
    medium(10, ("KERNEL", "FATAL", "KERNMC"),
        "machine check interrupt (bit=0x<<hex2>>): L2 dcache unit data parity error"),
    medium(8, ("MMCS", "ERROR", "MMCS"),
        "idoproxydb hit ASSERT condition: ASSERT expression=0 Source file=idotransportmgr.cpp "
        "Source line=1043 Function=int IdoTransportMgr::SendPacket(IdoUdpMgr*, BglCtlPavTrace*)"),
    medium(6, ("KERNEL", "FATAL", "KERNRTSP"),
        "rts: kernel terminated for reason 1004rts: bad message header: invalid cpu, "
        "type=<<int>>, cpu=<<n>>, index=<<big>>, total=<<n>>"),
    rare(2, ("KERNEL", "FATAL", "KERNDTLB"),
        "total of <<nn>> ddr error(s) detected and corrected over <<int>> seconds"),
    rare(2, ("KERNEL", "INFO", "-"), "<<n>> L3 EDRAM error(s) (dcr 0x0157) detected and corrected"),
    rare(1, ("KERNEL", "FATAL", "KERNMC"),
        "machine check interrupt (bit=0x<<hex2>>): L2 dcache unit read return parity error"),
    rare(1, ("KERNEL", "FATAL", "KERNFPU"), "floating point unavailable interrupt"),
    rare(2, ("KERNEL", "FATAL", "KERNEXT"),
        "external input interrupt (unit=0x<<hex2>> bit=0x<<hex2>>): uncorrectable torus error"),
    rare(3, ("APP", "FATAL", "APPREAD"),
        "ciod: Error reading message prefix after LOGIN_MESSAGE on CioStream socket to "
        "<<ip>>:<<port>>: Link has been severed"),
    rare(1, ("LINKCARD", "FATAL", "LINKBLL"),
        "MidplaneSwitchController performing bit sparing on <<bgl>> bit <<nn>>"),
    rare(1, ("MONITOR", "FAILURE", "MONILL"),
        "monitor caught java.lang.IllegalStateException: while executing CONTROL Operation "
        "caught java.net.SocketException: Broken pipe and is stopping"),
    rare(2, ("KERNEL", "INFO", "-"), "shutdown complete"),
    rare(1, ("KERNEL", "FATAL", "KERNTERM"), "Lustre mount FAILED : <<bgl>> : block_id : location"),
    rare(2, ("DISCOVERY", "WARNING", "-"),
        "Node card VPD check: <<bgl>> node in processor card slot J<<nn>> do not match. VPD ecid "
        "<<hex8>>, found <<hex8>>"),
    rare(1, ("KERNEL", "FATAL", "KERNPAN"), "rts panic! - stopping execution"),
    rare(1, ("KERNEL", "FATAL", "KERNITLB"), "instruction TLB error interrupt"),
    rare(1, ("KERNEL", "FATAL", "-"), "L3 major internal error"),
    rare(1, ("KERNEL", "FATAL", "-"), "program interrupt: fp cr update field .............<<n>>"),
)

HPC = (
    frequent(30, ("node", "unix.hw", "state_change.unavailable"),
        'Component State Change: Component "<<comp>>" is in the unavailable state (HWID=<<int>>)'),
    frequent(15, ("node", "node", "status"), "running running"),
    frequent(10, ("gige", "switch_module", "link.state"), "Link in reset"),
    frequent(8, ("node", "node", "psu"), "PSU status ( on on )"),
    frequent(8, ("node", "node", "temp"), "Temperature (<<nn>>C) exceeds warning threshold"),
    frequent(7, ("node", "node", "fan"),
        "Fan speeds ( <<int>> <<int>> <<int>> <<int>> <<int>> <<int>> )"),
    frequent(6, ("domain", "action", "start"), "clusterAddMember  (command <<int>>)"),
    frequent(6, ("domain", "action", "end"), "Command has completed successfully"),
    frequent(5, ("domain", "node", "ServerFileSystem"),
        "ClusterFileSystem: There is no server for ServerFileSystem domain storage<<n>>"),
    medium(20, ("node", "unix.hw", "state_change.available"),
        'Component State Change: Component "<<comp>>" is in the available state (HWID=<<int>>)'),
    medium(10, ("domain", "action", "error"),
        "boot (command <<int>>) Error: couldn't connect to console"),
    medium(12, ("node", "node", "status"), "configured out"),
    medium(10, ("domain", "action", "start"), "bootGenvmunix  (command <<int>>)"),
    medium(5, ("node", "node", "status"), "boot command: bootGenvmunix completed"),
    rare(2, ("node", "node", "temp"), "Temperature (<<nn>>C) exceeds critical threshold"),
    rare(1, ("node", "node", "psu"), "PSU status ( on off )"),
    rare(2, ("domain", "node", "ServerFileSystem"), "ServerFileSystem domain storage<<n>> is full"),
    rare(1, ("node", "node", "status"),
        "inconsistent nodesets <<hnode>> 0x<<hex8>> <ok> <<hnode>> 0x<<hex8>> <ok>"),
    rare(1, ("domain", "action", "error"),
        "halt (command <<int>>) Error: Unable to connect to node"),
    rare(2, ("gige", "switch_module", "link.state"),
        "Link error on broadcast tree Interconnect-<<n>>T00:00:<<n>>:0"),
    rare(3, ("domain", "action", "start"),
        "Targeting domains:node-D<<n>> and nodes:node-[<<nn>>-<<nn>>] child of command <<int>>"),
    rare(1, ("node", "node", "niff"),
        "NIFF: node <<hnode>> has detected an available network connection on network <<ip>> via "
        "interface alt0"),
    rare(2, ("node", "node", "niff"),
        "NIFF: node <<hnode>> detected a failed network connection on network <<ip>> via "
        "interface alt0"),
    rare(1, ("domain", "action", "error"), "wait (command <<int>>) Error: node is not responding"),
    rare(1, ("node", "node", "status"), "Kernel panic: Fatal exception"),
    rare(2, ("domain", "action", "error"),
        "risBoot (command <<int>>) Error: Timeout waiting for node to boot"),
    rare(1, ("node", "node", "fan"),
        "Fan speeds ( <<int>> <<int>> <<int>> 0 <<int>> <<int>> ) fan failure detected"),
    rare(2, ("node", "node", "status"), "ambient=<<nn>>"),
    rare(1, ("domain", "action", "end"), "Command aborted by user"),
)

LINUX = (
    frequent(30, ("sshd(pam_unix)",),
        "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=<<ip>>"),
    frequent(14, ("sshd(pam_unix)",), "check pass; user unknown"),
    frequent(20, ("sshd(pam_unix)",),
        "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= "
        "rhost=<<host>>  user=root"),
    frequent(10, ("ftpd",), "connection from <<ip>> (<<host>>) at <<date>>"),
    frequent(10, ("crond(pam_unix)",), "session opened for user root by (uid=0)"),
    frequent(10, ("crond(pam_unix)",), "session closed for user root"),
    frequent(6, ("xinetd",), "START: ftp pid=<<pid>> from=<<ip>>"),
    medium(12, ("su(pam_unix)",), "session opened for user news by (uid=0)"),
    medium(12, ("su(pam_unix)",), "session closed for user news"),
    medium(6, ("logrotate",), "ALERT exited abnormally with [1]"),
    medium(5, ("syslog",), "syslogd startup succeeded"),
    medium(5, ("kernel",), "klogd 1.4.1, log source = /proc/kmsg started."),
    medium(5, ("cups",), "cupsd startup succeeded"),
    medium(5, ("cups",), "cupsd shutdown succeeded"),
    medium(4, ("kernel",), "Kernel command line: ro root=LABEL=/ rhgb quiet"),
    rare(2, ("su(pam_unix)",), "session opened for user cyrus by (uid=0)"),
    rare(2, ("su(pam_unix)",), "session closed for user cyrus"),
    rare(3, ("sshd(pam_unix)",),
        "authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= "
        "rhost=<<ip>>  user=guest"),
    rare(2, ("kernel",), "Out of Memory: Killed process <<pid>> (<<proc>>)."),
    rare(1, ("kernel",), "hda: dma_intr: status=0x51 { DriveReady SeekComplete Error }"),
    rare(1, ("gpm",), "*** info [startup.c(95)]: Started gpm successfully. Entered daemon mode."),
    rare(2, ("named",), "lame server resolving '<<host>>' (in 'example.net'?): <<ip>>#53"),
    rare(1, ("rpc.statd",), "Version 1.0.6 Starting"),
    rare(1, ("portmap",), "portmap startup succeeded"),
    rare(1, ("udev",), "udev startup succeeded"),
    rare(1, ("kernel",),
        "Linux version 2.6.5-1.358 (bhcompile@bugs.build.redhat.com) (gcc version 3.3.3 20040412 "
        "(Red Hat Linux 3.3.3-7)) #1 Wed May 19 12:55:24 EDT 2004"),
    rare(1, ("kernel",), "usb 1-1: new full speed USB device using address <<n>>"),
    rare(2, ("sshd",), "Accepted password for <<user>> from <<ip>> port <<port>> ssh2"),
    rare(1, ("kernel",),
        "EXT3-fs error (device hda2): ext3_lookup: unlinked inode <<int>> in dir #<<int>>"),
)

OPENSSH = (
    frequent(14, (),
        "reverse mapping checking getaddrinfo for <<host>> [<<ip>>] failed - POSSIBLE "
        "BREAK-IN ATTEMPT!"),
    frequent(16, (), "Invalid user <<user>> from <<ip>>"),
    frequent(16, (), "input_userauth_request: invalid user <<user>> [preauth]"),
    frequent(12, (), "pam_unix(sshd:auth): check pass; user unknown"),
    frequent(12, (),
        "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= "
        "rhost=<<ip>>"),
    frequent(16, (), "Failed password for invalid user <<user>> from <<ip>> port <<port>> ssh2"),
    frequent(30, (), "Failed password for root from <<ip>> port <<port>> ssh2"),
    frequent(14, (), "Received disconnect from <<ip>>: 11: Bye Bye [preauth]"),
    frequent(8, (), "Connection closed by <<ip>> [preauth]"),
    frequent(20, (),
        "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= "
        "rhost=<<ip>>  user=root"),
    frequent(8, (),
        "message repeated <<n>> times: [ Failed password for root from <<ip>> port <<port>> ssh2]"),
    frequent(5, (), "Disconnecting: Too many authentication failures for root [preauth]"),
    frequent(5, (),
        "PAM <<n>> more authentication failures; logname= uid=0 euid=0 tty=ssh ruser= "
        "rhost=<<ip>>  user=root"),
    frequent(5, (), "PAM service(sshd) ignoring max retries; <<n>> > 3"),
    medium(8, (), "Accepted password for <<user>> from <<ip>> port <<port>> ssh2"),
    medium(8, (), "pam_unix(sshd:session): session opened for user <<user>> by (uid=0)"),
    medium(8, (), "pam_unix(sshd:session): session closed for user <<user>>"),
    medium(10, (), "Did not receive identification string from <<ip>>"),
    medium(6, (), "Received disconnect from <<ip>>: 11: disconnected by user"),
    rare(1, (), "Connection closed by <<ip>> [preauth] maximum authentication attempts exceeded"),
    rare(3, (),
        "error: maximum authentication attempts exceeded for root from <<ip>> port <<port>> "
        "ssh2 [preauth]"),
    rare(2, (),
        "Received disconnect from <<ip>>: 3: com.jcraft.jsch.JSchException: Auth fail [preauth]"),
    rare(1, (), "Bad protocol version identification '<<ver>>' from <<ip>> port <<port>>"),
    rare(2, (), "Disconnecting: Too many authentication failures for admin [preauth]"),
    rare(3, (), "Failed none for invalid user <<user>> from <<ip>> port <<port>> ssh2"),
    rare(1, (), "Accepted publickey for <<user>> from <<ip>> port <<port>> ssh2: RSA <<fp>>"),
    rare(2, (), "fatal: Read from socket failed: Connection reset by peer [preauth]"),
    rare(3, (),
        "Address <<ip>> maps to <<host>>, but this does not map back to the address - POSSIBLE "
        "BREAK-IN ATTEMPT!"),
    rare(1, (), "Timeout, client not responding."),
    rare(2, (),
        "PAM 1 more authentication failure; logname= uid=0 euid=0 tty=ssh ruser= "
        "rhost=<<ip>>  user=root"),
    rare(1, (),
        "error: Received disconnect from <<ip>>: 14: No supported authentication methods "
        "available [preauth]"),
    rare(1, (), "subsystem request for sftp by user <<user>>"),
    rare(1, (), "Corrupted MAC on input. [preauth]"),
    rare(2, (), "User root from <<ip>> not allowed because not listed in AllowUsers"),
    rare(1, (), "Server listening on 0.0.0.0 port 22."),
)

SPARK = (
    frequent(30, ("INFO", "storage.BlockManager"), "Found block rdd_<<nn>>_<<nn>> locally"),
    frequent(20, ("INFO", "executor.Executor"), "Running task <<f>> in stage <<f>> (TID <<int>>)"),
    frequent(20, ("INFO", "executor.Executor"),
        "Finished task <<f>> in stage <<f>> (TID <<int>>). <<int>> bytes result sent to driver"),
    frequent(10, ("INFO", "spark.CacheManager"),
        "Partition rdd_<<nn>>_<<nn>> not found, computing it"),
    frequent(8, ("INFO", "rdd.HadoopRDD"),
        "Input split: hdfs://10.10.34.11:9000/pjhe/test/<<nn>>/<<file>>:<<big>>+<<big>>"),
    frequent(6, ("INFO", "storage.MemoryStore"),
        "Block broadcast_<<nn>> stored as values in memory (estimated size <<kb>> KB, "
        "free <<mb>> MB)"),
    frequent(6, ("INFO", "broadcast.TorrentBroadcast"),
        "Started reading broadcast variable <<nn>>"),
    frequent(6, ("INFO", "broadcast.TorrentBroadcast"),
        "Reading broadcast variable <<nn>> took <<ms>> ms"),
    frequent(6, ("INFO", "storage.MemoryStore"),
        "Block broadcast_<<nn>>_piece0 stored as bytes in memory (estimated size <<kb>> KB, "
        "free <<mb>> MB)"),
    frequent(15, ("INFO", "executor.CoarseGrainedExecutorBackend"), "Got assigned task <<int>>"),
    frequent(8, ("INFO", "python.PythonRunner"),
        "Times: total = <<ms>>, boot = <<ms>>, init = <<ms>>, finish = <<ms>>"),
    frequent(8, ("INFO", "storage.MemoryStore"),
        "Block rdd_<<nn>>_<<nn>> stored as values in memory (estimated size <<kb>> KB, "
        "free <<mb>> MB)"),
    frequent(4, ("INFO", "mapred.SparkHadoopMapRedUtil"), "attempt_<<attempt>>: Committed"),
    medium(5, ("INFO", "executor.CoarseGrainedExecutorBackend"),
        "Registered signal handlers for [TERM, HUP, INT]"),
    medium(5, ("INFO", "spark.SecurityManager"), "Changing view acls to: yarn,curi"),
    medium(5, ("INFO", "spark.SecurityManager"), "Changing modify acls to: yarn,curi"),
    medium(5, ("INFO", "spark.SecurityManager"),
        "SecurityManager: authentication disabled; ui acls disabled; users with view "
        "permissions: Set(yarn, curi); users with modify permissions: Set(yarn, curi)"),
    medium(5, ("INFO", "storage.DiskBlockManager"),
        "Created local directory at "
        "/opt/hdfs/nodemanager/usercache/curi/appcache/application_1485248649253_0<<int>>/"
        "blockmgr-<<hex8>>-<<hex>>"),
    medium(5, ("INFO", "storage.MemoryStore"), "MemoryStore started with capacity <<gb>> GB"),
    medium(5, ("INFO", "executor.Executor"),
        "Starting executor ID <<n>> on host mesos-slave-<<nn>>"),
    rare(2, ("WARN", "storage.BlockManager"),
        "Block rdd_<<nn>>_<<nn>> already exists on this machine; not re-adding it"),
    rare(1, ("ERROR", "executor.CoarseGrainedExecutorBackend"), "RECEIVED SIGNAL 15: SIGTERM"),
    rare(1, ("INFO", "storage.MemoryStore"), "MemoryStore cleared"),
    rare(1, ("INFO", "storage.BlockManager"), "BlockManager stopped"),
    rare(1, ("INFO", "util.ShutdownHookManager"), "Shutdown hook called"),
    rare(3, ("INFO", "executor.Executor"),
        "Executor is trying to kill task <<f>> in stage <<f>> (TID <<int>>)"),
    rare(3, ("INFO", "executor.Executor"),
        "Executor killed task <<f>> in stage <<f>> (TID <<int>>)"),
    rare(1, ("WARN", "executor.Executor"),
        "Finished task <<f>> in stage <<f>> (TID <<int>>). Result is larger than maxResultSize "
        "(<<mb>> MB > 1024.0 MB), dropping it."),
    rare(2, ("INFO", "storage.MemoryStore"),
        "Will not store rdd_<<nn>>_<<nn>> as it would require dropping another block from "
        "the same RDD"),
    rare(3, ("WARN", "storage.MemoryStore"),
        "Not enough space to cache rdd_<<nn>>_<<nn>> in memory! (computed <<mb>> MB so far)"),
    rare(1, ("INFO", "spark.CacheManager"),
        "Another thread is loading rdd_<<nn>>_<<nn>>, waiting for it to finish..."),
    rare(1, ("INFO", "spark.CacheManager"), "Finished waiting for rdd_<<nn>>_<<nn>>"),
    rare(1, ("ERROR", "executor.Executor"), "Exception in task <<f>> in stage <<f>> (TID <<int>>)"),
    rare(1, ("WARN", "hdfs.DFSClient"),
        "Slow ReadProcessor read fields took <<ms>>ms (threshold=30000ms); ack: seqno: <<int>> "
        "status: SUCCESS status: SUCCESS downstreamAckTimeNanos: <<big>>, targets: [<<ip>>:50010]"),
    rare(2, ("WARN", "storage.BlockManager"),
        "Failed to fetch remote block broadcast_<<nn>>_piece0 from BlockManagerId(<<n>>, "
        "mesos-slave-<<nn>>, <<port>>) (failed attempt <<n>>)"),
    rare(1, ("INFO", "executor.CoarseGrainedExecutorBackend"), "Driver commanded a shutdown"),
    rare(1, ("ERROR", "executor.CoarseGrainedExecutorBackend"),
        "Driver <<ip>>:<<port>> disassociated! Shutting down."),
)

THUNDERBIRD = (
    frequent(25, ("-", "crond(pam_unix)"), "session opened for user root by (uid=0)"),
    frequent(25, ("-", "crond(pam_unix)"), "session closed for user root"),
    frequent(8, ("-", "crond"), "(root) CMD (run-parts /etc/cron.hourly)"),
    frequent(10, ("-", "sshd"), "Accepted publickey for root from <<ip>> port <<port>> ssh2"),
    frequent(8, ("-", "sshd(pam_unix)"), "session opened for user root by root(uid=0)"),
    frequent(10, ("-", "dhcpd"), "DHCPREQUEST for <<ip>> from <<mac>> via eth1"),
    frequent(10, ("-", "dhcpd"), "DHCPACK on <<ip>> to <<mac>> via eth1"),
    frequent(5, ("-", "ntpd"), "synchronized to <<ip>>, stratum 2"),
    frequent(6, ("-", "xinetd"), "START: rsh pid=<<pid>> from=<<ip>>"),
    frequent(6, ("-", "in.rshd"), "connect from <<ip>> (<<ip>>)"),
    frequent(6, ("-", "rsh(pam_unix)"), "session opened for user root by (uid=0)"),
    medium(20, ("-", "kernel"), "ib_sm_sweep.c:1455: No topology change"),
    medium(10, ("VAPI", "kernel"),
        "[KERNEL_IB][ib_mad_static_compute_base][/mnt_projects/sysapps/src/ib/topspin/"
        "topspin-src-3.2.0-16/ib/ts_api_ng/mad/obj_host_amd64_custom1_rhel4/ts_ib_mad/"
        "mad_filter.c:67]Invalid MAD"),
    medium(12, ("-", "postfix/postdrop"),
        "warning: unable to look up public/pickup: No such file or directory"),
    medium(15, ("-", "sshd(pam_unix)"), "session closed for user root"),
    rare(2, ("-", "crond(pam_unix)"), "session opened for user news by (uid=0)"),
    rare(2, ("-", "crond(pam_unix)"), "session closed for user news"),
    rare(3, ("ECC", "kernel"),
        "EDAC k8 MC0: general bus error: participating processor(local node response), "
        "time-out(no timeout) memory transaction type(generic read), mem or i/o(mem access), "
        "cache level(generic)"),
    rare(2, ("CPU", "kernel"), "CPU<<n>>: Temperature above threshold, cpu clock throttled"),
    rare(2, ("CPU", "kernel"), "CPU<<n>>: Temperature/speed normal"),
    rare(1, ("PBS_CHK", "pbs_mom"), "task_check, cannot tm_reply to <<job>> task <<n>>"),
    rare(1, ("-", "kernel"), "ACPI: Power Button (FF) [PWRF]"),
    rare(2, ("-", "sshd"), "Accepted password for root from <<ip>> port <<port>> ssh2"),
    rare(1, ("-", "ntpd"), "synchronized to LOCAL(0), stratum 10"),
    rare(1, ("-", "ntpd"), "kernel time sync enabled 0001"),
    rare(3, ("-", "dhcpd"),
        "DHCPDISCOVER from <<mac>> via eth1: network 10.100.0.0/16: no free leases"),
    rare(1, ("-", "xinetd"), "EXIT: rsh status=1 pid=<<pid>> duration=<<n>>(sec)"),
    rare(1, ("-", "postfix/postdrop"),
        "warning: mail_queue_enter: create file maildrop/<<hex>>: No such file or directory"),
    rare(2, ("-", "kernel"), "nfs: server <<hnode>> not responding, still trying"),
    rare(2, ("-", "kernel"), "nfs: server <<hnode>> OK"),
    rare(1, ("PBS_BFD", "pbs_mom"),
        "Bad file descriptor (9) in tm_request, job <<job>> not running"),
)

ZOOKEEPER = (
    frequent(30, ("INFO", f"{NIO}:NIOServerCnxnFactory@197"),
        "Accepted socket connection from /<<ip>>:<<port>>"),
    frequent(25, ("INFO", f"{NIO}:NIOServerCnxn@1001"),
        "Closed socket connection for client /<<ip>>:<<port>> which had sessionid 0x<<sid>>"),
    frequent(15, ("INFO", f"{NIO}:ZooKeeperServer@839"),
        "Client attempting to establish new session at /<<ip>>:<<port>>"),
    frequent(15, ("INFO", "CommitProcessor:1:ZooKeeperServer@595"),
        "Established session 0x<<sid>> with negotiated timeout <<int>> for client "
        "/<<ip>>:<<port>>"),
    frequent(10, ("WARN", f"{NIO}:NIOServerCnxn@349"), "caught end of stream exception"),
    frequent(8, ("INFO", "ProcessThread(sid:1 cport:-1)::PrepRequestProcessor@476"),
        "Processed session termination for sessionid: 0x<<sid>>"),
    frequent(6, ("WARN", "SendWorker:<<n>>:QuorumCnxManager$SendWorker@679"),
        "Interrupted while waiting for message on queue"),
    frequent(6, ("WARN", "RecvWorker:<<n>>:QuorumCnxManager$RecvWorker@762"),
        "Connection broken for id <<n>>, my id = 1, error ="),
    frequent(8, ("INFO", f"{QP}:FastLeaderElection@774"), "Notification time out: <<ms>>"),
    frequent(8, ("WARN", "WorkerSender[myid=1]:QuorumCnxManager@368"),
        "Cannot open channel to <<n>> at election address /<<ip>>:3888"),
    frequent(6, ("INFO", "WorkerReceiver[myid=1]:FastLeaderElection@542"),
        "Notification: <<n>> (n.leader), 0x<<hex>> (n.zxid), 0x<<n>> (n.round), LOOKING "
        "(n.state), <<n>> (n.sid), 0x<<n>> (n.peerEPoch), LOOKING (my state)"),
    frequent(6, ("INFO", "SessionTracker:ZooKeeperServer@325"),
        "Expiring session 0x<<sid>>, timeout of <<int>>ms exceeded"),
    medium(15, ("INFO", f"{NIO}:NIOServerCnxn@1001"),
        "Closed socket connection for client /<<ip>>:<<port>> (no session established for client)"),
    medium(6, ("INFO", f"{QP}:QuorumPeer@670"), "LOOKING"),
    medium(6, ("INFO", f"{QP}:FastLeaderElection@740"),
        "New election. My id =  1, proposed zxid=0x<<hex>>"),
    medium(8, ("WARN", "SendWorker:<<n>>:QuorumCnxManager$SendWorker@688"),
        "Send worker leaving thread"),
    medium(5, ("INFO", f"{QP}:Follower@63"), "FOLLOWING - LEADER ELECTION TOOK - <<ms>>"),
    medium(8, ("INFO", "/10.10.34.11:3888:QuorumCnxManager$Listener@493"),
        "Received connection request /<<ip>>:<<port>>"),
    rare(2, ("WARN", f"{NIO}:NIOServerCnxn@354"),
        "Exception causing close of session 0x<<sid>> due to java.io.IOException: Connection "
        "reset by peer"),
    rare(3, ("WARN", f"{NIO}:NIOServerCnxn@354"),
        "Exception causing close of session 0x<<sid>> due to java.io.IOException: "
        "ZooKeeperServer not running"),
    rare(1, ("INFO", f"{QP}:QuorumPeer@738"), "LEADING"),
    rare(1, ("INFO", f"{QP}:Leader@358"), "LEADING - LEADER ELECTION TOOK - <<ms>>"),
    rare(1, ("WARN", f"{QP}:Follower@89"), "Exception when following the leader"),
    rare(1, ("INFO", f"{QP}:Learner@325"), "Getting a snapshot from leader"),
    rare(1, ("INFO", f"{QP}:FileTxnSnapLog@240"),
        "Snapshotting: 0x<<hex>> to /var/lib/zookeeper/version-2/snapshot.<<hex>>"),
    rare(2, ("INFO", "SyncThread:1:FileTxnLog@199"), "Creating new log file: log.<<hex>>"),
    rare(2, ("WARN", "SyncThread:1:FileTxnLog@321"),
        "fsync-ing the write ahead log in SyncThread:1 took <<int>>ms which will adversely "
        "effect operation latency. See the ZooKeeper troubleshooting guide"),
    rare(1, ("ERROR", "CommitProcessor:1:NIOServerCnxn@180"), "Unexpected Exception:"),
    rare(3, ("INFO", "ProcessThread(sid:1 cport:-1)::PrepRequestProcessor@627"),
        "Got user-level KeeperException when processing sessionid:0x<<sid>> type:create "
        "cxid:0x<<hex>> zxid:0x<<hex>> txntype:-1 reqpath:n/a Error Path:/hbase/<<zpath>> "
        "Error:KeeperErrorCode = NodeExists for /hbase/<<zpath>>"),
    rare(2, ("INFO", f"{NIO}:ZooKeeperServer@868"),
        "Client attempting to renew session 0x<<sid>> at /<<ip>>:<<port>>"),
    rare(2, ("INFO", f"{NIO}:ZooKeeperServer@617"),
        "Invalid session 0x<<sid>> for client /<<ip>>:<<port>>, probably expired"),
    rare(1, ("INFO", f"{QP}:Follower@166"),
        "shutdown called java.lang.Exception: shutdown Follower"),
    rare(1, ("ERROR", "LearnerHandler-/<<ip>>:<<port>>:LearnerHandler@562"),
        "Unexpected exception causing shutdown while sock still open"),
)

# fmt: on


class System(NamedTuple):
    """One log format: its templates, its header and the time of its first line."""

    name: str
    templates: tuple[Template, ...]
    header: Header
    start: datetime


SYSTEMS = (
    System("Android", ANDROID, android_header, datetime(2017, 3, 17, 16, 13, 38)),
    System("BGL", BGL, bgl_header, datetime(2005, 6, 3, 15, 42, 50)),
    System("HPC", HPC, hpc_header, datetime(2004, 2, 26, 12, 0, 0)),
    System("Linux", LINUX, linux_header, datetime(2005, 6, 14, 15, 16, 1)),
    System("OpenSSH", OPENSSH, openssh_header, datetime(2017, 12, 10, 6, 55, 46)),
    System("Spark", SPARK, spark_header, datetime(2017, 6, 9, 20, 10, 40)),
    System("Thunderbird", THUNDERBIRD, thunderbird_header, datetime(2005, 11, 9, 12, 1, 1)),
    System("Zookeeper", ZOOKEEPER, zookeeper_header, datetime(2015, 7, 29, 17, 41, 44)),
)

# ----------------------------------------------------------------------------- generation

# Gaps between lines: mostly sub-second to a few seconds, now and then minutes.
_GAPS_MS = (0, 0, 3, 17, 120, 800, 1500, 4000)


class Row(NamedTuple):
    """One line of the structured CSV."""

    line_id: int
    content: str
    event_id: str
    event_template: str


def layout(templates: tuple[Template, ...], lines: int, rng: random.Random) -> list[int]:
    """Which template (by index) each line is.

    Medium and rare lines first, each at a random free position; frequent templates then
    fill the gaps in bursts: the previous one goes on with probability 0.65.
    """
    fixed = sum(t.n for t in templates if t.kind != FREQUENT)
    if fixed > lines:
        raise ValueError(f"{lines} lines cannot hold {fixed} medium and rare lines")
    slots: list[int | None] = [None] * lines
    for i, template in enumerate(templates):
        if template.kind == FREQUENT:
            continue
        for _ in range(template.n):
            pos = rng.randrange(lines)
            while slots[pos] is not None:
                pos = rng.randrange(lines)
            slots[pos] = i
    choices = [i for i, t in enumerate(templates) if t.kind == FREQUENT]
    weights = [templates[i].n for i in choices]
    current: int | None = None
    out: list[int] = []
    for slot in slots:
        if slot is None:
            if current is None or rng.random() > 0.65:
                current = rng.choices(choices, weights)[0]
            slot = current
        out.append(slot)
    return out


def gap(rng: random.Random) -> timedelta:
    """The time from one line to the next."""
    if rng.random() < 0.9:
        return timedelta(milliseconds=rng.choice(_GAPS_MS) + rng.randint(0, 999))
    return timedelta(seconds=rng.randint(5, 600))


def generate(system: System, lines: int, rng: random.Random) -> tuple[list[str], list[Row]]:
    """The system's raw lines and their CSV rows."""
    order = layout(system.templates, lines, rng)
    t = system.start + timedelta(microseconds=rng.randint(0, 999999))
    state: dict[str, Any] = {}
    event_ids: dict[str, str] = {}  # same text, same id: that of the first one in the log
    raw: list[str] = []
    rows: list[Row] = []
    for line_id, i in enumerate(order, start=1):
        template = system.templates[i]
        t += gap(rng)
        meta = tuple(fill(field, rng) for field in template.meta)
        content = fill(template.text, rng)  # before the header: the order of draws
        raw.append(system.header(meta, t, state, rng) + content)
        pattern = template_of(template.text)
        event_id = event_ids.setdefault(pattern, f"E{i + 1}")
        rows.append(Row(line_id, content, event_id, pattern))
    return raw, rows


def write_system(folder: Path, raw: list[str], rows: list[Row]) -> None:
    """`<System>_2k.log` and `<System>_2k.log_structured.csv` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    name = folder.name
    (folder / f"{name}_2k.log").write_bytes(("\n".join(raw) + "\n").encode("utf-8"))
    with (folder / f"{name}_2k.log_structured.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(rows)


def write_dataset(out: Path, seed: int = SEED, lines: int = LINES) -> list[Path]:
    """Every system's log under `out`, from one random stream; returns the folders."""
    rng = random.Random(seed)
    folders = []
    for system in SYSTEMS:
        raw, rows = generate(system, lines, rng)
        folder = out / system.name
        write_system(folder, raw, rows)
        folders.append(folder)
    return folders


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--out", required=True, help="folder to write <System>/ folders into")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--lines", type=int, default=LINES, help="lines per system")
    args = parser.parse_args()
    folders = write_dataset(Path(args.out), args.seed, args.lines)
    for system, folder in zip(SYSTEMS, folders, strict=True):
        print(f"{folder}: {args.lines} lines, {len(system.templates)} templates")


if __name__ == "__main__":
    main()
