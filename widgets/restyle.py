"""A theme switch that costs the screen in view, not the length of the transcript.

Textual applies a new stylesheet to every widget of the screen at once (`App.refresh_css`), and
each widget whose colour changes refreshes all its descendants: on a long transcript (fifty
widgets a turn, a Markdown answer is a tree of blocks) one switch took seconds. Here a container
that says `restyle_lazily` (the transcript) has only its children in view restyled with the
rest of the screen; the others are restyled when they come into view (a scroll restyles the
blocks it shows, once). Not between frames: Textual maps every widget of the screen again after
a frame that refreshed one out of view, so restyling them in the background costs more than
the switch did.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from textual._node_list import NodeList
from textual.app import App
from textual.css.model import RuleSet
from textual.css.styles import Styles
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.widget import Widget


def lazy(node: DOMNode) -> bool:
    return isinstance(node, Widget) and getattr(node, "restyle_lazily", False)


def lazy_containers(root: DOMNode) -> Iterator[Widget]:
    """The lazy containers under `root` (not looking inside them)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if lazy(node) and isinstance(node, Widget):
            yield node
        else:
            stack.extend(node._nodes)


@contextmanager
def narrowed(containers: dict[Widget, list[Widget]]) -> Iterator[None]:
    """While in the block, each container's children are only those given: walking the DOM,
    and the refresh a colour change sends down to every descendant, skip the others. Nothing
    awaits in the block, so nothing else sees the DOM so."""
    whole = {container: container._nodes for container in containers}
    try:
        for container, children in containers.items():
            view = NodeList(container)
            view._nodes, view._nodes_set = list(children), set(children)
            container._nodes = view
        yield
    finally:
        for container, nodes in whole.items():
            container._nodes = nodes


@contextmanager
def refreshed_once(restyled: Iterable[Widget]) -> Iterator[None]:
    """While in the block a style set refreshes nothing (Textual refreshes a widget and all its
    descendants for each colour set on it: a dozen colours a widget, times the widgets under it);
    after the block, each of `restyled` is refreshed once (one that only inherits its colours
    must be drawn again too), laid out again if a set asked for it. Nothing awaits in the
    block."""
    wanted: dict[Widget, bool] = dict.fromkeys(restyled, False)

    def record(styles: Styles, *, layout: bool = False, parent: bool = False, **_: bool) -> None:
        node = styles.node
        if isinstance(node, Widget) and node._is_mounted:
            wanted[node] = wanted.get(node, False) or layout
            if parent and isinstance(node.parent, Widget):
                wanted.setdefault(node.parent, False)

    original = Styles.refresh
    Styles.refresh = record  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        Styles.refresh = original  # type: ignore[method-assign]
    for widget, layout in wanted.items():
        widget.refresh(layout=layout)


def update(stylesheet: Stylesheet, nodes: Iterable[DOMNode], animate: bool) -> None:
    """`stylesheet.update_nodes`, each widget refreshed once."""
    nodes = list(nodes)
    with refreshed_once(node for node in nodes if isinstance(node, Widget) and node._is_mounted):
        stylesheet.update_nodes(nodes, animate=animate)


class Restyler:
    """The restyling still owed after a switch: done when it comes into view."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.owed: list[Widget] = []
        """Children of lazy containers, out of view at the last switch, not restyled since."""
        self._parsed: dict[tuple[object, ...], list[RuleSet]] = {}

    @property
    def stylesheet(self) -> Stylesheet:
        return self.app.stylesheet

    def refresh_css(self, animate: bool) -> None:
        """`App.refresh_css`, with the children of lazy containers out of view owed."""
        app = self.app
        stylesheet = self.stylesheet
        stylesheet.set_variables(app.get_css_variables())
        self._reparse()
        owed: list[Widget] = []
        update(stylesheet, [app], animate)  # the colours every widget inherits
        for screen in app.screen_stack:
            now: dict[Widget, list[Widget]] = {}
            for container in lazy_containers(screen):
                shown = now.setdefault(container, [])
                for child in container.children:
                    seen = child.styles.is_docked or screen.can_view_partial(child)
                    (shown if seen else owed).append(child)
            with narrowed(now):
                update(stylesheet, screen.walk_children(with_self=True), animate)
            screen._css_update_count = app._css_update_count
        # No full layout, as Textual does: a widget a style set asks it of is laid out. And
        # nothing out of view is refreshed meanwhile: Textual then maps every widget again.
        self.owed = owed

    def _reparse(self) -> None:
        """`Stylesheet.reparse`, kept for each theme seen: parsing every widget's CSS again
        with the theme's variables is most of a switch back to it."""
        stylesheet = self.stylesheet
        key = (
            tuple(sorted(stylesheet._variables.items())),
            tuple((name, source.content) for name, source in stylesheet.source.items()),
        )
        if (rules := self._parsed.get(key)) is not None:
            stylesheet._rules, stylesheet._rules_map = rules, None
            return
        stylesheet.reparse()
        self._parsed[key] = stylesheet._rules

    def restyle_in_view(self, container: Widget) -> None:
        """After `container` scrolled (or resized): what came into view and is owed."""
        if not self.owed:
            return
        screen = container.screen
        due = [c for c in self.owed if c.parent is container and screen.can_view_partial(c)]
        if due:
            self.owed = [c for c in self.owed if c not in due and c.is_attached]
            for child in due:
                update(self.stylesheet, child.walk_children(with_self=True), animate=False)
