"""transcript-view's headless core: a Python port of `LLM::Agent::Artifacts` and friends.

Everything a script needs is importable from here; nothing here imports a UI
library, so `--check` and any batch job stay fast and dependency-light.

    from transcript_view.core import Session, verify, excerpt, parse_markers
"""

from transcript_view.core.analyser import Analyser
from transcript_view.core.analysis import Analysis, analyse
from transcript_view.core.artifacts import (
    COULD_NOT_BE_STORED,
    NOWHERE_TO_PUT_IT,
    ArtifactConflict,
    Store,
    Stored,
    artifact_dir_for,
    content_digest,
    elided_chars,
    excerpt,
    stored_marker,
    unstored_marker,
)
from transcript_view.core.canonical import canonical_json, data_digest
from transcript_view.core.findings import KINDS, Finding, Severity
from transcript_view.core.ledger import VerificationLedger
from transcript_view.core.markers import Marker, MarkerKind, parse_markers
from transcript_view.core.records import MarkerSite, OpState, SiteKey, ToolOperation
from transcript_view.core.report import Badge, Report, verify, verify_transcript
from transcript_view.core.session import Session, observe_result
from transcript_view.core.transcript import LineProblem, Transcript, TranscriptError
from transcript_view.core.verification import MarkerState

__all__ = [
    "COULD_NOT_BE_STORED",
    "KINDS",
    "NOWHERE_TO_PUT_IT",
    "Analyser",
    "Analysis",
    "ArtifactConflict",
    "Badge",
    "Finding",
    "LineProblem",
    "Marker",
    "MarkerKind",
    "MarkerSite",
    "MarkerState",
    "OpState",
    "Report",
    "Session",
    "Severity",
    "SiteKey",
    "Store",
    "Stored",
    "ToolOperation",
    "Transcript",
    "TranscriptError",
    "VerificationLedger",
    "analyse",
    "artifact_dir_for",
    "canonical_json",
    "content_digest",
    "data_digest",
    "elided_chars",
    "excerpt",
    "observe_result",
    "parse_markers",
    "stored_marker",
    "unstored_marker",
    "verify",
    "verify_transcript",
]
