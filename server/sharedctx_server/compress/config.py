"""Every threshold the compressors use, in one frozen settings object."""

from __future__ import annotations

from dataclasses import dataclass

from sharedctx_server.fit import SizerProfile, sizer_profile

__all__ = ["CompressConfig"]

# Listings are long and uniform (each line matters little); test runners print failure detail
# that an agent acts on. Everything else gets the sizer's neutral profile.
_TOOL_PROFILES: tuple[tuple[str, str], ...] = (
    ("ls", "aggressive"),
    ("find", "aggressive"),
    ("tree", "aggressive"),
    ("du", "aggressive"),
    ("pytest", "conservative"),
    ("jest", "conservative"),
    ("vitest", "conservative"),
    ("cargo-test", "conservative"),
    ("go-test", "conservative"),
)

# Tools whose output is line-oriented whatever it looks like.
_LINE_TOOLS: tuple[str, ...] = (
    "bash",
    "cargo",
    "docker",
    "du",
    "find",
    "git",
    "go",
    "grep",
    "journalctl",
    "kubectl",
    "ls",
    "make",
    "npm",
    "pip",
    "pnpm",
    "pytest",
    "rg",
    "sh",
    "tail",
    "tree",
    "yarn",
)


@dataclass(frozen=True)
class CompressConfig:
    """Thresholds of the content-aware compressors; the defaults suit agent tool outputs."""

    # Below this many characters content is stored as is: a marker would cost what it saves.
    min_chars: int = 512
    # A form that leaves something out must save at least this share of the tokens: a 37-line
    # pytest report that the log compressor cut by 8% lost its failing test's `def` line.
    min_saved: float = 0.1
    # Prose (the "text" compressor) shorter than this is left exactly as written.
    prose_min_chars: int = 4000
    # Adaptive sizer profile (fit.SIZER_PROFILES) when the tool has no entry below.
    default_profile: str = "moderate"
    tool_profiles: tuple[tuple[str, str], ...] = _TOOL_PROFILES
    line_tools: tuple[str, ...] = _LINE_TOOLS

    # Line-oriented output.
    min_lines: int = 8  # fewer non-blank lines than this is never treated as a log
    context_lines: int = 1  # kept before and after every error or warning line
    head_lines: int = 3  # first lines always kept (the command, a header)
    tail_lines: int = 3  # last lines always kept (summaries, exit status)
    similar_distance: int = 3  # max SimHash Hamming distance (of masked lines) within a run
    min_run: int = 4  # shorter runs of similar lines are kept line by line
    run_period: int = 4  # distinct kinds of lines a run may alternate between (A B A B ...)

    # Stack traces.
    min_frames: int = 3  # fewer frames than this is not a stack trace
    innermost_frames: int = 3  # frames kept at the raising end of each trace
    outermost_frames: int = 1  # frames kept at the entry end of each trace

    # JSON.
    json_max_depth: int = 2  # containers nested this deep (0 = the document) are sized
    json_min_items: int = 9  # the sizer keeps every item of 8 or fewer anyway
    # Objects are sized only when they look like maps (many keys), never like records.
    json_min_members: int = 20
    json_long_string_chars: int = 1000  # string values longer than this are shortened
    json_string_keep_chars: int = 300  # leading characters kept of a shortened string

    # Choosing between compressors (see candidates.py). A structural compressor (listing,
    # table, diff, tests, source, markup) competes when it understood at least this share of
    # the non-blank lines; for messages and notes, which people wrote, nearly all of them.
    structural_min_share: float = 0.6
    prose_structural_min_share: float = 0.9
    # A structural compressor that understood this much runs without the generic line
    # compressor beside it: the generic one would only cost time (on large listings, most of
    # the time of a Put) for a form that loses the structure.
    generic_skip_share: float = 0.9

    # Listings.
    listing_max_names: int = 32  # names shown per folder (twice that at the top two levels)
    listing_big_bytes: int = 1 << 20  # files this large carry their size

    # Tables: rows always kept at each end (besides the notable ones).
    table_head_rows: int = 3
    table_tail_rows: int = 1

    # Diffs: changed lines kept at each end of a hunk, files listed per commit's --stat.
    diff_hunk_head: int = 4
    diff_hunk_tail: int = 2
    diff_max_stat: int = 12

    # looks_binary: share of control characters (other than tab, LF, CR) that means binary.
    binary_control_share: float = 0.10

    def __post_init__(self) -> None:
        for name in (
            "min_chars",
            "prose_min_chars",
            "min_lines",
            "context_lines",
            "head_lines",
            "tail_lines",
            "similar_distance",
            "innermost_frames",
            "outermost_frames",
            "json_max_depth",
            "json_string_keep_chars",
            "listing_max_names",
            "listing_big_bytes",
            "table_head_rows",
            "table_tail_rows",
            "diff_hunk_head",
            "diff_hunk_tail",
            "diff_max_stat",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"CompressConfig.{name} must be >= 0")
        if (
            self.min_run < 3
            or self.run_period < 1
            or self.min_frames < 1
            or min(self.json_min_items, self.json_min_members) < 2
        ):
            raise ValueError(
                "CompressConfig: min_run >= 3, run_period >= 1, min_frames >= 1, "
                "json_min_items/members >= 2"
            )
        if self.json_long_string_chars <= self.json_string_keep_chars:
            raise ValueError("CompressConfig: json_long_string_chars must exceed keep chars")
        for name in ("structural_min_share", "prose_structural_min_share", "generic_skip_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"CompressConfig.{name} must be in [0, 1]")
        if not 0.0 < self.binary_control_share <= 1.0:
            raise ValueError("CompressConfig.binary_control_share must be in (0, 1]")
        # Fail at construction, not at the first Put, on a misspelt profile name.
        sizer_profile(self.default_profile)
        for _, profile in self.tool_profiles:
            sizer_profile(profile)

    def profile_for(self, tool_name: str | None) -> SizerProfile:
        """The adaptive sizer profile for output of `tool_name`."""
        tool = tool_key(tool_name)
        for name, profile in self.tool_profiles:
            if name == tool:
                return sizer_profile(profile)
        return sizer_profile(self.default_profile)

    def is_line_tool(self, tool_name: str | None) -> bool:
        """Whether `tool_name` is known to print line-oriented output."""
        tool = tool_key(tool_name)
        return tool in self.line_tools or tool in dict(self.tool_profiles)


def tool_key(tool_name: str | None) -> str:
    """The program a tool name names: 'python -m pytest -x' and '/usr/bin/pytest' -> 'pytest'."""
    if not tool_name:
        return ""
    words = tool_name.strip().lower().split()
    if not words:
        return ""
    # An interpreter running a module names the module ("python3 -m pip ...").
    if len(words) >= 3 and words[1] == "-m" and words[0].rsplit("/", 1)[-1].startswith("python"):
        return words[2]
    return words[0].rsplit("/", 1)[-1]


#: The configuration compress() and the detectors use when given none (built once: checking
#: the profiles on construction is not free, and content is checked on every Put).
DEFAULT_CONFIG = CompressConfig()
