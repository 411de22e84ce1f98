from __future__ import annotations

from datetime import date

import pytest

from shell.memory.search.timeframe import TimeFrame, in_frame, time_frame
from shell.memory.search.timeframe_spans import (
    nearest_day,
    part_of,
    recent_weekday,
    season_near,
    shift_months,
    year_span,
)

TUESDAY = date(2026, 12, 1)
"""The fixed clock of most cases: Tuesday 1 December 2026."""
LOCOMO = date(2023, 10, 20)
"""A Friday, like the last session of a LoCoMo conversation."""

D = date

TUESDAY_CASES = [
    # the day itself and its neighbours
    ("what did I do today", D(2026, 12, 1), D(2026, 12, 1)),
    ("this morning's standup", D(2026, 12, 1), D(2026, 12, 1)),
    ("plans for tonight", D(2026, 12, 1), D(2026, 12, 1)),
    ("what happened yesterday", D(2026, 11, 30), D(2026, 11, 30)),
    ("what did we eat last night", D(2026, 11, 30), D(2026, 11, 30)),
    ("the day before yesterday", D(2026, 11, 29), D(2026, 11, 29)),
    ("tomorrow's meeting", D(2026, 12, 2), D(2026, 12, 2)),
    ("the day after tomorrow", D(2026, 12, 3), D(2026, 12, 3)),
    ("the deploy an hour ago", D(2026, 12, 1), D(2026, 12, 1)),
    # N units ago
    ("what broke 3 days ago", D(2026, 11, 28), D(2026, 11, 28)),
    ("three days ago", D(2026, 11, 28), D(2026, 11, 28)),
    ("a couple of days ago", D(2026, 11, 29), D(2026, 11, 29)),
    ("a few days ago", D(2026, 11, 26), D(2026, 11, 29)),
    ("a week ago", D(2026, 11, 21), D(2026, 11, 27)),
    ("two weeks ago", D(2026, 11, 14), D(2026, 11, 20)),
    ("twelve weeks ago", D(2026, 9, 5), D(2026, 9, 11)),
    ("2 months ago", D(2026, 10, 1), D(2026, 10, 31)),
    ("a year ago", D(2025, 1, 1), D(2025, 12, 31)),
    ("she moved 4 years ago", D(2022, 1, 1), D(2022, 12, 31)),
    # calendar periods
    ("this week", D(2026, 11, 30), D(2026, 12, 6)),
    ("last week", D(2026, 11, 23), D(2026, 11, 29)),
    ("next week", D(2026, 12, 7), D(2026, 12, 13)),
    ("earlier this week", D(2026, 11, 30), D(2026, 12, 1)),
    ("this month", D(2026, 12, 1), D(2026, 12, 31)),
    ("last month", D(2026, 11, 1), D(2026, 11, 30)),
    ("this year", D(2026, 1, 1), D(2026, 12, 31)),
    ("last year", D(2025, 1, 1), D(2025, 12, 31)),
    ("next year", D(2027, 1, 1), D(2027, 12, 31)),
    ("earlier this year", D(2026, 1, 1), D(2026, 12, 1)),
    ("last weekend", D(2026, 11, 28), D(2026, 11, 29)),
    ("this weekend", D(2026, 12, 5), D(2026, 12, 6)),
    ("what did we do over the weekend", D(2026, 11, 28), D(2026, 11, 29)),
    # windows ending today
    ("the past week", D(2026, 11, 24), D(2026, 12, 1)),
    ("in the last week", D(2026, 11, 24), D(2026, 12, 1)),
    ("in the last 3 days", D(2026, 11, 28), D(2026, 12, 1)),
    ("the last few days", D(2026, 11, 26), D(2026, 12, 1)),
    ("over the past two months", D(2026, 10, 1), D(2026, 12, 1)),
    # weekdays
    ("last Monday", D(2026, 11, 30), D(2026, 11, 30)),
    ("on Monday", D(2026, 11, 30), D(2026, 11, 30)),
    ("on Tuesday", D(2026, 11, 24), D(2026, 11, 24)),
    ("this Tuesday", D(2026, 12, 1), D(2026, 12, 1)),
    ("next Friday", D(2026, 12, 4), D(2026, 12, 4)),
    ("Sunday night", D(2026, 11, 29), D(2026, 11, 29)),
    # months and years
    ("in May 2023", D(2023, 5, 1), D(2023, 5, 31)),
    ("May 2023", D(2023, 5, 1), D(2023, 5, 31)),
    ("May of 2023", D(2023, 5, 1), D(2023, 5, 31)),
    ("in May", D(2026, 5, 1), D(2026, 5, 31)),
    ("in December", D(2026, 12, 1), D(2026, 12, 31)),
    ("last December", D(2025, 12, 1), D(2025, 12, 31)),
    ("next March", D(2027, 3, 1), D(2027, 3, 31)),
    ("during June", D(2026, 6, 1), D(2026, 6, 30)),
    ("early May", D(2026, 5, 1), D(2026, 5, 10)),
    ("mid-May", D(2026, 5, 11), D(2026, 5, 20)),
    ("the end of May", D(2026, 5, 21), D(2026, 5, 31)),
    ("2023", D(2023, 1, 1), D(2023, 12, 31)),
    ("trips in 2022", D(2022, 1, 1), D(2022, 12, 31)),
    ("the year 2023", D(2023, 1, 1), D(2023, 12, 31)),
    ("mid-2023", D(2023, 5, 1), D(2023, 8, 31)),
    ("late 2023", D(2023, 9, 1), D(2023, 12, 31)),
    ("music from the 90s", D(1990, 1, 1), D(1999, 12, 31)),
    ("the 1980s", D(1980, 1, 1), D(1989, 12, 31)),
    ("the '20s", D(2020, 1, 1), D(2029, 12, 31)),
    # seasons
    ("the summer of 2023", D(2023, 6, 1), D(2023, 8, 31)),
    ("summer 2021", D(2021, 6, 1), D(2021, 8, 31)),
    ("late summer 2023", D(2023, 8, 1), D(2023, 8, 31)),
    ("winter 2022", D(2022, 12, 1), D(2023, 2, 28)),
    ("in spring", D(2026, 3, 1), D(2026, 5, 31)),
    ("in the fall", D(2026, 9, 1), D(2026, 11, 30)),
    ("last summer", D(2026, 6, 1), D(2026, 8, 31)),
    ("last winter", D(2025, 12, 1), D(2026, 2, 28)),
    ("this winter", D(2026, 12, 1), D(2027, 2, 28)),
    # explicit dates; without a year, the occurrence nearest to today
    ("on 9 December", D(2026, 12, 9), D(2026, 12, 9)),
    ("December 9", D(2026, 12, 9), D(2026, 12, 9)),
    ("December the 9th", D(2026, 12, 9), D(2026, 12, 9)),
    ("on the 9th of December", D(2026, 12, 9), D(2026, 12, 9)),
    ("9 Dec 2026", D(2026, 12, 9), D(2026, 12, 9)),
    ("Dec. 9th, 2025", D(2025, 12, 9), D(2025, 12, 9)),
    ("2023-05-08", D(2023, 5, 8), D(2023, 5, 8)),
    ("8 May, 2023", D(2023, 5, 8), D(2023, 5, 8)),
    ("on December 1,2023", D(2023, 12, 1), D(2023, 12, 1)),
    ("on 3 June", D(2026, 6, 3), D(2026, 6, 3)),
    ("on 3 march", D(2027, 3, 3), D(2027, 3, 3)),
    ("on Feb 29", D(2028, 2, 29), D(2028, 2, 29)),
    # since X runs to today
    ("since May", D(2026, 5, 1), D(2026, 12, 1)),
    ("since last week", D(2026, 11, 23), D(2026, 12, 1)),
    ("practising since 2016", D(2016, 1, 1), D(2026, 12, 1)),
    # several times named: the narrowest, then the longest
    ("in May 2023 or sometime in 2022", D(2023, 5, 1), D(2023, 5, 31)),
    ("on Monday, 3 June 2024", D(2024, 6, 3), D(2024, 6, 3)),
    ("they march in May", D(2026, 5, 1), D(2026, 5, 31)),
    ("IN MAY", D(2026, 5, 1), D(2026, 5, 31)),
]

