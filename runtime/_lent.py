"""LentList: a long list handed out to be read and appended to, and taken back afterwards instead of copied.

Copying a list writes to the reference count of every object in it, and freeing the copy does so again: in a
long session's history that is a cache miss per event, twice, for every invocation (the session's events)
and every model call (the request's contents), which made an invocation cost more the longer its session.
A lender keeps one LentList, hands that very object out, and uses it again once ``only_holder`` says the
borrower let go of it. Appending is what a borrower may do (a writer committing events, a model adding a
turn); anything else marks the list ``changed``, and the lender then no longer trusts what is in it.
"""

from __future__ import annotations

import sys


def _marking(method):
    def changing(self, *args, **kwargs):
        self.changed = True
        return method(self, *args, **kwargs)

    changing.__name__ = method.__name__
    return changing


class LentList(list):
    """A list that notes whether anything but appending happened to it."""

    changed = False

    __setitem__ = _marking(list.__setitem__)
    __delitem__ = _marking(list.__delitem__)
    __imul__ = _marking(list.__imul__)
    insert = _marking(list.insert)
    pop = _marking(list.pop)
    remove = _marking(list.remove)
    clear = _marking(list.clear)
    sort = _marking(list.sort)
    reverse = _marking(list.reverse)

    def truncate(self, length: int) -> None:
        """Drop what a borrower appended past ``length`` (the lender's own repair: not a change)."""
        list.__delitem__(self, slice(length, None))


def only_holder(owner: object, name: str) -> bool:
    """True when ``owner``'s attribute ``name`` is the only reference to its object: nobody else can see the
    object change any more. (CPython counts the attribute's reference and the one passed to getrefcount.)"""
    return sys.getrefcount(getattr(owner, name)) <= 2
