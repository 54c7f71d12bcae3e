import re
import sys

PATTERNS = [
    "ignore previous instructions",
    "do not tell the user",
    "you are now in developer mode",
]


def flagged(text: str) -> list[str]:
    return [p for p in PATTERNS if re.search(re.escape(p), text, re.I)]


print(flagged(sys.stdin.read()))
