"""Times as memwarden writes them: ISO 8601 in UTC, to the second, with a `Z`."""

from __future__ import annotations

import datetime as _dt

_EPOCH = _dt.datetime(1970, 1, 1)
FIRST = "0001-01-01T00:00:00Z"
LAST = "9999-12-31T23:59:59Z"


def iso_utc(ts: int | float) -> str:
    """A UNIX time as `YYYY-MM-DDTHH:MM:SSZ`, always four digits of year (strftime writes
    the year 1 as "1" on glibc). A commit's time is whatever its author wrote, so a time
    before the year 1 or after 9999 reads as the first or last second of that calendar
    instead of failing the read that shows it."""
    try:
        when = _EPOCH + _dt.timedelta(seconds=int(ts))
    except OverflowError:
        return FIRST if ts < 0 else LAST
    return when.isoformat(timespec="seconds") + "Z"
