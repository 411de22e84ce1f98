"""Calendar arithmetic for `timeframe`: the date range of a month, week, season or part of one.

Every function is pure and takes `today` (or a year) as a value, so the rules that turn words
into ranges are tested without a clock. A span is an inclusive `(start, end)` pair of dates.
Weeks start on Monday (ISO 8601); seasons are the meteorological ones of the northern
hemisphere (spring March–May, summer June–August, autumn September–November, winter
December–February, the winter of a year being the one that begins in its December).
"""

from __future__ import annotations

import calendar
from datetime import date, timedelta

Span = tuple[date, date]

SEASON_START_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def day_span(day: date) -> Span:
    """The one-day span of `day`."""
    return day, day


def month_span(year: int, month: int) -> Span:
    """The whole calendar month."""
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def year_span(year: int) -> Span:
    """The whole calendar year."""
    return date(year, 1, 1), date(year, 12, 31)


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    """The (year, month) that lies `delta` months from (year, month); delta may be negative."""
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def shift_months(day: date, delta: int) -> date:
    """The same day `delta` months away, clamped to the month's end (31 March - 1 = 28 Feb)."""
    year, month = add_months(day.year, day.month, delta)
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def week_span(today: date, weeks: int = 0) -> Span:
    """Monday to Sunday of the week `weeks` away from the week of `today` (-1 = last week)."""
    monday = today - timedelta(days=today.weekday()) + timedelta(weeks=weeks)
    return monday, monday + timedelta(days=6)


def weekend_span(today: date, weeks: int = 0) -> Span:
    """Saturday and Sunday of the week `weeks` away from the week of `today`."""
    _, sunday = week_span(today, weeks)
    return sunday - timedelta(days=1), sunday


def recent_weekend(today: date) -> Span:
    """The latest weekend that has begun by `today` ("over the weekend")."""
    return weekend_span(today, 0 if today.weekday() >= 5 else -1)


def season_span(season: str, year: int) -> Span:
    """The season that begins in `year` (winter: December of `year` to February after)."""
    first = SEASON_START_MONTH[season]
    last_year, last_month = add_months(year, first, 2)
    return date(year, first, 1), month_span(last_year, last_month)[1]


def season_near(season: str, today: date, which: str) -> Span:
    """Resolve a season named without a year.

    `which` is "this" (the one holding today, else the one beginning this year), "last" (the
    latest one already over), "next" (the first one not yet begun) or "recent" (the latest one
    already begun; what "in the summer" means).
    """
    candidates = [season_span(season, year) for year in range(today.year - 2, today.year + 2)]
    if which == "last":
        return [s for s in candidates if s[1] < today][-1]
    if which == "next":
        return next(s for s in candidates if s[0] > today)
    if which == "this":
        holding = [s for s in candidates if s[0] <= today <= s[1]]
        return holding[0] if holding else season_span(season, today.year)
    return [s for s in candidates if s[0] <= today][-1]


def recent_month(month: int, today: date) -> Span:
    """The latest such month that has begun by `today` ("in May" in December is this May)."""
    year = today.year if month <= today.month else today.year - 1
    return month_span(year, month)


def nearest_day(month: int, day: int, today: date) -> date | None:
    """The occurrence of day/month nearest to `today`, the earlier one on a tie.

    None when no year nearby has that day (31 April); 29 February finds a leap year.
    """
    best: date | None = None
    for year in range(today.year - 4, today.year + 5):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if best is None or abs((candidate - today).days) < abs((best - today).days):
            best = candidate
    return best


def recent_weekday(weekday: int, today: date) -> date:
    """The latest such weekday (0 = Monday) strictly before `today`."""
    back = (today.weekday() - weekday - 1) % 7 + 1
    return today - timedelta(days=back)


def next_weekday(weekday: int, today: date) -> date:
    """The first such weekday (0 = Monday) strictly after `today`."""
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def part_of(span: Span, part: str) -> Span:
    """The "early", "mid" or "late" third of a span.

    A span of whole months splits into thirds by month when it can ("early 2023" is
    January–April, "late summer 2023" is August 2023); anything else by days ("early May" is
    1–10 May, "mid May" 11–20, "late May" 21–31).
    """
    start, end = span
    index = {"early": 0, "mid": 1, "late": 2}[part]
    months = (end.year - start.year) * 12 + end.month - start.month + 1
    whole_months = start.day == 1 and (end + timedelta(days=1)).day == 1
    if whole_months and months % 3 == 0:
        first = add_months(start.year, start.month, index * months // 3)
        last = add_months(*first, months // 3 - 1)
        return date(*first, 1), month_span(*last)[1]
    third = ((end - start).days + 1) // 3
    lo = start + timedelta(days=index * third)
    hi = end if index == 2 else lo + timedelta(days=third - 1)
    return lo, hi