LOCOMO_CASES = [
    ("When did Melanie go camping in June?", D(2023, 6, 1), D(2023, 6, 30)),
    ("What setback did Melanie face in October 2023?", D(2023, 10, 1), D(2023, 10, 31)),
    ("What did she show on October 13, 2023?", D(2023, 10, 13), D(2023, 10, 13)),
    ("What did Gina find on 1 February, 2023?", D(2023, 2, 1), D(2023, 2, 1)),
    ("What did they see on their camping trip last year?", D(2022, 1, 1), D(2022, 12, 31)),
    ("in October", D(2023, 10, 1), D(2023, 10, 31)),
    ("in November", D(2022, 11, 1), D(2022, 11, 30)),
    ("this May", D(2023, 5, 1), D(2023, 5, 31)),
    ("next May", D(2024, 5, 1), D(2024, 5, 31)),
    ("last Friday", D(2023, 10, 13), D(2023, 10, 13)),
    ("this Friday", D(2023, 10, 20), D(2023, 10, 20)),
    ("last weekend", D(2023, 10, 14), D(2023, 10, 15)),
    ("over the weekend", D(2023, 10, 14), D(2023, 10, 15)),
    ("two weeks ago", D(2023, 10, 3), D(2023, 10, 9)),
    ("3 months ago", D(2023, 7, 1), D(2023, 7, 31)),
    ("on 9 May", D(2023, 5, 9), D(2023, 5, 9)),
    ("on 1 January", D(2024, 1, 1), D(2024, 1, 1)),
    ("last summer", D(2023, 6, 1), D(2023, 8, 31)),
    ("this summer", D(2023, 6, 1), D(2023, 8, 31)),
    ("next summer", D(2024, 6, 1), D(2024, 8, 31)),
    ("plans for the summer", D(2023, 6, 1), D(2023, 8, 31)),
    ("in the winter", D(2022, 12, 1), D(2023, 2, 28)),
    ("in the beginning of November 2022", D(2022, 11, 1), D(2022, 11, 10)),
]

