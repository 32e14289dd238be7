"""The transcript formats transcript-view reads, and how a file says which it is.

Three agents write the transcripts people ask our question about: the
reference (`LLM::Agent`), Claude Code and Codex. Each has a reader module in
this package that turns its lines into the same things — what the model saw,
the markers where something was cut or spilled, the sidecar each marker names
and the checks the format allows — so the ledger, `--check` and the viewer
treat them alike. A fourth format is one more module and one more entry in
`detect.SIGNATURES`.
"""

from transcript_view.core.formats.detect import Detection, Format, NotATranscript, detect

__all__ = ["Detection", "Format", "NotATranscript", "detect"]
