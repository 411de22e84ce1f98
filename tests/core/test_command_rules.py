"""Command-line allow rules: simple commands only, the program named exactly, quoting no way out.

The table holds the attacks that passed the old regex split and the bypasses tried since; the
fuzz inserts a construct that is not a simple command anywhere one can stand and checks that even
the rule allowing every simple command (`*`) never covers the line; a second fuzz quotes words
at random and checks that the words read are the ones `/bin/sh` passes to the program.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shell.tools.command_rules import Refused, Word, covering_rules, simple_commands

RULES = [(p, p) for p in ("make*", "pytest*", "git status", "git diff*", "npm run *", "ls -l")]


def covered(line: str, rules: list[tuple[str, str]] = RULES) -> bool:
    return covering_rules(rules, line) is not None


@pytest.mark.parametrize(
    "line",
    [
        "make",
        "make test",
        "make -j4 test lint",
        "pytest -q tests/core/test_x.py",
        "pytest tests/*.py",  # a glob among the further arguments of `pytest*`
        "git status",
        "git diff HEAD~1 -- src",
        "npm run build",
        "npm run",
        "ls -l",
        "make && pytest -q || git status; make lint | make x",
        "ma''ke test",  # the shell runs `make`: so does the rule
        '"make" test',
        "\\make",
        'make \'a b\' "c \\"d\\"" e\\ f',
        "make a=1 '$HOME' \"\\$x\"",  # assignments after the program are arguments
        "make;",
        "  make\ttest  ",
        "make \\`id\\` a\\;id \\(id\\) \\#x '$'",  # escaped, so plain characters
        "mak\\e",
    ],
)
def test_simple_commands_are_covered(line: str) -> None:
    assert covered(line)


@pytest.mark.parametrize(
    "line",
    [
        "make() (touch PWNED) && make",  # the attack: a function named like the program
        'pytest() (python3 -c "import os\\x3bos.system(\\"id\\")") && pytest',
        "function make { id; } ; make",
        "make() { id; }; make",
        "(id) && make",
        "{ id; } && make",
        "make $(id)",
        'make "$(id)"',
        "make `id`",
        'make "`id`"',
        "make <(id)",
        "make >(id)",
        "make $HOME",
        "make ${HOME}",
        'make "$HOME"',
        "make $((1+1))",
        "make $'\\x3b'id",
        'make $"x"',
        "make > out",
        "make >> out",
        "make < in",
        "make 2>&1",
        "make <<EOF",
        "make <<< x",
        "FOO=1 make",
        "PATH=. make",
        "make &",
        "make & id",
        "make |& id",
        "! make",
        "[[ -f x ]] && make",
        "if true; then make; fi",
        "for x in a; do make; done",
        "while make; do id; done",
        "case x in x) make;; esac",
        "make # a comment",
        "make\nid",
        "make \\\nid",
        "make\rid",
        '"make" ; id',
        "make; id",
        "make && id",
        "make | sh",
        "makefoo",  # `make*` is `make` and its arguments, not every name that starts so
        "make.sh",
        "./make",
        "git status --short",  # an exact rule is exact
        "git difftool",
        "npm install",
        "ls -la",
        "*ake",  # a program the shell would expand
        "ma?e test",
        "git status*",
        "ls -*",  # an expanding word where a pattern names the word
        "make (",
        'make "unterminated',
        "make &&",
        "&& make",
        "",
        "   ",
        "time make",
        "coproc make",
        "make \\$(id)",
        "{make,id}",
        "make a#b",
        "make ;; id",
        'make "$"',
        '"make"\\-first-existing-target',  # the grammar read two words; sh runs that program
        '"ma"\\ke',
        'make ""\\=',
    ],
)
def test_everything_else_is_not(line: str) -> None:
    assert not covered(line)


def test_refusals_say_what_the_line_has() -> None:
    assert simple_commands("make() (touch PWNED) && make") == Refused(
        "it has a function definition"
    )
    assert simple_commands("FOO=1 make") == Refused("it has an assignment")
    assert simple_commands("make > x") == Refused("it has a redirection")
    assert simple_commands("make & id") == Refused("it runs a command in the background (&)")


def test_words_lose_their_quotes_and_keep_their_expansion() -> None:
    assert simple_commands("ma''ke 'a b' *.py") == (
        (Word("make"), Word("a b"), Word("*.py", expands=True)),
    )


def test_pattern_words_match_within_a_word_only() -> None:
    rules = [("k", "pytest -k foo*")]
    assert covered("pytest -k foo", rules) and covered("pytest -k foo bar", rules)
    assert not covered("pytest -k foobar", rules)  # the trailing `*` is "further arguments"
    inner = [("k", "pytest -k 'f*o' -q")]
    assert covered("pytest -k fxxo -q", inner) and not covered("pytest -k fxxo", inner)
    assert covered("ls anything", [("any", "*")]) and not covered("ls $X", [("any", "*")])


SAFE_WORD = st.text(alphabet="abcz-._/=:,+@%^", min_size=1, max_size=6).filter(
    lambda word: word != "=="
)
"""Words sh passes as they are. `==` alone is one too, but tree-sitter-bash reads it as a test
operator and errs, so such a line asks (the safe way): `test_a_word_the_grammar_misreads_asks`."""


def test_a_word_the_grammar_misreads_asks() -> None:
    rules = [("run_command:make*", "make*")]
    assert covered("make =a", rules) and not covered("make ==", rules)


SIMPLE = st.lists(SAFE_WORD, min_size=0, max_size=3).map(lambda args: " ".join(["make", *args]))
COMMAND_CONSTRUCTS = [
    "f() { id; }",
    "make() (id)",
    "function make { id; }",
    "(id)",
    "{ id; }",
    "if make; then id; fi",
    "for x in a; do id; done",
    "while make; do id; done",
    "until make; do id; done",
    "case x in x) id;; esac",
    "! make",
    "[[ -f x ]]",
    "FOO=1 make",
    "make=1",
    "((1))",
    "select x in a; do id; done",
]
WORD_CONSTRUCTS = [
    "$(id)",
    "`id`",
    "<(id)",
    ">(id)",
    "$X",
    "${X}",
    "${X:-id}",
    "$'\\x3b'",
    "$((1))",
    '"$X"',
    '"$(id)"',
    '"a`id`"',
    '$"x"',
    "$1",
    "$@",
]
TRAILING_CONSTRUCTS = [
    "> out",
    ">out",
    "< in",
    ">> out",
    "2>&1",
    "&>out",
    "<<EOF",
    "<<< x",
    "&",
    "# c",
    "|& make",
    "\n make",
    "\\\n make",
]


@st.composite
def lines_with_a_construct(draw: st.DrawFn) -> str:
    commands = draw(st.lists(SIMPLE, min_size=1, max_size=3))
    where = draw(st.integers(0, len(commands) - 1))
    kind = draw(st.sampled_from(["command", "word", "glued", "trailing"]))
    if kind == "command":
        commands[where] = draw(st.sampled_from(COMMAND_CONSTRUCTS))
    elif kind == "trailing":
        commands[where] += " " + draw(st.sampled_from(TRAILING_CONSTRUCTS))
    else:
        words = commands[where].split(" ")
        at = draw(st.integers(1, len(words)))
        construct = draw(st.sampled_from(WORD_CONSTRUCTS))
        if kind == "glued":
            words[at - 1] += construct
        else:
            words.insert(at, construct)
        commands[where] = " ".join(words)
    connectives = draw(st.lists(st.sampled_from([" && ", " || ", "; ", " | "]), min_size=3))
    line = commands[0]
    for command, connective in zip(commands[1:], connectives, strict=False):
        line += connective + command
    return line


@given(lines_with_a_construct())
@settings(max_examples=400, deadline=None)
def test_no_line_with_a_construct_is_covered_even_by_the_widest_rule(line: str) -> None:
    assert not covered(line, [("any", "*")]), line


@given(st.lists(SIMPLE, min_size=1, max_size=4))
@settings(max_examples=100, deadline=None)
def test_every_line_of_simple_commands_is_covered(commands: list[str]) -> None:
    assert covered(" && ".join(commands)) and covered(" | ".join(commands))


ANY_CHAR = st.characters(codec="ascii", exclude_categories=("Cc",))


def quoted(word: str, how: int) -> str:
    """One way to quote `word` for sh: single quotes, double quotes, or a backslash each (but
    the grammar drops a `\\ ` that starts a word, a line that is refused, not misread)."""
    if how == 2 and word[0] not in " \t":
        return "".join("\\" + c for c in word)
    if how == 0 and "'" not in word:
        return f"'{word}'"
    return '"' + "".join("\\" + c if c in '"\\$`' else c for c in word) + '"'


@pytest.fixture(scope="module")
def echo_args(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `make`: a script that prints a byte 1, then each argument and a NUL."""
    folder = tmp_path_factory.mktemp("bin")
    script = folder / "make"
    script.write_text('#!/bin/sh\nprintf "\\1"\nfor a in "$@"; do printf "%s\\0" "$a"; done\n')
    script.chmod(0o755)
    return folder


