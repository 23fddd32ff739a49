"""Post the PR skip check's markdown as one comment of the pull request, updated on every run.

Used by action.yml when a token is given (GH_TOKEN, with `pull-requests: write`). The comment
carries a hidden marker: the next run edits it instead of adding another. A comment that cannot be
posted (a fork's read-only token) is a warning, not a failure of the check.

    python utils/post_pr_comment.py --repo OWNER/NAME --pr NUMBER --body new_skips.md
"""

import sys
from pathlib import Path

from model_debugging.command_line import EXIT_OK, ArgumentParser, fail, positive_int
from model_debugging.console import run_entry_point
from model_debugging.skips.report.pr_check.comment import CommentError, post_comment

PROG = "utils/post_pr_comment.py"


def main(argv=None) -> int:
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="OWNER/NAME of the repository of the pull request")
    parser.add_argument("--pr", required=True, type=positive_int, help="the pull request's number")
    parser.add_argument("--body", required=True, help="the markdown check-skips wrote (--markdown)")
    args = parser.parse_args(argv)
    try:
        markdown = Path(args.body).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return fail(PROG, f"cannot read --body {args.body}: {getattr(error, 'strerror', None) or error}")
    try:
        print(f"{post_comment(args.repo, args.pr, markdown)} on {args.repo}#{args.pr}")
    except CommentError as error:
        print(f"::warning::the skip check's comment was not posted: {error}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_entry_point(PROG, main))
