"""The model calls of a transcript: where each is, how full its context was, and who says so.

"What did the model really see?" starts with *when* it was asked: every call to
the model, the size of the context it was sent, and the window that had to
hold it. Each format records that differently (`../shared/spec`):

- Claude Code: each API response's `message.usage`; the context sent is
  `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`, read
  once per response (the lines sharing `message.id` repeat it). `output_tokens`
  there undercounts and is never read.
- Codex: the `event_msg` `token_count` after a call, `info.last_token_usage.
  input_tokens` (cached tokens are part of it) and `info.model_context_window`.
- LLM::Agent: `usage` on an assistant message, where the backend gave it.

Where the file records no size, the size is an estimate: the characters of
what the file says was in the context, divided by `CHARS_PER_TOKEN`, and it is
labelled so everywhere it goes (`ModelCall.recorded`, `--context`'s `source`).
No offline tokenizer reproduces these models' counts (CLAUDE_CODE.md), so no
cleverer rule is claimed. Where the file records no window, the window is
assumed from `WINDOWS`, a small table that names where each figure comes from,
or set by the caller (`--window`).

A gigabyte session has hundreds of thousands of calls, so they are kept as
columns of machine integers (`ModelCalls`), a few numbers a call, and the
`ModelCall` a caller reads is made on access. A pass builds them as it builds
the rest of its analysis: each batch of lines (mapped in a worker process for
a big file) says what its own lines show (`CallRun`), and the pass's fold
joins the batches in file order (`CallFold`), settling what a batch could not
know alone: whether its first line continues a call begun before it, the items
and characters carried over from earlier batches.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from operator import attrgetter
from typing import NamedTuple

#: Characters a token, for an estimate: "the usual estimate" (CLAUDE_CODE.md, "Token
#: usage"), which no model's tokenizer is held to (Claude's newer ones count more).
CHARS_PER_TOKEN = 4
#: How an estimated size was made, in words (what `--context` prints as its field).
ESTIMATE_RULE = "characters / 4"

# -- where a recorded size comes from --------------------------------------------------------
#
# A call's `fields` code; 0 is "not recorded" (its size is an estimate).

NOT_RECORDED = 0
CLAUDE_USAGE = 1
CODEX_TOKEN_COUNT = 2
REFERENCE_PROMPT_TOKENS = 3
REFERENCE_PROMPT_TOKENS_SNAKE = 4
REFERENCE_INPUT_TOKENS = 5
QWEN_USAGE = 6
GEMINI_TOKENS = 7
OPENCODE_TOKENS = 8
COPILOT_USAGE = 9

#: The field each code names, as `--context` prints it.
FIELDS = (
    ESTIMATE_RULE,
    "message.usage: input_tokens + cache_read_input_tokens + cache_creation_input_tokens",
    "token_count: info.last_token_usage.input_tokens",
    "usage.prompt-tokens",
    "usage.prompt_tokens",
    "usage: input_tokens + cache_read_input_tokens + cache_creation_input_tokens",
    "usageMetadata.promptTokenCount",
    "tokens.input",
    "step-finish tokens: input + cache.read + cache.write",
    "session.usage_record: usage.inputTokens",
)

#: Where a recorded window comes from (Codex's; Qwen Code's is `RECORDED_WINDOWS`).
RECORDED_WINDOW = "token_count: info.model_context_window"
#: Where a recorded window comes from, by the source of the call's size (it is recorded
#: beside it): Codex's `token_count`, Qwen Code's assistant record.
RECORDED_WINDOWS = {
    CODEX_TOKEN_COUNT: RECORDED_WINDOW,
    QWEN_USAGE: "contextWindowSize",
    COPILOT_USAGE: "usage.maxPromptTokens (the prompt's limit)",
}

# -- the window table ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KnownWindow:
    """A model's context window as its maker documents it: what `--context` assumes for a
    call of that model when the file records no window."""

    model: str
    """The model id, or the start of the ids it covers (`exact` False)."""
    tokens: int
    source: str
    """Where the figure comes from: a page or a source file a reader can open."""
    exact: bool = False

    def matches(self, model: str) -> bool:
        """Whether this entry covers the model id `model`."""
        return model == self.model if self.exact else model.startswith(self.model)


def _claude(slug: str) -> str:
    return f"platform.claude.com/docs/en/models/{slug}/overview (Context window)"


#: Codex's own table, which it used before it recorded `model_context_window`.
_CODEX = "openai/codex codex-rs/core/src/openai_model_info.rs (get_model_info)"

#: The windows assumed where a file records none. Small on purpose: each entry is a
#: figure its maker publishes, with where; a model not here has no window unless the
#: file or `--window` gives one. The longest matching entry wins. Claude Sonnet 4.5's
#: 1M-context beta is not assumed (the model id does not say whether a session used it):
#: a call above its assumed window says the window was larger, and `--window` sets it.
WINDOWS: tuple[KnownWindow, ...] = (
    KnownWindow("claude-haiku-4-5", 200_000, _claude("haiku-4-5")),
    KnownWindow("claude-sonnet-4-5", 200_000, _claude("sonnet-4-5")),
    KnownWindow("claude-opus-4-5", 200_000, _claude("opus-4-5")),
    KnownWindow("claude-opus-4-6", 1_000_000, _claude("opus-4-6")),
    KnownWindow("claude-sonnet-4-6", 1_000_000, _claude("sonnet-4-6")),
    KnownWindow("claude-opus-4-8", 1_000_000, _claude("opus-4-8")),
    KnownWindow("claude-sonnet-5", 1_000_000, _claude("sonnet-5")),
    KnownWindow("claude-opus-5-5", 1_000_000, _claude("opus-5-5")),
    KnownWindow("claude-haiku-5-5", 1_000_000, _claude("haiku-5-5")),
    KnownWindow("gpt-5", 272_000, _CODEX),
    KnownWindow("codex-", 272_000, _CODEX),
    KnownWindow("codex-mini-latest", 200_000, _CODEX, exact=True),
    KnownWindow("o3", 200_000, _CODEX, exact=True),
    KnownWindow("o4-mini", 200_000, _CODEX, exact=True),
    KnownWindow("gpt-4.1", 1_047_576, _CODEX),
    KnownWindow("gpt-4o", 128_000, _CODEX),
)


@cache
def known_window(model: str | None) -> KnownWindow | None:
    """The table's window for a model id (the longest entry that covers it), or None.

    Remembered per id: a report asks it for each of hundreds of thousands of calls.
    """
    if not model:
        return None
    best: KnownWindow | None = None
    for entry in WINDOWS:
        if entry.matches(model) and (best is None or len(entry.model) > len(best.model)):
            best = entry
    return best


class WindowSource(Enum):
    """Where a call's window comes from."""

    RECORDED = "recorded"
    """The file says (Codex's `model_context_window`)."""
    ASSUMED = "assumed"
    """The model's entry in `WINDOWS`."""
    OPTION = "option"
    """The caller set it (`--window`), for calls whose file records none."""


