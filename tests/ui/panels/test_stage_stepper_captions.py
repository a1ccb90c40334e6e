"""A caption's text breaks by one rule (issue 31): never one word alone on a line, never inside a short
formula fragment ("(q·k =" / "4)." read as two halves of nothing)."""

from __future__ import annotations

import re

import pytest

from qkv_studio.core import STAGES
from qkv_studio.ui.panels.stage_stepper import StageStepper
from qkv_studio.ui.widgets.frame_throttle import flush_pending
from qkv_studio.ui.widgets.rich_label import keep_together


@pytest.mark.parametrize("stage", STAGES)
def test_no_caption_line_is_one_word_alone_and_no_fragment_is_split(qtbot, session, stage):
    stepper = StageStepper(session)
    qtbot.addWidget(stepper)
    stepper.show()
    session.set_stage(stage)
    session.flush()
    flush_pending()  # (the caption's text follows a frame after the step)
    caption = stepper.caption
    assert caption.text() == stepper.caption_text()
    problems = []
    for width in range(240, 1000, 6):
        caption.resize(width, caption.heightForWidth(width))
        lines = caption.shown_lines()
        for i, line in enumerate(lines):
            if len(lines) > 1 and len(line.split()) < 2:
                problems.append((width, "alone", line, lines[i - 1] if i else ""))
        joined = " ".join(lines)
        for fragment in re.findall(r"\([^()]*\)|\[[^\[\]]*\]", joined):
            if len(fragment) <= 16 and not any(fragment in line for line in lines):
                problems.append((width, "split", fragment))
    assert not problems, problems[:5]


def test_the_rule_leaves_tags_alone_and_joins_only_spaces():
    html = "<span style='color: #888'>[1/3]</span> the scores of “sat” match “cat” best (q·k = 4)."
    out = keep_together(html)
    assert "<span style='color: #888'>" in out  # (a tag's own spaces kept)
    assert out.replace("\u00a0", " ") == html
    assert "(q·k\u00a0=\u00a04)." in out
