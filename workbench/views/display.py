"""One display protocol: an engine record plus how to draw it.

Every front door (the magics, ``workbench.jaxpr``/``hlo``/``bench``/``sharding``, the compile
line, ``%jaxcache``) returns a :class:`Display`: it holds the engine's record and the view
options, and draws nothing until a front end asks.  Like ``%timeit -o``'s ``TimeitResult``
the result *is* the record: attribute reads go to it (``r.measurements``,
``r.to_json()``, ``d.report.graphs``), and ``d.record`` is the record itself.

A feature describes its drawing once, as a :class:`View` (text, HTML, JSON body, optional
shared preparation).  Every HTML goes through :func:`~workbench.views._html.inline_essentials` (tables and code
readable without the ``<style>`` block).  ``_repr_mimebundle_`` builds only what
``include``/``exclude`` leave:
asking a 3,000-equation jaxpr for ``text/plain`` prints JAX's text and builds no HTML and
no JSON.  The JSON body gets its ``{"version", "kind"}`` envelope in
:mod:`workbench.views._envelope` only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from workbench.engine.common.gcpause import gc_paused
from workbench.views._bounds import WHOLE_TEXT, bound_text
from workbench.views._envelope import envelope, mime_type
from workbench.views._html import PRE_STYLE, esc, inline_essentials, style_block
from workbench.views._standalone import standalone_html

R = TypeVar("R")
TEXT = "text/plain"
HTML = "text/html"


@dataclass(frozen=True)
class View(Generic[R]):
    """How one feature draws its record; every function takes ``(record, **options)``.

    ``prepare`` (optional) computes what the HTML and the JSON share (the HLO diagram's
    layout), once, and only when one of them is asked for; its result is passed to both as
    extra keyword arguments.  With ``degrade`` a failure in the rich parts shows the text
    with a one-line note instead of a traceback in the user's cell.

    ``text`` returns the whole text (JAX's own, for jaxprs and HLO); the bundle's
    ``text/plain`` is that text within :mod:`workbench.views._bounds`'s limit, and
    :attr:`Display.text` is all of it.
    """

    kind: str
    version: int
    text: Callable[..., str]
    html: Callable[..., str]
    data: Callable[..., Mapping[str, Any]]
    prepare: Callable[..., dict[str, Any]] | None = None
    degrade: bool = False
    #: what the front doors call the record (``d.report``, ``d.layouts``, ``d.inspection``)
    record_name: str = "record"

    @property
    def mime(self) -> str:
        return mime_type(self.kind)

    def payload(self, record: R, **options: Any) -> dict[str, Any]:
        """The JSON payload alone, envelope included."""
        extra = self.prepare(record, **options) if self.prepare is not None else {}
        return envelope(self.kind, self.version, self.data(record, **options, **extra))

    def bundle(
        self,
        record: R,
        include: Collection[str] | None = None,
        exclude: Collection[str] | None = None,
        text_only: bool = False,
        whole_text: str | None = WHOLE_TEXT,
        **options: Any,
    ) -> dict[str, Any]:
        """The MIME bundle, building only the types ``include``/``exclude`` leave.

        ``whole_text``: the attribute of the displayed object that holds the whole text,
        named by ``text/plain``'s line on what it left out (a :class:`Display`'s ``.text``;
        an engine record shown on its own has its own, or none)."""

        def wanted(mime: str) -> bool:
            return (include is None or mime in include) and (exclude is None or mime not in exclude)

        out: dict[str, Any] = {}
        rich = [] if text_only else [m for m in (HTML, self.mime) if wanted(m)]
        try:
            with gc_paused():
                if wanted(TEXT):
                    out[TEXT] = bound_text(self.text(record, **options), whole_text)
                if not rich:
                    return out
                extra = self.prepare(record, **options) if self.prepare is not None else {}
                payload = envelope(self.kind, self.version, self.data(record, **options, **extra))
                if HTML in rich:
                    # the static summary, and the same payload for the standalone runtime
                    text = (
                        out[TEXT]
                        if TEXT in out
                        else bound_text(self.text(record, **options), whole_text)
                    )
                    out[HTML] = standalone_html(
                        inline_essentials(self.html(record, **options, **extra)),
                        self.mime,
                        payload,
                        text,
                    )
                if self.mime in rich:
                    out[self.mime] = payload
        except Exception as exc:
            if not self.degrade:
                raise
            out.pop(self.mime, None)
            text = out.get(TEXT) or bound_text(self.text(record, **options), whole_text)
            out[HTML] = (
                f'<div class="jwb">{style_block()}<div class="jwb-note">The {esc(self.kind)} '
                f"view could not be drawn ({esc(type(exc).__name__)}: {esc(exc)}); the "
                f'text follows.</div><pre style="{PRE_STYLE}">{esc(text)}</pre></div>'
            )
        return out


class Display(Generic[R]):
    """An engine record that displays itself through its feature's :class:`View`.

    Reading an attribute the display does not have reads the record's (so a benchmark
    result is used as the ``Benchmark`` it holds); ``view.record_name`` names the record
    itself (``.report``, ``.layouts``, ``.inspection``).  Nothing here depends on IPython:
    front doors that must hide a value from one cell's automatic display set an
    ``_ipython_display_`` on the instance.
    """

    def __init__(self, record: R, view: View[R], text_only: bool = False, **options: Any) -> None:
        self.record = record
        self.view = view
        self.text_only = text_only
        self.options = options

    def _repr_mimebundle_(
        self, include: Collection[str] | None = None, exclude: Collection[str] | None = None
    ) -> dict[str, Any]:
        return self.view.bundle(self.record, include, exclude, self.text_only, **self.options)

    def __repr__(self) -> str:
        return bound_text(self.view.text(self.record, **self.options))

    @property
    def text(self) -> str:
        """The whole text, unbounded (``text/plain`` and ``repr`` stop at the bound of
        :mod:`workbench.views._bounds` and point here): for jaxprs and HLO exactly what JAX
        prints.  The kernel keeps it; a saved notebook does not."""
        return self.view.text(self.record, **self.options)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the display lacks.  Private names are not forwarded:
        # IPython probes ``_repr_*_``/``_ipython_*`` and must not find the record's.
        if name.startswith("_") or name in ("record", "view", "options", "text_only", "text"):
            raise AttributeError(name)
        if name == self.view.record_name:
            return self.record
        return getattr(self.record, name)

    def __dir__(self) -> list[str]:
        names = set(super().__dir__()) | {self.view.record_name}
        names.update(n for n in dir(self.record) if not n.startswith("_"))
        return sorted(names)


__all__ = ["HTML", "TEXT", "Display", "View"]