# -- compactions -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compaction:
    """A point where what the model was sent shrank, as the file records it.

    `resets` says whether the context started over from a summary (a compaction)
    or only had parts cleared (Claude Code's microcompaction); an estimate after
    a reset counts from it.
    """

    line: int
    kind: str
    """The record's own name: `compact_boundary`, `microcompact_boundary` (Claude Code),
    `compacted`, `compaction` (Codex), `compaction` (LLM::Agent)."""
    trigger: str | None = None
    """`auto` or `manual`, where the file says."""
    tokens_before: int | None = None
    """The context's size when it began, as recorded (`before_field`)."""
    before_field: str | None = None
    tokens_after: int | None = None
    """Its size after, as recorded (LLM::Agent's `tokens-after`)."""
    after_field: str | None = None
    """Where `tokens_after` is read from, when not LLM::Agent's `tokens-after`."""
    tokens_saved: int | None = None
    """What it saved, as recorded (a microcompaction's `tokensSaved`)."""
    summary: str = "readable"
    """`readable` (the file holds the summary), `encrypted` (the provider's, which
    cannot be read) or `none` (nothing was summarised: results were cleared)."""
    resets: bool = True

    def as_dict(self) -> dict[str, object]:
        """The `--context --json` shape of a compaction."""
        return {
            "line": self.line,
            "kind": self.kind,
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "before_field": self.before_field,
            "tokens_after": self.tokens_after,
            "after_field": self.after_field,
            "tokens_saved": self.tokens_saved,
            "summary": self.summary,
        }