NEGATIVES = [
    "",
    "how is the database configured",
    "what does Caroline like",
    "may I ask about the project",
    "what may help me sleep",
    "this may help",
    "5 may help",
    "may 5 people come",
    "they march to the city",
    "we march 3 miles",
    "June said hello",
    "Summer Sounds played a set",
    "the fall of Rome",
    "wait a second",
    "open port 8080",
    "open port 2049",
    "python version 3.11",
    "error 2024 in the log",
    "1500 people came",
    "2000 people came",
    "costs $2021",
    "build 2023.1 failed",
    "what did we discuss recently",
    "what has she been up to lately",
    "the other day",
    "how long ago was it",
    "in my 20s",
    "every Monday",
    "on Mondays",
    "a day at the beach",
    "05/08/2023",
    "on 31 April",
    "2023-13-45",
]


@pytest.mark.parametrize(("query", "start", "end"), TUESDAY_CASES)
def test_named_times_relative_to_a_tuesday(query: str, start: date, end: date) -> None:
    frame = time_frame(query, TUESDAY)
    assert frame is not None
    assert (frame.start, frame.end) == (start, end)


@pytest.mark.parametrize(("query", "start", "end"), LOCOMO_CASES)
def test_named_times_in_locomo_like_questions(query: str, start: date, end: date) -> None:
    frame = time_frame(query, LOCOMO)
    assert frame is not None
    assert (frame.start, frame.end) == (start, end)


