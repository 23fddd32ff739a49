"""Post the check's markdown as one comment of the pull request, the same comment on every run.

The comment starts with a hidden marker line; a run looks for the pull request's comment holding
it (``gh api`` with the job's token, which needs ``pull-requests: write``) and edits it, or creates
it the first time. No third-party action is involved. A report longer than GitHub takes in one
comment is cut at a line, with a note saying where the whole of it is.
"""

from __future__ import annotations

import json
import subprocess
import tempfile

# the hidden line GitHub keeps in the comment: how a run finds the comment of an earlier one
COMMENT_MARKER = "<!-- model-debugging check-skips -->"
# GitHub refuses a comment body longer than this many characters (HTTP 422)
COMMENT_LIMIT = 65536
_CUT_NOTE = (
    "\n\n… The report was cut here to fit in one comment ({limit:,} characters at most): the whole "
    "of it is in the summary of the check's job."
)


class CommentError(RuntimeError):
    """``gh`` could not list, create or edit the comment (missing CLI, token or permission)."""


def _gh(gh: str, *args: str) -> str:
    try:
        result = subprocess.run([gh, *args], capture_output=True, text=True)
    except FileNotFoundError:
        raise CommentError(f"the GitHub CLI {gh!r} is not installed") from None
    if result.returncode != 0:
        raise CommentError(f"gh {' '.join(args[:3])} failed: {result.stderr.strip()}")
    return result.stdout


def post_comment(repo: str, pull_request: int, markdown: str, *, gh: str = "gh") -> str:
    """Create or update the check's comment on ``pull_request`` of ``repo`` (OWNER/NAME).

    Returns:
        `str`: "created" or "updated comment <id>".
    """
    selector = f".[] | select(.body | contains({json.dumps(COMMENT_MARKER)})) | .id"
    found = _gh(gh, "api", "--paginate", f"repos/{repo}/issues/{pull_request}/comments", "--jq", selector)
    ids = found.split()
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as payload:
        json.dump({"body": comment_body(markdown)}, payload)
        payload.flush()
        if ids:
            _gh(
                gh,
                "api",
                "--method",
                "PATCH",
                f"repos/{repo}/issues/comments/{ids[0]}",
                "--input",
                payload.name,
            )
            return f"updated comment {ids[0]}"
        _gh(
            gh,
            "api",
            "--method",
            "POST",
            f"repos/{repo}/issues/{pull_request}/comments",
            "--input",
            payload.name,
        )
    return "created"


def comment_body(markdown: str) -> str:
    """The comment: the marker line, then ``markdown``, cut after its last whole line that fits
    within :data:`COMMENT_LIMIT` with the note when it is longer."""
    body = f"{COMMENT_MARKER}\n{markdown}"
    if len(body) <= COMMENT_LIMIT:
        return body
    note = _CUT_NOTE.format(limit=COMMENT_LIMIT)
    kept = body[: COMMENT_LIMIT - len(note)]
    return kept[: kept.rfind("\n")] + note
