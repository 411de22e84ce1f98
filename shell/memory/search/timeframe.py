"""Find the time a search query names ("last week", "in May 2023", "3 days ago") as a date range.

`time_frame(query, today)` returns the inclusive range of dates the words name, relative to
`today`, or None when they name no time. The search ranks notes dated inside the range first.

The parser is a table of compiled regexes, one rule per form, each with a small resolver; when
several rules fire, the narrowest range wins ("9 May 2023" over "2023"), then the longer words.
The rules, in brief (see `timeframe_spans` for weeks, seasons and thirds):

- today, tonight, this morning, yesterday, last night, the day before yesterday, tomorrow.
- "N days ago" is that day; "N weeks ago" the 7 days centred N weeks back; "N months ago" and
  "N years ago" the whole calendar month or year. N is a digit or one..twelve, "a", "a couple
  of" (2), "a few" or "several" (2 to 5).
- this/last/next week, weekend, month, year are calendar periods; "the past week", "the last 3
  days" end today; "earlier this month" runs from its start to today; "over the weekend" is
  the latest weekend begun.
- Weekdays need a lead word ("on", "last", "since"...) or a time of day ("Monday night"): the
  latest one before today ("this Monday" is the one of this week, "next Monday" the first
  after today); "every Monday" and "on Mondays" name no day.
- A month alone needs a lead word (in, during, since, by, until, last, this, next, early, mid,
  late): "in May" is the latest May begun by today. With a year or a day it stands alone.
- A date without a year is the occurrence nearest to today. Numeric dates only as ISO
  (2023-05-08); "05/08/2023" is ambiguous and ignored.
- A year is 1900–2100 written alone; a bare one after "port", "version" and the like or before
  a count noun ("2000 people") is a number, not a year. "the 90s" and "1990s" are decades.
- "since X" runs from the start of X to today.
- Vague words ("recently", "lately", "long ago") name no time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import NamedTuple

from shell.memory.search.timeframe_spans import (
    Span,
    add_months,
    day_span,
    month_span,
    nearest_day,
    next_weekday,
    part_of,
    recent_month,
    recent_weekday,
    recent_weekend,
    season_near,
    season_span,
    shift_months,
    week_span,
    weekend_span,
    year_span,
)


@dataclass(frozen=True)
class TimeFrame:
    """An inclusive range of dates and the words of the query that named it."""

    start: date
    end: date
    text: str


def in_frame(day: date | None, frame: TimeFrame, *, grace_days: int = 0) -> bool:
    """Whether `day` (a note's date; None for an undated note) lies inside `frame`.

    `grace_days` stretches the end: a note often reports an event a few days after it.
    """
    return day is not None and frame.start <= day <= frame.end + timedelta(days=grace_days)


MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1,
    "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
}  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DAY_WORDS = {
    "the day before yesterday": -2, "the day after tomorrow": 2, "yesterday": -1,
    "last night": -1, "tomorrow": 1, "today": 0, "tonight": 0, "this morning": 0,
    "this afternoon": 0, "this evening": 0, "earlier today": 0,
}  # fmt: skip
AMOUNTS = {
    "a": (1, 1), "an": (1, 1), "one": (1, 1), "two": (2, 2), "three": (3, 3), "four": (4, 4),
    "five": (5, 5), "six": (6, 6), "seven": (7, 7), "eight": (8, 8), "nine": (9, 9),
    "ten": (10, 10), "eleven": (11, 11), "twelve": (12, 12), "a couple": (2, 2),
    "a couple of": (2, 2), "couple of": (2, 2), "a few": (2, 5), "few": (2, 5),
    "several": (2, 5),
}  # fmt: skip
PARTS = {"early": "early", "mid": "mid", "late": "late", "the beginning of": "early",
         "the start of": "early", "the middle of": "mid", "the end of": "late"}  # fmt: skip
PERIOD_ANCHORS = {"in", "during", "since", "by", "until", "till", "throughout", "around", "over"}
"""Lead words that make a bare month or season a time ("in May"; not "may I ask")."""
SEASON_ANCHORS = PERIOD_ANCHORS | {"for"}
NOT_YEAR_BEFORE = {
    "port", "version", "v", "pid", "issue", "pr", "line", "lines", "page", "room", "error",
    "code", "step", "no", "number", "id", "ticket", "build", "item", "row", "top", "than",
    "x",
}  # fmt: skip
NOT_YEAR_AFTER = {
    "people", "persons", "users", "times", "items", "words", "lines", "rows", "steps", "ms",
    "seconds", "minutes", "hours", "days", "calories", "dollars", "euros", "pounds", "kg", "km",
    "miles", "meters", "metres", "feet", "mb", "gb", "kb", "tokens", "files", "points",
    "bytes", "pixels", "px", "pages", "members", "followers", "votes", "employees",
}  # fmt: skip
VERB_MONTHS = {"may", "march"}


LEAD_WORDS = ("in", "on", "during", "since", "by", "until", "till", "throughout", "around",
              "over", "for", "within", "from")  # fmt: skip


def _alternatives(words: Iterable[str]) -> str:
    """A regex alternation of phrases, longest first, with any whitespace between words."""
    phrases = sorted(words, key=len, reverse=True)
    return "|".join(r"\s+".join(map(re.escape, p.split())) for p in phrases)


def _norm(words: str | None) -> str:
    """Lower-case with single spaces ("A  Few" -> "a few"); None -> ""."""
    return " ".join((words or "").lower().split())


class Lead(NamedTuple):
    """The words just before a rule's match that qualify it: "since last", "in early", "the"."""

    kw: str  # a preposition from LEAD_WORDS, or ""
    which: str  # "last", "past", "this past", "this", "next", or ""
    part: str  # "early", "mid", "late" (PARTS normalised), or ""
    the: bool
    start: int  # where these words begin in the query


_LEAD = re.compile(
    rf"\b(?:(?P<kw>{_alternatives(LEAD_WORDS)})\s+)?"
    r"(?:\b(?P<which>last|this\s+past|past|this|next)\s+)?"
    rf"(?:\b(?P<part>{_alternatives(PARTS)})[\s-]+)?(?P<the>\bthe\s+)?\Z"
)
"""Lower-case lead words ending where a rule's match begins; starting each try at a word keeps
the search cheap."""
_LEAD_REACH = 60  # characters looked back for lead words; the longest lead is ~45


def _lead(m: re.Match[str]) -> Lead:
    """The lead words right before `m`, read from at most _LEAD_REACH characters back."""
    offset = max(0, m.start() - _LEAD_REACH)
    found = _LEAD.search(m.string[offset : m.start()].lower())
    if found is None:  # no word ends right before the match ("(May 2023)", "2023-05")
        return Lead("", "", "", False, m.start())
    part = PARTS.get(_norm(found["part"]), "")
    return Lead(
        _norm(found["kw"]), _norm(found["which"]), part, bool(found["the"]), offset + found.start()
    )


_MONTH = rf"\b(?P<month>{_alternatives(MONTHS)})\b\.?"
_YEAR_DIGITS = r"(?P<year>19\d\d|20\d\d|2100)(?![\w%]|[.,:/-]\d)"
_YEAR = rf"(?<![\w.,:/$#€£])(?<!\d-){_YEAR_DIGITS}"
_OPT_YEAR = rf"(?:(?:,\s*|\s+){_YEAR_DIGITS})?"  # after a day: "8 May, 2023", "December 1,2023"
_DAY = r"(?P<day>\d{1,2})(?P<ord>st|nd|rd|th)?\b(?![:.]\d)"
_NUM = rf"(?P<n>\d{{1,3}}|{_alternatives(AMOUNTS)})"

_WORD_BEFORE = re.compile(r"(\w+)\W*\Z")
_WORD_AFTER = re.compile(r"\W*(\w+)")

Resolver = Callable[[re.Match[str], Lead, date], Span | None]


def _with_part(lead: Lead, span: Span) -> Span:
    return part_of(span, lead.part) if lead.part else span


def _amount(words: str) -> tuple[int, int]:
    return (int(words), int(words)) if words.isdigit() else AMOUNTS[_norm(words)]


def _iso(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    try:
        return day_span(date(int(m["y"]), int(m["m"]), int(m["d"])))
    except ValueError:
        return None


def _dated(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    """9 December, the 9th of December, December 9, 8 May, 2023, Dec. 9th 2026."""
    month, day = MONTHS[m["month"].lower()], int(m["day"])
    anchored = lead.kw == "on" or lead.the or bool(m["ord"] or m["of"])
    if m["year"] is None and m["month"] in VERB_MONTHS and not anchored:
        return None  # "5 may help", "may 3 people": a lower-case verb, not a date
    if m["year"] is None:
        found = nearest_day(month, day, today)
        return day_span(found) if found else None
    try:
        return day_span(date(int(m["year"]), month, day))
    except ValueError:
        return None


def _month(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    """May 2023, in May, last May, early May, the end of May."""
    month = MONTHS[m["month"].lower()]
    if m["year"]:
        return _with_part(lead, month_span(int(m["year"]), month))
    if not (lead.which or lead.part or lead.kw in PERIOD_ANCHORS):
        return None  # "may I ask", "they march", "June said"
    if lead.which == "this" and m["month"] in VERB_MONTHS:
        return None  # "this may help"
    if lead.which in ("last", "past", "this past"):
        span = month_span(today.year if month < today.month else today.year - 1, month)
    elif lead.which == "this":
        span = month_span(today.year, month)
    elif lead.which == "next":
        span = month_span(today.year if month > today.month else today.year + 1, month)
    else:
        span = recent_month(month, today)
    return _with_part(lead, span)


def _year(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    if not (lead.kw or lead.part):
        before = _WORD_BEFORE.search(m.string, 0, m.start())
        after = _WORD_AFTER.match(m.string, m.end())
        if before and before[1].lower() in NOT_YEAR_BEFORE:
            return None  # port 2049, version 2024
        if after and after[1].lower() in NOT_YEAR_AFTER:
            return None  # 2000 people
    return _with_part(lead, year_span(int(m["year"])))


def _decade(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    """1990s, the 90s, '90s (two digits: the latest such decade begun by today)."""
    if m["century"]:
        first = int(m["century"] + m["decade"] + "0")
    elif m["apostrophe"] or lead.the:
        first = 1900 + int(m["decade"]) * 10
        first += 100 if first + 100 <= today.year else 0
    else:
        return None  # "in my 20s" is an age
    return date(first, 1, 1), date(first + 9, 12, 31)


def _season(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    """The summer of 2023, in spring, last winter, late summer 2023."""
    season = m["season"].lower()
    if m["year"]:
        return _with_part(lead, season_span(season, int(m["year"])))
    if not (lead.which or lead.part or lead.kw in SEASON_ANCHORS):
        return None  # "the fall of Rome", "Summer Sounds"
    mode = {"last": "last", "past": "last", "this past": "last", "this": "this", "next": "next"}
    return _with_part(lead, season_near(season, today, mode.get(lead.which, "recent")))


def _weekday(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    weekday = WEEKDAYS.index(m["weekday"].lower())
    if not (lead.which or lead.kw or m["tod"]):
        return None
    if lead.which == "this":
        return day_span(week_span(today)[0] + timedelta(days=weekday))
    if lead.which == "next":
        return day_span(next_weekday(weekday, today))
    return day_span(recent_weekday(weekday, today))


def _day_word(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    return day_span(today + timedelta(days=DAY_WORDS[_norm(m["words"])]))


def _ago(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    lo, hi = _amount(m["n"])
    unit = m["unit"].lower()
    if unit in ("minute", "hour"):
        return day_span(today)
    if unit == "day":
        return today - timedelta(days=hi), today - timedelta(days=lo)
    if unit == "week":
        return today - timedelta(days=7 * hi + 3), today - timedelta(days=7 * lo - 3)
    if unit == "month":
        first = month_span(*add_months(today.year, today.month, -hi))[0]
        return first, month_span(*add_months(today.year, today.month, -lo))[1]
    return year_span(today.year - hi)[0], year_span(today.year - lo)[1]


def _rolling(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    """The past week, the last 3 days, over the past few months: a window ending today."""
    if m["which"].lower() == "last" and not (lead.the or m["n"]):
        return None  # plain "last week" is the calendar week, see _calendar
    count = _amount(m["n"])[1] if m["n"] else 1
    unit = m["unit"].lower()
    if unit == "day":
        return today - timedelta(days=count), today
    if unit == "week":
        return today - timedelta(weeks=count), today
    return shift_months(today, -count * (12 if unit == "year" else 1)), today


def _calendar(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    if lead.the and m["which"].lower() == "last":
        return None  # "the last week" is a window ending today, see _rolling
    offset = {"this": 0, "last": -1, "previous": -1, "next": 1}[m["which"].lower()]
    unit = m["unit"].lower()
    if unit == "week":
        return week_span(today, offset)
    if unit == "weekend":
        return weekend_span(today, offset)
    if unit == "month":
        return month_span(*add_months(today.year, today.month, offset))
    return year_span(today.year + offset)


def _earlier_this(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    unit = m["unit"].lower()
    if unit == "week":
        return week_span(today)[0], today
    return date(today.year, today.month if unit == "month" else 1, 1), today


def _the_weekend(m: re.Match[str], lead: Lead, today: date) -> Span | None:
    return recent_weekend(today)


RULES: tuple[tuple[re.Pattern[str], Resolver], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), resolver)
    for pattern, resolver in (
        (r"(?<![\w.])(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b(?!-)", _iso),
        (rf"(?<![\w.,:/]){_DAY}(?:\s+(?P<of>of))?\s+{_MONTH}{_OPT_YEAR}", _dated),
        (rf"{_MONTH}\s+(?P<of>the\s+)?{_DAY}{_OPT_YEAR}", _dated),
        (rf"{_MONTH}(?:,?\s+(?:of\s+)?{_YEAR})?", _month),
        (_YEAR, _year),
        (r"(?<![\w'])(?P<apostrophe>')?(?P<century>19|20)?(?P<decade>\d)0'?s\b", _decade),
        (
            rf"\b(?P<season>spring|summer|autumn|fall|winter)\b(?:(?:\s+of)?,?\s+{_YEAR})?",
            _season,
        ),
        (
            rf"\b(?P<weekday>{'|'.join(WEEKDAYS)})\b"
            r"(?:\s+(?P<tod>morning|afternoon|evening|night))?",
            _weekday,
        ),
        (rf"\b(?P<words>{_alternatives(DAY_WORDS)})\b", _day_word),
        (rf"\b{_NUM}\s+(?P<unit>minute|hour|day|week|month|year)s?\s+ago\b", _ago),
        (rf"\b(?P<which>past|last)\s+(?:{_NUM}\s+)?(?P<unit>day|week|month|year)s?\b", _rolling),
        (r"\b(?P<which>this|last|previous|next)\s+(?P<unit>week|weekend|month|year)\b", _calendar),
        (r"\bearlier\s+this\s+(?P<unit>week|month|year)\b", _earlier_this),
        (r"\bthe\s+weekend\b", _the_weekend),
    )
)
_TRIGGER = re.compile(
    r"\d|day\b|days\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|spring|summer|autumn"
    r"|fall|winter|tomorrow|tonight|night|morning|afternoon|evening|week|month|year|ago)",
    re.IGNORECASE,
)
"""Every rule needs one of these; a query without any (most queries) is answered at once."""


def time_frame(query: str, today: date) -> TimeFrame | None:
    """The time `query` names relative to `today`, or None when it names none.

    Among several named times the narrowest range wins, then the one named in more words,
    then the first. "since X" stretches X to end today.
    """
    if not _TRIGGER.search(query):
        return None
    best: tuple[int, int, int, TimeFrame] | None = None
    for pattern, resolver in RULES:
        for m in pattern.finditer(query):
            lead = _lead(m)
            span = resolver(m, lead, today)
            if span is None:
                continue
            start, end = span
            if lead.kw == "since" and start <= today:
                end = max(end, today)
            text = query[lead.start : m.end()].strip().rstrip(".,")
            key = ((end - start).days, -len(text), lead.start)
            if best is None or key < best[:3]:
                best = (*key, TimeFrame(start, end, text))
    return best[3] if best else None