@pytest.mark.parametrize("query", NEGATIVES)
def test_words_that_name_no_time(query: str) -> None:
    assert time_frame(query, TUESDAY) is None


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("what happened last week at work", "last week"),
        ("what did Mel paint in July 2023?", "in July 2023"),
        ("notes since last week", "since last week"),
        ("on the 9th of December, what happened", "on the 9th of December"),
        ("the day before yesterday", "the day before yesterday"),
        ("(in May)", "in May"),
        ("what broke a few days ago?", "a few days ago"),
    ],
)
def test_text_is_the_naming_words(query: str, text: str) -> None:
    frame = time_frame(query, TUESDAY)
    assert frame is not None
    assert frame.text == text


def test_in_frame() -> None:
    frame = TimeFrame(date(2023, 5, 1), date(2023, 5, 31), "in May 2023")
    assert in_frame(date(2023, 5, 1), frame)
    assert in_frame(date(2023, 5, 31), frame)
    assert not in_frame(date(2023, 4, 30), frame)
    assert not in_frame(date(2023, 6, 1), frame)
    assert not in_frame(None, frame)
    assert in_frame(date(2023, 6, 3), frame, grace_days=3)
    assert not in_frame(date(2023, 6, 4), frame, grace_days=3)


def test_every_range_is_ordered() -> None:
    for query, _, _ in TUESDAY_CASES:
        frame = time_frame(query, TUESDAY)
        assert frame is not None
        assert frame.start <= frame.end, query


def test_nearest_day_prefers_the_earlier_on_a_tie_and_skips_missing_days() -> None:
    # 1 July 2025 is 182 days before 30 Dec 2025 and 1 July 2026 is 183 after: the past one.
    assert nearest_day(7, 1, date(2025, 12, 30)) == date(2025, 7, 1)
    # 1 July 2025 is 183 days before 31 Dec 2025 and 1 July 2026 is 182 after: the future one.
    assert nearest_day(7, 1, date(2025, 12, 31)) == date(2026, 7, 1)
    # 1 March 2023 and 1 March 2024 are both 183 days from 31 August 2023: the earlier wins.
    assert nearest_day(3, 1, date(2023, 8, 31)) == date(2023, 3, 1)
    assert nearest_day(2, 29, date(2023, 3, 1)) == date(2024, 2, 29)
    assert nearest_day(4, 31, date(2023, 3, 1)) is None


def test_month_arithmetic_clamps_to_the_month_end() -> None:
    assert shift_months(date(2023, 3, 31), -1) == date(2023, 2, 28)
    assert shift_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert shift_months(date(2023, 1, 15), -13) == date(2021, 12, 15)


def test_weekday_before_today_is_strictly_before() -> None:
    assert recent_weekday(1, TUESDAY) == date(2026, 11, 24)
    assert recent_weekday(0, TUESDAY) == date(2026, 11, 30)
    assert recent_weekday(2, TUESDAY) == date(2026, 11, 25)


def test_winter_across_the_new_year() -> None:
    in_january = date(2024, 1, 12)
    assert season_near("winter", in_january, "this") == (date(2023, 12, 1), date(2024, 2, 29))
    assert season_near("winter", in_january, "last") == (date(2022, 12, 1), date(2023, 2, 28))
    assert season_near("winter", in_january, "next") == (date(2024, 12, 1), date(2025, 2, 28))


def test_thirds_of_a_year_are_four_months() -> None:
    year = year_span(2023)
    assert part_of(year, "early") == (date(2023, 1, 1), date(2023, 4, 30))
    assert part_of(year, "mid") == (date(2023, 5, 1), date(2023, 8, 31))
    assert part_of(year, "late") == (date(2023, 9, 1), date(2023, 12, 31))
