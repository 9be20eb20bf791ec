"""Textual's strips do not hold themselves (``fastchat_tui.ui.strips``): a dropped line is freed at once,
not after a full pass of the garbage collector, and every strip method returns what it returned before."""

from __future__ import annotations

import gc

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

import fastchat_tui.ui  # noqa: F401  (installs the wrappers)
from fastchat_tui.ui import strips


def _line(n: int) -> Strip:
    return Strip([Segment("word " * n, Style(bold=True)), Segment("end", None)])


def test_lines_cut_and_divided_at_their_own_width_are_freed_without_the_collector() -> None:
    gc.collect()
    gc.disable()
    try:
        for n in range(200):
            line = _line(n)
            width = line.cell_length
            assert line.crop_extend(0, width, None) is line
            assert list(line.divide([width])) == [line]
            assert list(line.divide([width, width + 5])) == [line]  # cuts past the end are dropped, as Textual does
            del line
        assert gc.collect() == 0  # nothing was left in a cycle
    finally:
        gc.enable()


def test_every_other_cut_is_textual_s_own() -> None:
    line = _line(3)
    width = line.cell_length
    assert line.crop_extend(2, width, None).text == line.text[2:]
    extended = line.crop_extend(0, width + 4, Style(italic=True))
    assert extended.cell_length == width + 4 and extended.text == line.text + "    "
    assert line.crop_extend(0, width + 4, Style(italic=True)) is extended  # still cached
    halves = line.divide([5, width])
    assert [half.text for half in halves] == [line.text[:5], line.text[5:]]
    assert line.divide([5, width]) is halves


def test_the_wrappers_are_installed_once_the_ui_is_imported() -> None:
    assert Strip.crop_extend is strips._crop_extend_uncached_self
    assert Strip.divide is strips._divide_uncached_self


def test_a_strip_makes_each_cache_when_first_used_and_keeps_it() -> None:
    line = _line(4)
    made = [name for name in strips.CACHE_SIZES if name in dir(line) and _slot_set(line, name)]
    assert made == []  # none yet: eight objects fewer for the collector, and 1.4 us, for every strip made
    cropped = line.crop(0, 7)
    assert cropped.text == line.text[:7] and line.crop(0, 7) is cropped  # kept in the cache made by the first crop
    assert _slot_set(line, "_crop_cache") and not _slot_set(line, "_style_cache")
    styled = line.apply_style(Style(italic=True))
    assert line.apply_style(Style(italic=True)) is styled
    assert [segment.style for segment in styled] == [Style(bold=True, italic=True), Style(italic=True)]


def test_textual_still_makes_every_cache_of_a_strip_when_it_is_made() -> None:
    # When this fails, Textual makes them when used: `strips._init_without_caches` and `_cache_when_used` can go.
    line = Strip.__new__(Strip)
    strips._init(line, [Segment("text")])
    assert all(_slot_set(line, name) for name in strips.CACHE_SIZES)
    assert set(Strip.__slots__) == set(strips.CACHE_SIZES) | strips._OTHER_SLOTS


def _slot_set(strip: Strip, name: str) -> bool:
    """Whether the strip's slot `name` holds something (not asking `__getattr__`, which would make it)."""
    try:
        getattr(Strip, name).__get__(strip, Strip)
    except AttributeError:
        return False
    return True
