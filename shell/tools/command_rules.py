"""What a `run_command` allow rule covers: a command line read as the shell reads it.

The line is parsed with tree-sitter's bash grammar. A rule can approve only a line made of
**simple commands**: a program and argument words that mean themselves once quotes and
backslashes are taken away, joined by `&&`, `||`, `;` or `|`. Anything else in the line, and
anything the parser cannot read, makes it a line no rule covers (`Refused` says why): a function
definition, a subshell, a `{ }` group, `if`/`for`/`while`/`case`, `!`, `[[ ]]`, a command or
process substitution, a `$` expansion, `$'…'`, a redirection or heredoc, an assignment before the
program (`FOO=1 make`), a `&` that runs in the background, a comment, a line break or another
control character, a reserved word as the program. The grammar's reading is checked against
the text: every byte must belong to a word or a connective, quoted words are decoded from their
own text, and two words with nothing between them (the grammar reads `"make"\\x` as two, sh
runs `makex`) are refused.

A pattern is read as words too (quotes group them, as in the shell). The first word is the
program, named exactly; each further word matches one word of the command, and a `*`, `?` or
`[…]` inside it matches within that word only. A `*` at the very end of the pattern means "and
any further arguments", at a word boundary: `make*` covers `make` and `make test`, never
`makefoo`; `git diff*` covers `git diff HEAD`, never `git difftool`; `npm run *` covers
`npm run build`. Without it the command has exactly the pattern's words. Each command of a line
must be covered by a pattern.

Quoting cannot move a command out of its pattern's reach: `ma''ke` is the program `make`, and
`"make" ; id` is two commands. A word the shell would still expand (an unquoted `*.py`, `~`,
`{a,b}`) may stand only among the "any further arguments" of a trailing `*`, where every word is
allowed anyway; as the program or a word a pattern names, it is refused.
"""

from __future__ import annotations

import fnmatch
import functools
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

CONNECTIVES = frozenset({"&&", "||", ";", "|"})
RESERVED = frozenset(
    "! { } [[ ]] case coproc do done elif else esac fi for function if in select then time "
    "until while".split()
)
"""Words that are not a program when they come first; `time` and `coproc` only in bash."""
_UNQUOTED_SPECIAL = frozenset("$`'\"()<>;&|#")
_EXPANDING = frozenset("*?[]{}~")
_WHITESPACE = frozenset(" \t")


@dataclass(frozen=True)
class Word:
    text: str
    """The word once its quotes and backslashes are taken away."""
    expands: bool = False
    """Whether the shell would still expand it (an unquoted glob, `~`, braces)."""


@dataclass(frozen=True)
class Refused:
    """A line no pattern covers, and why."""

    why: str


class _NotSimple(Exception):
    pass


def simple_commands(line: str) -> tuple[tuple[Word, ...], ...] | Refused:
    """The simple commands of a command line, each as its words; or why it has other things."""
    if not line.strip():
        return Refused("it is empty")
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in line):
        return Refused("it has a line break or another control character")
    data = line.encode()
    tree = _parser().parse(data)
    try:
        if tree.root_node.has_error:
            raise _NotSimple("the shell grammar cannot read it")
        commands: list[tuple[Word, ...]] = []
        leaves: list[tuple[int, int]] = []
        _sequence(tree.root_node, commands, leaves)
        _check_covered(data, leaves)
    except _NotSimple as not_simple:
        return Refused(str(not_simple))
    if not commands:
        return Refused("it runs no command")
    return tuple(commands)


def covering_rules(patterns: list[tuple[str, str]], line: str) -> list[str] | None:
    """The rules (rule, pattern) that cover each command of `line`, or None when one is not."""
    commands = simple_commands(line)
    if isinstance(commands, Refused):
        return None
    used: list[str] = []
    for words in commands:
        rule = next((r for r, p in patterns if pattern_covers(p, words)), None)
        if rule is None:
            return None
        used.append(rule)
    return used


def pattern_covers(pattern: str, words: tuple[Word, ...]) -> bool:
    """Whether one pattern covers one simple command (see the module's grammar)."""
    further = pattern.endswith("*")
    try:
        named = shlex.split(pattern[:-1] if further else pattern)
    except ValueError:
        return False
    if not named:
        return further and not words[0].expands
    if len(words) < len(named) or (not further and len(words) != len(named)):
        return False
    program, *arguments = named
    if words[0].expands or words[0].text != program:
        return False
    return all(
        not word.expands and fnmatch.fnmatchcase(word.text, wanted)
        for word, wanted in zip(words[1:], arguments, strict=False)
    )


def suggested_patterns(line: str) -> tuple[str, ...] | Refused:
    """A pattern per program of the line (`make*`), each naming the program as it runs."""
    commands = simple_commands(line)
    if isinstance(commands, Refused):
        return commands
    if any(words[0].expands for words in commands):
        return Refused("its program is a word the shell expands")
    return tuple(dict.fromkeys(f"{shlex.quote(words[0].text)}*" for words in commands))


@functools.cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _sequence(node: Node, commands: list[tuple[Word, ...]], leaves: list[tuple[int, int]]) -> None:
    """Commands joined by connectives: the program, a list or a pipeline."""
    for child in node.children:
        match child.type:
            case "command":
                commands.append(_command(child, leaves))
            case "list" | "pipeline":
                _sequence(child, commands, leaves)
            case connective if connective in CONNECTIVES and not child.is_named:
                leaves.append((child.start_byte, child.end_byte))
            case "&":
                raise _NotSimple("it runs a command in the background (&)")
            case other:
                raise _NotSimple(f"it has {_described(other)}")


