"""Directory listings: one line per folder, attributes only where unusual, errors kept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharedctx_server.compress import compress, explain, missing_error_lines
from sharedctx_server.compress.listing_parse import Entry, bare_names_only, parse_listing
from sharedctx_server.tokens import TokenCounter

from .strategies import UNICODE


def _ls_lr(folders: int = 12, files: int = 40) -> str:
    out: list[str] = []
    for f in range(folders):
        out += ["" if f else "", f"/srv/app/pkg{f}:", f"total {files * 8}"]
        for i in range(files):
            out.append(f"-rw-r--r-- 1 root root {1000 + i * 37:>6} Dec  2 02:05 module_{f}_{i}.py")
        out.append("drwxr-xr-x 2 root root   4096 Dec  2 02:05 __pycache__")
        out += ["", f"/srv/app/pkg{f}/__pycache__:", "total 8"]
        for i in range(files):
            out.append(
                f"-rw-r--r-- 1 root root {900 + i:>6} Dec  2 02:05 module_{f}_{i}.cpython-311.pyc"
            )
    return "\n".join(out[1:]) + "\n"


def test_ls_lr_becomes_one_line_per_folder(token_counter: TokenCounter) -> None:
    text = _ls_lr()
    result = compress(text, count_tokens=token_counter.count, tool_name="ls")
    assert result.compressor == "listing"
    assert result.compressed_tokens < 0.4 * result.original_tokens
    lines = result.text.split("\n")
    assert lines[0].startswith("[listing (ls) of /srv/app: ")
    assert "usual: files -rw-r--r--, dirs drwxr-xr-x, root:root, Dec 2" in lines[0]
    assert lines[0].endswith("; Get with full=true for all]")
    pkg = next(line for line in lines if line.startswith("pkg3/ ("))
    assert "module_3_0.py … module_3_39.py (40 alike)" in pkg and "-rw-r--r--" not in pkg
    cache = next(line for line in lines if line.startswith("pkg3/__pycache__/"))
    assert "named after the files of pkg3/ (*.cpython-311.pyc)" in cache


def test_unusual_entries_carry_their_attributes(token_counter: TokenCounter) -> None:
    lines = ["total 99"]
    lines += [f"-rw-r--r-- 1 root root 1200 Dec  2 02:05 file_{i}.txt" for i in range(30)]
    lines += [
        "-rwxr-xr-x 1 root root 5000 Dec  2 02:05 run.sh",
        "-rw------- 1 alice staff 10 Dec  2 02:05 secret.key",
        "lrwxrwxrwx 1 root root 7 Dec  2 02:05 current -> v1.2.3",
        "-rw-r--r-- 1 root root 73400320 Dec  2 02:05 dump.bin",
        "-rw-r--r-- 1 root root 1200 Nov 11  2023 old.txt",
        "ls: cannot open directory './private': Permission denied",
    ]
    out = compress("\n".join(lines), count_tokens=token_counter.count).text
    assert "run.sh*" in out
    assert "secret.key [-rw------- alice:staff]" in out
    assert "current -> v1.2.3" in out
    assert "dump.bin [70M]" in out
    assert "old.txt [Nov 11 2023]" in out
    assert "ls: cannot open directory './private': Permission denied" in out.split("\n")


def test_an_error_looking_name_keeps_its_whole_line(token_counter: TokenCounter) -> None:
    lines = [f"-rw-r--r-- 1 root root 1200 Dec  2 02:05 file_{i}.txt" for i in range(60)]
    lines[20] = "-rw-r--r-- 1 root root 3475 Dec  2 02:05 errors.py"
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, tool_name="ls")
    assert result.compressor == "listing"
    assert missing_error_lines(text, result.text) == []


def test_a_folder_named_like_an_error_keeps_its_header_and_the_listing_form(
    token_counter: TokenCounter,
) -> None:
    # Packages often hold an `errors/` or `exceptions/` folder: its `path:` header reads as
    # an error line, which the listing now keeps (the log compressor took over before, and
    # folded every other folder's names away).
    text = _ls_lr(folders=3).replace("/srv/app/pkg1:", "/srv/app/errors:")
    result = compress(text, count_tokens=token_counter.count, tool_name="ls")
    assert result.compressor == "listing"
    assert missing_error_lines(text, result.text) == []
    assert "/srv/app/errors:" in result.text.split("\n")
    assert "module_2_0.py … module_2_39.py (40 alike)" in result.text


def test_a_full_folder_keeps_its_notable_names_and_counts_the_rest(
    token_counter: TokenCounter,
) -> None:
    names = [f"{w}_{i}.{ext}" for i, (w, ext) in enumerate([("a", "json"), ("b", "py")] * 150)]
    text = "\n".join(["README.md", "pyproject.toml", *names])
    result = compress(text, count_tokens=token_counter.count, tool_name="ls")
    assert result.compressor == "listing"
    assert "README.md" in result.text and "pyproject.toml" in result.text
    assert "[... 238 names omitted: 119 .json, 119 .py]" in result.text


def test_find_output_is_grouped_by_folder(token_counter: TokenCounter) -> None:
    paths = ["."] + [f"./src/app/part_{i % 7}/mod_{i}.py" for i in range(200)]
    text = "\n".join(paths)
    result = compress(text, count_tokens=token_counter.count, tool_name="find")
    assert result.compressor == "listing"
    assert "src/app/part_3/ (" in result.text
    assert "./src/app/part_3/mod_3.py" not in result.text
    assert result.compressed_tokens < 0.5 * result.original_tokens


def test_tar_tv_output_is_grouped_by_folder(token_counter: TokenCounter) -> None:
    names = ["api", "models", "views", "forms", "admin", "urls", "tasks", "utils", "signals"]
    entry = "{} root/root {:>9} 2026-12-05 05:54 {}"
    lines = [entry.format("drwxr-xr-x", 0, "srv/app/")]
    for part in ("billing", "orders", "stock"):
        lines.append(entry.format("drwxr-xr-x", 0, f"srv/app/{part}/"))
        lines += [
            entry.format("-rw-r--r--", 1000 + 37 * i, f"srv/app/{part}/{part}_{name}.py")
            for i, name in enumerate(names)
        ]
    lines.append("lrwxrwxrwx root/root         0 2026-12-05 05:54 srv/app/current -> orders")
    result = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="tar")
    assert result.compressor == "listing"
    out = result.text.split("\n")
    assert "app/ (1 file, 3 dirs): current -> orders" in out
    orders = next(line for line in out if line.startswith("app/orders/ (9 files"))
    assert all(f"orders_{name}.py" in orders for name in names)
    assert result.compressed_tokens < 0.6 * result.original_tokens


def test_tree_output_is_read_by_depth(token_counter: TokenCounter) -> None:
    lines = ["project"]
    for d in range(4):
        last = d == 3
        lines.append(f"{'└── ' if last else '├── '}dir_{d}")
        for f in range(12):
            tail = "└── " if f == 11 else "├── "
            lines.append(f"{'    ' if last else '│   '}{tail}file_{d}_{f}.py")
    lines += ["", "4 directories, 48 files"]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, tool_name="tree")
    assert result.compressor == "listing"
    assert "listing (tree) of project" in result.text
    assert "dir_2/ (12 files): file_2_0.py" in result.text
    assert "4 directories, 48 files" in result.text


def test_du_names_carry_their_sizes(token_counter: TokenCounter) -> None:
    text = "\n".join(f"{4 * (i + 1)}K\t./data/chunk_{i:03d}.bin" for i in range(120)) + "\n484K\t."
    result = compress(text, count_tokens=token_counter.count, tool_name="du")
    assert result.compressor == "listing"
    assert "chunk_000.bin [4K] … chunk_119.bin [480K] (120 alike)" in result.text


def test_du_says_the_commonest_size_once(token_counter: TokenCounter) -> None:
    sizes = {f"notes_{i:02d}.txt": "4.0K" for i in range(30)} | {"dump.bin": "12M", "a.log": "8.0K"}
    text = "\n".join(f"{size}\t./docs/{name}" for name, size in sizes.items()) + "\n13M\t./docs"
    result = compress(text, count_tokens=token_counter.count, tool_name="du")
    assert result.compressor == "listing"
    assert "files of 4.0K where no size is given" in result.text.split("\n")[0]
    assert "dump.bin [12M]" in result.text and "a.log [8.0K]" in result.text
    assert "[4.0K]" not in result.text


def test_du_of_folders_counts_entries_and_takes_sizes_from_du(token_counter: TokenCounter) -> None:
    # Plain du lists folders only, each size holding everything under it: summing them (as
    # files) gave 9.2M for a 21M tree.
    lines = []
    for p in range(8):
        lines += [f"{8 + i}K\t/srv/lib/pkg{p}/mod{p}_{i}" for i in range(12)]
        lines.append(f"{sum(8 + i for i in range(12)) + 4}K\t/srv/lib/pkg{p}")
    lines.append("1.3M\t/srv/lib")
    result = compress("\n".join(lines), count_tokens=token_counter.count, tool_name="du")
    assert result.compressor == "listing"
    out = result.text.split("\n")
    assert "105 entries (1.3M)" in out[0]
    assert any(line.startswith("lib/pkg3/ (12 entries, 166K): ") for line in out)


def test_a_deep_du_nests_folders_under_the_long_path_they_share(
    token_counter: TokenCounter,
) -> None:
    # A package store's folders sit eight levels down, and the path they share was most of
    # every line of the form (46% saved on `du -h /usr/lib`).
    base = "/usr/lib/google-cloud-sdk/lib/surface/compute"
    lines = []
    for g in range(3):
        for leaf in range(8):
            lines.append(f"{8 + leaf}K\t{base}/command_group_{g}/command_{leaf}/__pycache__")
            lines.append(f"{20 + leaf}K\t{base}/command_group_{g}/command_{leaf}")
            lines.append(f"{4 + leaf}K\t{base}/command_group_{g}/command_{leaf}/testdata")
        lines.append(f"{200 + g}K\t{base}/command_group_{g}")
    lines.append(f"3.1M\t{base}")
    lines += ["12K\t/usr/lib/python3/dist-packages", "16K\t/usr/lib/python3"]  # root: /usr/lib
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, tool_name="du")
    assert result.compressor == "listing"
    out = result.text.split("\n")
    assert "an indented path continues the one above it" in out[0]
    group = out.index("  command_group_1/")
    assert out[group - 1 : group + 3] == [
        "    command_7/ (2 entries, 27K): __pycache__ [15K] testdata [11K]",
        "  command_group_1/",
        "    command_0/ (2 entries, 20K): __pycache__ [8K] testdata [4K]",
        "    command_1/ (2 entries, 21K): __pycache__ [9K] testdata [5K]",
    ]
    assert out[1] == "google-cloud-sdk/lib/surface/compute/"
    assert out[-1] == "python3/ (1 entry, 16K): dist-packages [12K]"
    short = text.replace(f"{base}/command_group_", "/c/g")
    flat = compress(short, count_tokens=token_counter.count, tool_name="du")
    assert "indented" not in flat.text  # short paths stay as they are


def test_env_output_is_not_a_listing(token_counter: TokenCounter) -> None:
    # `HOME=/root` is one word with slashes, like a line of `find`: read as one, the form
    # said `HOME=/ (1 file): root`.
    names = ["HOME=/root", "PATH=/usr/local/bin:/usr/bin:/bin", "SHELL=/bin/bash", "LANG=C.UTF-8"]
    text = "\n".join(names + [f"SSL_CERT_FILE_{i}=/etc/ssl/certs/ca-{i}.crt" for i in range(40)])
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor != "listing" and "file)" not in result.text
    assert "HOME=/root" in result.text.split("\n")


def test_settings_as_key_value_lines_are_not_names(token_counter: TokenCounter) -> None:
    # Redis INFO (`key:value`) and `git config -l` (`core.editor=vim`) read as a listing made
    # `./ (119 files): redis_version:7.2.4 ...` and `executable:/data/ (1 file)`.
    info = ["# Server", "redis_version:7.2.4", "executable:/data/redis-server"] + [
        f"db{i}:keys={1000 + i},expires=0,avg_ttl=0" for i in range(16)
    ]
    info += [f"used_memory_{i}:{i * 1024}" for i in range(40)] + ["rdb_last_bgsave_status:err"]
    config = [f"branch.b{i}.remote=origin" for i in range(40)] + ["core.editor=vim"]
    for text in ("\n".join(info), "\n".join(config)):
        choice = explain(text, count_tokens=token_counter.count)
        assert choice.result.compressor != "listing"
        assert all(t.name != "listing" or t.share < 0.6 for t in choice.trials)


def test_sibling_folders_with_the_same_names_share_a_line(token_counter: TokenCounter) -> None:
    paths = [f"/usr/share/doc/pkg{i}/{n}" for i in range(30) for n in ("copyright", "changelog.gz")]
    result = compress("\n".join(paths), count_tokens=token_counter.count)
    assert result.compressor == "listing"
    assert "{pkg0,pkg1,pkg2," in result.text
    assert "(2 files, each): copyright changelog.gz" in result.text


def test_a_column_of_words_is_a_listing_only_when_the_tool_says_so(
    token_counter: TokenCounter,
) -> None:
    words = "\n".join(f"word{i}" for i in range(200))
    assert "listing" not in {
        t.name for t in explain(words, count_tokens=token_counter.count).trials
    }
    named = compress(words, count_tokens=token_counter.count, tool_name="ls")
    assert named.compressor == "listing"


# Lines that are, or nearly are, one word (or blank): CSV rows, and the words the listing
# reader gives a meaning of its own (headers, paths, dots, tree branches, du sizes, tabs).
_SPECIAL = st.sampled_from(
    ["", "id,name,size", "3,a,17", "x.py", "name:", ":", ".", "..", "/", "a/b", "├──", "`--",
     "|--", "123", "4.0K", "total", "ls:", "-rw-r--r--", "drwxr-xr-x"]
)  # fmt: skip
# Three special words to one random one.
_WORDS = st.one_of(_SPECIAL, _SPECIAL, _SPECIAL, st.text(UNICODE, min_size=1, max_size=8))
_PADDING = st.sampled_from(["", " ", "    ", "\t", "\r", "\u3000", "\t ", "\t\t", " \r"])
_LINES = st.lists(st.tuples(_PADDING, _WORDS, _PADDING), max_size=6).map(
    lambda parts: "\n".join(a + w + b for a, w, b in parts)
)


def _check_bare_names_only(text: str) -> None:
    """What the parse makes of a text `bare_names_only` accepts: no entry at all, or the bare
    names in one folder that plan_listing turns down for a tool other than ls."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if not bare_names_only(text, sum(1 for line in lines if line.strip())):
        return
    listing = parse_listing(lines)
    entries = [i for f in listing.folders.values() for i in f.items if isinstance(i, Entry)]
    if entries:
        assert listing.style == "ls" and len(listing.folders) < 2
        assert not any(e.mode for e in entries)


# One text per shape the reader gives one-word lines: each would be misjudged without its rule.
@pytest.mark.parametrize(
    "text",
    ["├── ", "`--\t", "123\t ", "4.0K\t\t", "a\n\nname:\nb", "a\n..", "a\nb/c", "a\n/"],
)
def test_bare_names_only_turns_down_other_shapes(text: str) -> None:
    _check_bare_names_only(text)


@settings(max_examples=300, deadline=None)
@given(_LINES)
def test_bare_names_only_is_never_wrong(text: str) -> None:
    _check_bare_names_only(text)
