"""Throughput and linearity of the tool-call scrubber.

A generated 1 MB model reply (prose, fenced code examples, reasoning, calls in every dialect,
a few malformed blocks) is decoded in one batch, and streamed in 16-byte and 1-byte deltas,
reading every dialect. The feed cost must be linear in the reply: the time per MB stays flat
from 0.25 to 2 MB, for the mixed reply and for a reply in each dialect alone, and a single
1 MB block streamed in small deltas costs no more per MB than prose. For contrast,
a naive streaming parser that re-decodes the whole buffer on every delta grows
quadratically; and one regex pass for a single dialect gives a floor for batch decoding.
Times are CPU seconds of this process (process time): the development machine is shared, and
wall-clock times there measure the other jobs as much as this code.
"""

from __future__ import annotations

import json
import random
import re
import time
from itertools import pairwise

from lsp_agent.calls import Scrubber, ToolSet, decode
from lsp_agent.calls.dialects import DIALECTS
from lsp_agent.calls.prompt import render_call
from lsp_agent.tools.calls import agent_tools

from .common import OUT, Report

MB = 1_000_000
PROSE = [
    "Let me look at how the parser handles this case before changing anything.",
    "The function returns a list [a, b] when x < y, and a dict {k: v} otherwise.",
    "I'll check `Scrubber.feed` and the `<tool_call>` handling next.",
    "This matches what the tests expect; the edge case is an empty input.",
]
CODE = "```python\ndef pick(items: list[int]) -> int:\n    return max(i for i in items if i < 10)\n```"
ALL = list(DIALECTS)  # every dialect is read
TAUGHT = [name for name, d in DIALECTS.items() if d.teaches]  # every call format
THINK = "<think>The user wants the file; reading it first is safer.</think>"
MALFORMED = [
    '<tool_call>{"name": "read", "arguments": {"path": "x.py"}</tool_call>',
    "<function=read><parameter=path>y.py</function>",
]


