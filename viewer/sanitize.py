"""Make hostile transcript text safe to put on a terminal, as Rich `Text`.

Everything the viewer shows comes from files an agent's tools wrote: shell
output, web pages, other programs' logs. Such text can carry terminal escape
sequences (an OSC 52 clipboard write, a title change, a hyperlink), bare
carriage returns and backspaces that overwrite what was already drawn, bidi
overrides that reorder a line so it reads differently from its bytes, and
zero-width characters that hide inside names. Rich and Textual also read
`[bold]`-style markup out of plain strings if given the chance.

`visible` (from `core.text`, where it lives because it needs no UI; its
docstring lists what each character becomes) turns every such character into
a glyph a person can see. This module adds what does need Rich: `text` wraps
the result in a `rich.text.Text` without ever parsing markup.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from transcript_view.core.text import visible

__all__ = ["text"]


def text(
    s: str,
    style: str | Style = "",
    *,
    no_wrap: bool | None = None,
    overflow: str | None = None,
    end: str = "",
) -> Text:
    """A `rich.text.Text` of `visible(s)`, built without parsing markup.

    Use this for anything that came from a file (names, contents, messages
    quoting them) before handing it to a widget: `Static("[b]...")`,
    `DataTable.add_row("...")` and friends parse plain strings as markup, so
    a file called `[link=http://x]` would otherwise become a link.

    Args:
        s: Untrusted text.
        style: A Rich style applied to the whole text.
        no_wrap: Passed to `Text` (None means the console default).
        overflow: Passed to `Text` ("fold", "crop", "ellipsis", "ignore").
        end: Passed to `Text`; empty so a cell or line gets no trailing LF.

    Returns:
        A Text whose plain content is exactly `visible(s)`.
    """
    return Text(visible(s), style=style, no_wrap=no_wrap, overflow=overflow, end=end)  # type: ignore[arg-type]