_line_of = attrgetter("line")

# -- the calls -------------------------------------------------------------------------------


def estimate_tokens(chars: int) -> int:
    """An estimated token count for `chars` characters (`CHARS_PER_TOKEN`), rounded up."""
    return -(-max(chars, 0) // CHARS_PER_TOKEN)


class ModelCall(NamedTuple):
    """One call to the model, as `ModelCalls` makes it on access (a tuple: a report makes
    hundreds of thousands, and a frozen dataclass sets each field through a call)."""

    number: int
    """1-based, in file order."""
    line: int
    """The first line of the response."""
    model: str | None
    tokens: int
    """The size of the context sent: recorded, or an estimate (`recorded` False)."""
    recorded: bool
    field: str
    """Where `tokens` comes from: a field of the file, or `ESTIMATE_RULE`."""
    window: int | None
    window_source: WindowSource | None
    window_basis: str | None
    """The window's field, its table entry's source, or `--window`."""
    items_added: int
    """The records the context gained since the previous call began (its response among
    them), one a line: messages, tool calls and results."""
    biggest_line: int | None
    """The line of the biggest of those items, by characters."""
    biggest_chars: int
    compactions: tuple[Compaction, ...]
    """Those recorded after the previous call began and before this one."""

    @property
    def source(self) -> str:
        """`recorded` or `estimate`: how `tokens` was come by."""
        return "recorded" if self.recorded else "estimate"

    @property
    def fill(self) -> float | None:
        """The share of the window the context took (None: no window)."""
        return self.tokens / self.window if self.window else None


#: Each column's narrowest array type (`ModelCalls.narrow`): a field code in a byte, every
#: other number in 4 bytes where it fits.
NARROW = {
    "lines": "i", "tokens": "i", "fields": "b", "chars": "i", "windows": "i",
    "added": "i", "models": "i", "big_lines": "i", "big_chars": "i",
}  # fmt: skip


@dataclass(slots=True)
class ModelCalls:
    """Every model call of a transcript, in file order, as columns (a few numbers a call).

    Plain data: it pickles (the pass server sends analyses back) and copies.
    """

    lines: array[int] = field(default_factory=lambda: array("q"))
    tokens: array[int] = field(default_factory=lambda: array("q"))
    """The recorded context size; -1: the file records none."""
    fields: array[int] = field(default_factory=lambda: array("q"))
    """Where each recorded size comes from (`FIELDS`; 0: not recorded)."""
    chars: array[int] = field(default_factory=lambda: array("q"))
    """The characters of what the file says was in the context (an estimate's basis), as
    its batch counted them: `context_chars` adds what the batches before left (`carried`)."""
    windows: array[int] = field(default_factory=lambda: array("q"))
    """The recorded window; -1: the file records none."""
    added: array[int] = field(default_factory=lambda: array("q"))
    models: array[int] = field(default_factory=lambda: array("q"))
    """Index in `model_names`; -1: not recorded."""
    big_lines: array[int] = field(default_factory=lambda: array("q"))
    big_chars: array[int] = field(default_factory=lambda: array("q"))
    model_names: list[str] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    """Every compaction the file records, in file order."""
    carried: list[tuple[int, int, int]] = field(default_factory=list)
    """Characters earlier batches left in the context, for a run of calls: (first call,
    the call after the last, characters). A few numbers a batch, not one a call: adding
    them to every call's count would cost more than the rest of the fold."""

    def __len__(self) -> int:
        return len(self.lines)

    def narrow(self) -> None:
        """Keep each column in the narrowest array its numbers fit (`NARROW`), once the
        pass is done: what a viewer holds for the rest of its life.

        A gigabyte of small lines has a million and a half calls, whose nine 8-byte
        columns were a third of the viewer's 300 MiB budget; most of their numbers fit
        in 4 bytes (a line, a token count, a window), and a field code in one. A
        column with a number too big for its narrow type stays as it was. Reading is
        the same whatever the type; a pass never extends a narrowed column (it is
        done), so this is not done by `--check`, which keeps nothing.
        """
        for name, code in NARROW.items():
            column = getattr(self, name)
            if column.typecode == code:
                continue
            try:
                setattr(self, name, array(code, column))
            except OverflowError:
                continue

    def context_chars(self, index: int) -> int:
        """The characters of what the file says was in call `index`'s context."""
        chars = self.chars[index]
        carried = self.carried
        if carried:
            at = bisect_left(carried, (index + 1,)) - 1
            if at >= 0 and carried[at][0] <= index < carried[at][1]:
                chars += carried[at][2]
        return chars

    def model_index(self, name: str) -> int:
        """The index of a model's name (added the first time it is seen)."""
        names = self.model_names
        try:
            return names.index(name)
        except ValueError:
            names.append(name)
            return len(names) - 1

    def set_figure(self, index: int, tokens: int, source: int, window: int) -> None:
        """Record call `index`'s size (and window, if any) as the file gives it."""
        self.tokens[index] = tokens
        self.fields[index] = source
        if window >= 0:
            self.windows[index] = window

    def window_of(
        self, index: int, override: int | None = None
    ) -> tuple[int | None, WindowSource | None, str | None]:
        """Call `index`'s window, where it comes from, and its basis (see `ModelCall`)."""
        recorded = self.windows[index]
        if recorded > 0:
            basis = RECORDED_WINDOWS.get(self.fields[index], RECORDED_WINDOW)
            return recorded, WindowSource.RECORDED, basis
        if override is not None:
            return override, WindowSource.OPTION, "--window"
        model = self.models[index]
        known = known_window(self.model_names[model] if model >= 0 else None)
        if known is not None:
            return known.tokens, WindowSource.ASSUMED, known.source
        return None, None, None

    def compactions_between(self, after: int, before: int) -> tuple[Compaction, ...]:
        """The compactions on lines from `after` up to, not including, `before`."""
        found = self.compactions
        if not found:
            return ()
        start = bisect_left(found, after, key=_line_of)
        return tuple(found[start : bisect_left(found, before, start, key=_line_of)])

    def call(self, index: int, window: int | None = None) -> ModelCall:
        """Call `index` (0-based) as a reader sees it; `window` stands for a window the file
        does not record (`--window`)."""
        recorded = self.tokens[index] >= 0
        tokens = self.tokens[index] if recorded else estimate_tokens(self.context_chars(index))
        model = self.models[index]
        size, source, basis = self.window_of(index, window)
        big = self.big_lines[index]
        after = self.lines[index - 1] if index > 0 else 0
        return ModelCall(
            number=index + 1,
            line=self.lines[index],
            model=self.model_names[model] if model >= 0 else None,
            tokens=tokens,
            recorded=recorded,
            field=FIELDS[self.fields[index]] if recorded else ESTIMATE_RULE,
            window=size,
            window_source=source,
            window_basis=basis,
            items_added=self.added[index],
            biggest_line=big if big > 0 else None,
            biggest_chars=max(self.big_chars[index], 0),
            compactions=self.compactions_between(after, self.lines[index]),
        )

    def __iter__(self) -> Iterator[ModelCall]:
        return (self.call(i) for i in range(len(self)))

    def closest(self, window: int | None = None) -> ModelCall | None:
        """The call that came closest to its window (the first of equals), or None (no call
        has a window)."""
        best: tuple[float, int] | None = None
        for i in range(len(self)):
            size, _, _ = self.window_of(i, window)
            if not size:
                continue
            tokens = self.tokens[i]
            if tokens < 0:
                tokens = estimate_tokens(self.context_chars(i))
            fill = tokens / size
            if best is None or fill > best[0]:
                best = (fill, i)
        return self.call(best[1], window) if best is not None else None


# -- building them: a batch's run, and the fold -----------------------------------------------


class Head(Enum):
    """A batch's view of the call before its first line (only the fold knows it)."""

    FOLDS = "the fold's"


#: What a batch's first call may be: the fold's last call, continued (see `CallRun.head`).
FOLDS = Head.FOLDS

#: A batch's model index for "the model in force when the batch began" (Codex's
#: `turn_context` states it once for many calls): the fold puts its own in.
INHERITED = -2


#: A call's row in a batch's run (`CallRun.rows`): its fields, in this order. What the
#: file records of the call comes last (-1, 0, -1 when nothing), so a pass that learns it
#: after the row was packed writes it at the row's end (`FIGURE_FORMAT`).
LINE, MODEL, CHARS, ADDED, BIG_LINE, BIG_CHARS, TOKENS, SOURCE, WINDOW = range(9)
#: How many numbers a row is.
ROW = 9
#: A row's bytes: packed, not appended to an array number by number (an array converts
#: each number through its general parser: five times slower than `pack`).
ROW_FORMAT = struct.Struct(f"={ROW}q")
#: A row's last three fields (`TOKENS`, `SOURCE`, `WINDOW`): what a pass writes into its
#: last row when the file records the call's size after the call began (Codex's
#: `token_count`; a Claude Code response whose usage is on a later line of it).
FIGURE_FORMAT = struct.Struct("=3q")


@dataclass(slots=True)
class CallRun:
    """What one batch's lines say about model calls, made where the lines are mapped.

    A format's map writes it inline (it runs once a line, where a method call
    costs more than the work): a row of `ROW` numbers for each call whose
    response begins in the batch (`LINE`, `MODEL` … `WINDOW`: where, which
    model, the characters in the context before it, the items since the call
    before began, the biggest of them, its recorded size and field or -1 and 0,
    its recorded window or -1), then, once, what the batch leaves for
    the next: the items and characters after its last call, the state it ends
    in. Counts and characters are the batch's own: `CallFold` adds what earlier
    batches left. The reference format's pass makes the columns itself
    (`columns`).
    """

    rows: bytearray = field(default_factory=bytearray)
    """The calls' rows, `ROW_FORMAT` each."""
    model_names: list[str] = field(default_factory=list)
    """The models the rows' `MODEL` indexes name (-1: none; `INHERITED`)."""
    compactions: list[Compaction] = field(default_factory=list)
    columns: ModelCalls | None = None
    """The calls as columns, when the pass made them so (instead of `rows`)."""
    items: int = 0
    """Items since the batch's last call began (or since it began)."""
    big_line: int = -1
    big_chars: int = -1
    chars: int = 0
    """Characters in the context at the batch's end: since it began, or its last reset."""
    reset_at: int = -1
    """How many calls began before the batch's first reset (-1: none)."""
    head: object = None
    """What identifies the batch's first call as a continuation of the fold's last one
    (Claude Code: its response's id; Codex: True when nothing ended a call before it);
    None: it is a call of its own."""
    end: object = FOLDS
    """What the next batch's head is compared with (Claude Code: the last assistant
    line's response; Codex: whether a response is still open), or `FOLDS`: the batch
    changed nothing."""
    takes_figure: bool | None = None
    """Whether a figure recorded after the batch (Codex's `token_count`) may still go to
    its last call: True, False (a compaction came after it), None (the batch began no
    call and had no compaction: as the fold was)."""
    head_figure: tuple[int, int, int] | None = None
    """A figure for the fold's last call, recorded before the batch's first: (tokens,
    source, window)."""
    model: int = INHERITED
    """The model in force at the batch's end (`INHERITED`: the one it began with)."""

    def model_index(self, name: str) -> int:
        """The index of a model's name in `model_names` (added the first time)."""
        names = self.model_names
        try:
            return names.index(name)
        except ValueError:
            names.append(name)
            return len(names) - 1

    def as_columns(self) -> ModelCalls:
        """The run's calls as columns (its rows cut apart at C speed)."""
        if self.columns is not None:
            return self.columns
        rows = array("q")
        rows.frombytes(self.rows)
        return ModelCalls(
            lines=rows[LINE::ROW],
            tokens=rows[TOKENS::ROW],
            fields=rows[SOURCE::ROW],
            chars=rows[CHARS::ROW],
            windows=rows[WINDOW::ROW],
            added=rows[ADDED::ROW],
            models=rows[MODEL::ROW],
            big_lines=rows[BIG_LINE::ROW],
            big_chars=rows[BIG_CHARS::ROW],
            model_names=self.model_names,
            compactions=self.compactions,
        )


@dataclass(slots=True)
class CallFold:
    """A pass's model calls, batch by batch in file order (`absorb`)."""

    calls: ModelCalls = field(default_factory=ModelCalls)
    items: int = 0
    big_line: int = -1
    big_chars: int = -1
    chars: int = 0
    """Characters in the context at the end of the last batch (since the last reset)."""
    end: object = None
    """The last batch's `CallRun.end` (None: no call yet)."""
    takes_figure: bool = False
    """Whether the last call may still take a recorded figure (no compaction since)."""
    model: int = -1
    """The model in force (for `INHERITED`), an index of `calls.model_names`."""

    def absorb(self, run: CallRun, chars: array[int] | None = None) -> None:
        """Fold the next batch's run.

        `chars`, when given, is each of the run's calls' context characters as
        the pass computed them (the reference format's replay), instead of the
        run's own count. Columns are joined whole (a gigabyte has hundreds of
        thousands of calls): only the first call's counts take what earlier
        batches left.
        """
        calls, theirs = self.calls, run.as_columns()
        count = len(theirs)
        if run.head_figure is not None and self.takes_figure and calls and calls.tokens[-1] < 0:
            calls.set_figure(len(calls) - 1, *run.head_figure)
        start = 0
        if count and run.head is not None and self.end is not None and run.head == self.end:
            # The batch's first call is the fold's last one, continued: its items were
            # added before a call still to come, and any size it records is that call's.
            start = 1
            self._carry(theirs.added[0], theirs.big_lines[0], theirs.big_chars[0])
            if calls and calls.tokens[-1] < 0 and theirs.tokens[0] >= 0:
                calls.set_figure(
                    len(calls) - 1, theirs.tokens[0], theirs.fields[0], theirs.windows[0]
                )
        # Model indexes, theirs to ours: -1 (none) stays, `INHERITED` is the fold's.
        lookup = [*(calls.model_index(name) for name in theirs.model_names), self.model, -1]
        carry = self.chars
        if count > start:
            first = len(calls)
            for ours, mine in (
                (calls.lines, theirs.lines),
                (calls.tokens, theirs.tokens),
                (calls.fields, theirs.fields),
                (calls.windows, theirs.windows),
                (calls.added, theirs.added),
                (calls.big_lines, theirs.big_lines),
                (calls.big_chars, theirs.big_chars),
            ):
                ours.extend(mine[start:])
            models = theirs.models[start:]
            same = all(lookup[i] == i for i in range(len(theirs.model_names)))
            if not same or INHERITED in models:
                models = array("q", map(lookup.__getitem__, models))
            calls.models.extend(models)
            if chars is not None:
                calls.chars.extend(chars[start:])
            else:
                calls.chars.extend(theirs.chars[start:])
                cut = max(run.reset_at if run.reset_at >= 0 else count, start)
                if carry and cut > start:
                    calls.carried.append((first, first + cut - start, carry))
            calls.added[first] += self.items
            if self.big_line >= 0 and self.big_chars >= calls.big_chars[first]:  # the first
                calls.big_lines[first], calls.big_chars[first] = self.big_line, self.big_chars
            self.items, self.big_line, self.big_chars = 0, -1, -1
        self._carry(run.items, run.big_line, run.big_chars)
        self.chars = run.chars if run.reset_at >= 0 else carry + run.chars
        if run.model != INHERITED:
            self.model = lookup[run.model]
        if run.end is not FOLDS:
            self.end = run.end
        if run.takes_figure is not None:
            self.takes_figure = run.takes_figure
        calls.compactions.extend(theirs.compactions)

    def _carry(self, items: int, big_line: int, big_chars: int) -> None:
        """Items seen since the last call began, for the next call."""
        self.items += items
        if big_chars > self.big_chars:
            self.big_line, self.big_chars = big_line, big_chars