def reply_of(size: int, seed: int = 0, dialects: list[str] = TAUGHT) -> str:
    rng = random.Random(seed)
    parts, total = [], 0
    while total < size:
        kind = rng.random()
        if kind < 0.03:
            piece = THINK + "\n"
        elif kind < 0.6:
            piece = " ".join(rng.choice(PROSE) for _ in range(rng.randint(1, 4))) + "\n"
        elif kind < 0.75:
            piece = CODE + "\n"
        elif kind < 0.97:
            path = f"src/module_{rng.randint(1, 999)}.py"
            piece = (
                render_call(rng.choice(dialects), "read", {"path": path, "start": rng.randint(1, 500)}) + "\n"
            )
        else:
            piece = rng.choice(MALFORMED) + "\n"
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def one_big_block(size: int) -> str:
    """A single call whose value is `size` characters: a long file write."""
    body = ("x = [i for i in range(10) if i < 5]  # a line of code\n" * (size // 52 + 1))[:size]
    return f"Writing it.\n<function=write><parameter=content>\n{body}\n</parameter></function>\nDone."


def one_big_json_block(size: int) -> str:
    """A single tagged-JSON call with a `size`-character string argument (closers inside it)."""
    line = "if a < b: print('</tool_call> is just text here')\n"
    content = (line * (size // len(line) + 1))[:size]
    return "<tool_call>" + json.dumps({"name": "write", "arguments": {"content": content}}) + "</tool_call>"


def stream(reply: str, step: int, tools: ToolSet, out: list | None = None) -> float:
    """Seconds to scrub `reply` in `step`-character deltas (the visible text, calls and
    diagnostics go to `out` when given)."""
    scrubber = Scrubber(tools, dialects=ALL)
    visible = []
    started = time.process_time()
    for k in range(0, len(reply), step):
        visible.append(scrubber.feed(reply[k : k + step]))
    visible.append(scrubber.flush())
    seconds = time.process_time() - started
    if out is not None:
        out[:] = ["".join(visible), scrubber.calls, scrubber.diagnostics]
    return seconds


def naive_stream(reply: str, step: int, tools: ToolSet) -> float:
    """What a naive streaming parser does: decode the whole buffer again on every delta."""
    started = time.process_time()
    for k in range(step, len(reply) + step, step):
        decode(reply[:k], tools=tools, dialects=ALL)
    return time.process_time() - started


def best(fn, repeat: int = 3) -> float:
    return min(fn() for _ in range(repeat))


def main() -> None:
    tools = agent_tools()
    reply = reply_of(MB)
    batch = decode(reply, tools=tools, dialects=ALL)
    report = Report(
        "calls", "Tool-call scrubber: throughput and linearity", ["what", "MB", "seconds", "MB/s"]
    )

    floor = best(
        lambda: timed_once(lambda: re.sub(r"<tool_call>.*?</tool_call>", "", reply, flags=re.DOTALL))
    )
    report.add("floor: one regex pass, one dialect", 1.0, floor, 1 / floor)
    whole = best(lambda: timed_once(lambda: decode(reply, tools=tools, dialects=ALL)))
    report.add("decode (batch), all dialects", 1.0, whole, 1 / whole)
    by16 = best(lambda: stream(reply, 16, tools))
    report.add("scrubber, 16-byte deltas", 1.0, by16, 1 / by16)
    by1 = best(lambda: stream(reply, 1, tools), repeat=1)
    report.add("scrubber, 1-byte deltas", 1.0, by1, 1 / by1)

    sizes = [0.25, 0.5, 1.0, 2.0]
    ours = []
    for mb in sizes:
        text = reply_of(int(mb * MB), seed=1)
        seconds = best(lambda text=text: stream(text, 16, tools))
        ours.append(seconds)
        report.add(f"linearity: {mb} MB in 16-byte deltas", mb, seconds, mb / seconds)
    for label, big in (("function XML", one_big_block(MB)), ("tagged JSON", one_big_json_block(MB))):
        seconds = best(lambda big=big: stream(big, 16, tools))
        report.add(f"one 1 MB {label} block, 16-byte deltas", len(big) / MB, seconds, len(big) / MB / seconds)

    flatness = []
    for name in TAUGHT:  # each dialect alone: the time per MB at 0.1 and at 0.4 MB
        texts = {mb: reply_of(int(mb * MB), seed=3, dialects=[name]) for mb in (0.1, 0.4)}
        times: dict[float, list[float]] = {mb: [] for mb in texts}
        for _ in range(5):  # the two sizes in turn, so that the machine's load weighs on both alike
            for mb, text in texts.items():
                times[mb].append(stream(text, 16, tools))
        per = [min(times[mb]) / mb for mb in texts]
        flatness.append((name, per[1] / per[0]))
        report.add(f"{name}: 0.4 MB in 16-byte deltas", 0.4, per[1] * 0.4, 1 / per[1])

    naive_sizes = [0.008, 0.016, 0.032]
    naive, ours_small = [], []
    for mb in naive_sizes:
        text = reply_of(int(mb * MB), seed=2)
        naive.append(naive_stream(text, 16, tools))
        ours_small.append(best(lambda text=text: stream(text, 16, tools)))
        report.add(f"naive re-decode per delta: {mb * 1000:.0f} KB", mb, naive[-1], mb / naive[-1])

    per_mb = [s / mb for s, mb in zip(ours, sizes, strict=False)]
    streamed: list = []
    stream(reply, 16, tools, streamed)
    same = streamed == [batch.visible_text, batch.calls, batch.diagnostics]
    reasoning = len(batch.reasoning_text.split("\n")) if batch.reasoning_text else 0
    report.note(
        f"Reply: {len(batch.calls)} calls in {len(TAUGHT)} dialects, {reasoning} reasoning blocks and "
        f"{len(batch.diagnostics)} diagnostics per MB; streamed in 16-byte "
        + (
            "deltas it gives exactly the batch result."
            if same
            else "deltas it DIFFERS from the batch result."
        )
    )
    report.note(
        "Linearity (16-byte deltas): seconds per MB at "
        + ", ".join(f"{mb} MB = {p:.3f}" for mb, p in zip(sizes, per_mb, strict=False))
        + f"; largest/smallest = {max(per_mb) / min(per_mb):.2f} (1.0 = perfectly linear)."
    )
    report.note(
        "Each dialect alone, seconds per MB at 0.4 MB / at 0.1 MB (1.0 = flat): "
        + ", ".join(f"{name} {ratio:.2f}" for name, ratio in flatness)
        + f"; largest {max(r for _, r in flatness):.2f}."
    )
    report.note(
        f"Batch decode is {whole / floor:.1f}x the single-regex floor; 16-byte streaming is {by16 / whole:.1f}x batch; "
        f"1-byte streaming {by1 / whole:.1f}x batch."
    )
    growth = [b / a for a, b in pairwise(naive)]
    report.note(
        "Naive re-decode per delta: "
        + ", ".join(
            f"{mb * 1000:.0f} KB {n / s:.0f}x slower than the scrubber"
            for mb, n, s in zip(naive_sizes, naive, ours_small, strict=False)
        )
        + "; each doubling of the reply multiplies its time by "
        + " and ".join(f"{g:.1f}" for g in growth)
        + " (2 would be linear, 4 quadratic)."
    )
    svg = linearity_chart(sizes, ours, naive_sizes, naive)
    path = report.write(chart=("what", "MB/s"))
    path.write_text(path.read_text() + f"\n![Feed time against reply size]({svg.name})\n")
    print(f"chart: {svg}")


def timed_once(fn) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def linearity_chart(sizes, ours, naive_sizes, naive):
    """Seconds against MB, drawn as SVG by hand (no plotting library needed)."""
    width, height, pad = 560, 320, 50
    xmax = max(sizes)
    ymax = max(max(ours), max(naive)) * 1.1

    def point(x, y):
        return pad + x / xmax * (width - 2 * pad), height - pad - y / ymax * (height - 2 * pad)

    def line(xs, ys, color, label, dy):
        pts = " ".join("{:.1f},{:.1f}".format(*point(x, y)) for x, y in zip(xs, ys, strict=False))
        dots = "".join(
            '<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"/>'.format(*point(x, y), color)
            for x, y in zip(xs, ys, strict=False)
        )
        legend = f'<text x="{pad + 10}" y="{pad + dy}" fill="{color}" font-size="12">{label}</text>'
        return f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>{dots}{legend}'

    ticks = "".join(
        f'<text x="{point(x, 0)[0]:.1f}" y="{height - pad + 16}" font-size="11" text-anchor="middle">{x}</text>'
        for x in sizes
    )
    yticks = "".join(
        f'<text x="{pad - 6}" y="{point(0, y)[1] + 4:.1f}" font-size="11" text-anchor="end">{y:.2f}</text>'
        for y in (ymax / 4 * k for k in range(5))
    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif">'
        f'<rect width="100%" height="100%" fill="white"/>'
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="14">Feed time against reply size (16-byte deltas)</text>'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>'
        f"{ticks}{yticks}"
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle" font-size="12">reply size (MB)</text>'
        f'<text x="14" y="{height / 2}" font-size="12" transform="rotate(-90 14 {height / 2})" text-anchor="middle">seconds</text>'
        + line(sizes, ours, "#2b6cb0", "scrubber (linear)", 10)
        + line(naive_sizes, naive, "#c53030", "naive re-decode per delta (quadratic)", 28)
        + "</svg>"
    )
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "calls_linearity.svg"
    path.write_text(svg)
    return path


if __name__ == "__main__":
    main()
