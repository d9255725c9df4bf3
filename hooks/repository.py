"""What the hooks read from git: the repository's web address and each file's last commit date."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["git", "last_commit_dates", "repository_from_remote"]

ROOT = Path(__file__).resolve().parents[1]


def git(*args: str) -> str:
    try:
        result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stdout if result.returncode == 0 else ""


def repository_from_remote(remote: str) -> str | None:
    """``https://host/owner/name`` for a GitHub or GitLab remote (https or ssh form), else None.

    >>> repository_from_remote("git@github.com:someone/posenc.git")
    'https://github.com/someone/posenc'
    >>> repository_from_remote("/srv/git/posenc") is None
    True
    """
    match = re.match(r"^(?:https://|git@|ssh://git@)(github\.com|gitlab\.com)[:/]([\w.-]+/[\w.-]+?)(?:\.git)?/?$", remote.strip())
    return f"https://{match[1]}/{match[2]}" if match else None


def last_commit_dates(*folders: str) -> dict[str, str]:
    """``{path: YYYY-MM-DD}`` of the newest commit touching each file under ``folders`` (one git call)."""
    dates: dict[str, str] = {}
    current = ""
    for line in git("log", "--format=%x00%cs", "--name-only", "--", *folders).splitlines():
        if line.startswith("\0"):
            current = line[1:]
        elif line and current:
            dates.setdefault(line, current)
    return dates
