"""Control characters out of anything an agent says, so that what it says cannot act on a terminal or a page.

An agent is untrusted: its exception messages, its prints and the repr of an
invalid action reach the user's terminal, reports and HTML pages.  Raw, an ESC
paints a fake green PASS, sets the window title (OSC 0/2) or writes the
clipboard (OSC 52); a ``\\r`` overwrites a line; a bidi override (U+202E) shows
text in another order than it is.  ``escape`` writes each such character as a
visible escape instead (ESC as the four characters ``\\x1b``, U+202E as
``\\u202e``, a carriage return as ``\\r``), so the text still says what the
agent sent and does nothing.

Escaped are: every C0 control but ``\\n`` and ``\\t`` where lines are kept, DEL,
every C1 control (U+0080-U+009F), the bidi and format characters that can
disguise text (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069, U+FEFF), the
line and paragraph separators U+2028/U+2029 (``str.splitlines`` breaks there)
and lone surrogates (which cannot be printed as UTF-8 at all).  Printable text,
non-ASCII letters included, is unchanged, and escaping twice changes nothing.
"""

from __future__ import annotations

import re

_DISGUISES = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff"
_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_DISGUISES}]")  # keeps \n and \t
_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_DISGUISES}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}  # as Python writes them


def visible(char: str) -> str:
    """The escape that shows ``char``: ``\\r``, ``\\n``, ``\\t``; else ``\\x1b`` below U+0100, ``\\u202e`` above."""
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escape(text: str, keep_newlines: bool = True) -> str:
    """``text`` with every control, bidi and format character written as a visible escape (see the module);
    ``keep_newlines``: ``\\n`` and ``\\t`` stay as they are (a log), else they are escaped too (one line)."""
    return (_LINES if keep_newlines else _ONE_LINE).sub(lambda m: visible(m.group()), text)