def _command(node: Node, leaves: list[tuple[int, int]]) -> tuple[Word, ...]:
    words: list[Word] = []
    for before, child in zip([None, *node.children], node.children, strict=False):
        if before is not None and before.end_byte >= child.start_byte:
            # the grammar split what the shell reads as one word (`""\=` is `=`)
            raise _NotSimple("it has a word the grammar read as two")
        part = child.children[0] if child.type == "command_name" and child.children else child
        if child.type == "command_name" and child.child_count != 1:
            raise _NotSimple("its program is not one word")
        words.append(_word(part, leaves))
    if not words:
        raise _NotSimple("it has a command without a program")
    if not words[0].expands and words[0].text in RESERVED:
        raise _NotSimple(f"it has the reserved word {words[0].text!r} as a program")
    return tuple(words)


def _word(node: Node, leaves: list[tuple[int, int]]) -> Word:
    """One argument: plain, quoted, or these glued together (`'a'"b"c`)."""
    match node.type:
        case "word" | "number":
            leaves.append((node.start_byte, node.end_byte))
            return _unquoted(_text(node))
        case "raw_string":
            leaves.append((node.start_byte, node.end_byte))
            text = _text(node)
            if len(text) < 2 or text[0] != "'" or text[-1] != "'" or "'" in text[1:-1]:
                raise _NotSimple("it has a quoted word the grammar read oddly")
            return Word(text[1:-1])
        case "string":
            leaves.append((node.start_byte, node.end_byte))
            return _double_quoted(node)
        case "concatenation":
            _check_contiguous(node)
            parts = [_word(part, leaves) for part in node.children]
            return Word("".join(p.text for p in parts), any(p.expands for p in parts))
        case other:
            raise _NotSimple(f"it has {_described(other)}")


def _unquoted(raw: str) -> Word:
    text: list[str] = []
    expands = False
    escaped = False
    for char in raw:
        if escaped:
            text.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in _UNQUOTED_SPECIAL or char in _WHITESPACE:
            raise _NotSimple(f"it has an unquoted {char!r} inside a word")
        else:
            expands = expands or char in _EXPANDING
            text.append(char)
    if escaped:
        raise _NotSimple("it ends a word with a lone backslash")
    return Word("".join(text), expands)


def _double_quoted(node: Node) -> Word:
    """A double-quoted word, read from its text: the grammar's pieces of it are only checked."""
    for part in node.children:
        if part.type not in ('"', "string_content"):
            raise _NotSimple(f"it has {_described(part.type)} inside double quotes")
    raw = _text(node)
    if len(raw) < 2 or raw[0] != '"' or raw[-1] != '"':
        raise _NotSimple("it has a quoted word the grammar read oddly")
    text: list[str] = []
    escaped = False
    for char in raw[1:-1]:
        if escaped:
            text.append(char if char in '$`"\\' else "\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in '$`"':
            raise _NotSimple(f"it has an unescaped {char!r} inside double quotes")
        else:
            text.append(char)
    if escaped:
        raise _NotSimple("it has a quoted word the grammar read oddly")
    return Word("".join(text))


def _check_contiguous(node: Node) -> None:
    """The parts of one word leave nothing out between them (a tab inside quotes, say)."""
    position = node.start_byte
    for part in node.children:
        if part.start_byte != position:
            raise _NotSimple("it has a word the grammar read in pieces")
        position = part.end_byte
    if position != node.end_byte:
        raise _NotSimple("it has a word the grammar read in pieces")


def _check_covered(data: bytes, leaves: list[tuple[int, int]]) -> None:
    """Every byte of the line is in a token read above, or blank between two."""
    position = 0
    for start, end in sorted(leaves):
        if start < position or data[position:start].strip(b" \t"):
            raise _NotSimple("it has text the grammar left out of its commands")
        position = end
    if data[position:].strip(b" \t"):
        raise _NotSimple("it has text the grammar left out of its commands")


def _text(node: Node) -> str:
    return (node.text or b"").decode()


_DESCRIPTIONS = {
    "function_definition": "a function definition",
    "subshell": "a subshell ( )",
    "compound_statement": "a { } group",
    "redirected_statement": "a redirection",
    "file_redirect": "a redirection",
    "heredoc_redirect": "a heredoc",
    "herestring_redirect": "a here-string",
    "variable_assignment": "an assignment",
    "variable_assignments": "an assignment",
    "command_substitution": "a command substitution",
    "process_substitution": "a process substitution",
    "simple_expansion": "a $ expansion",
    "expansion": "a ${ } expansion",
    "arithmetic_expansion": "an arithmetic expansion",
    "ansi_c_string": "a $'…' string",
    "translated_string": 'a $"…" string',
    "negated_command": "a negation (!)",
    "test_command": "a [[ ]] test",
    "comment": "a comment",
    "|&": "a |& pipe",
}


def _described(kind: str) -> str:
    if kind in _DESCRIPTIONS:
        return _DESCRIPTIONS[kind]
    if kind.endswith("_statement") or kind in ("if", "for", "while", "until", "case"):
        return f"a compound command ({kind.removesuffix('_statement')})"
    return f"a {kind}"