@given(
    st.lists(st.tuples(st.text(ANY_CHAR, min_size=1, max_size=5), st.integers(0, 2)), max_size=4)
)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_the_words_read_are_the_arguments_sh_passes(
    echo_args: Path, words: list[tuple[str, int]]
) -> None:
    line = " ".join(["make", *(quoted(word, how) for word, how in words)])
    read = simple_commands(line)
    assert not isinstance(read, Refused), line
    [command] = read
    ran = subprocess.run(
        ["/bin/sh", "-c", line],
        env={"PATH": str(echo_args)},
        capture_output=True,
        check=True,
        cwd=echo_args,
    )
    passed = ran.stdout.decode().removeprefix("\1").split("\0")[:-1]
    assert [w.text for w in command[1:]] == passed == [word for word, _ in words], line


FRAGMENTS = st.sampled_from(
    [*"ab '\"\\$;&|()<>{}*?~#=!`-\t", "''", '""', "\\'", '\\"', "'\\''", " make ", "; make"]
)
PROGRAMS = st.sampled_from(["make", "ma''ke", '"make"', "m\\ake", "'make'", '"ma"ke', 'mak"e"'])


@given(PROGRAMS, st.lists(FRAGMENTS, max_size=12))
@settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_line_read_as_simple_commands_runs_those_commands_in_sh(
    echo_args: Path, program: str, fragments: list[str]
) -> None:
    """Any text at all: when it reads as simple commands, each `make` we read is one sh runs,
    with the same arguments, and sh runs no `make` we did not read."""
    line = program + "".join(fragments)
    read = simple_commands(line)
    if isinstance(read, Refused) or any(w.expands for words in read for w in words):
        return
    ran = subprocess.run(
        ["/bin/sh", "-c", line], env={"PATH": str(echo_args)}, capture_output=True, cwd=echo_args
    )
    runs = [run.split("\0")[:-1] for run in ran.stdout.decode().split("\1")[1:]]
    ours = [[w.text for w in words[1:]] for words in read if words[0].text == "make"]
    left = iter(ours)
    assert all(any(run == mine for mine in left) for run in runs), line
    if all(words[0].text == "make" for words in read) and "|" not in line:
        assert runs == ours, line


def test_the_quoting_of_the_table_reads_as_sh_reads_it(echo_args: Path) -> None:
    line = 'make \'a b\' "c \\"d\\"" e\\ f a=1 \'$HOME\' "\\$x" "\\q"'
    read = simple_commands(line)
    assert not isinstance(read, Refused)
    env = {"PATH": str(echo_args), "HOME": os.devnull}
    ran = subprocess.run(["/bin/sh", "-c", line], env=env, capture_output=True, check=True)
    assert [w.text for w in read[0][1:]] == ran.stdout.decode()[1:].split("\0")[:-1]
    assert shlex.split(line)[1:4] == ["a b", 'c "d"', "e f"]
