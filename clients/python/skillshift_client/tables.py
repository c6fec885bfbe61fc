"""The benchmark's table and the reports' rows as text, for the `report` command and a sweep's
summary (this distribution, so an agent's environment can print them without the proxy)."""

from __future__ import annotations

from typing import Any

__all__ = ["cell_text", "format_benchmark", "format_grid", "format_table"]


def format_grid(header: list[str], lines: list[list[str]]) -> str:
    """Right-aligned columns, two spaces apart."""
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(header)]
    return "\n".join(
        "  ".join(value.rjust(width) for value, width in zip(line, widths, strict=True))
        for line in [header, *lines]
    )


def cell_text(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """The reports' rows (`GET /reports`, json) under their columns."""
    return format_grid(
        columns, [[cell_text(row.get(column)) for column in columns] for row in rows]
    )


LOW_CALLS = "*"  # marks an SFR resting on fewer than `min_sfr_calls` skill calls
FEWER_CELLS = "+"  # marks a mean over fewer cells than its row or column has


def format_benchmark(table: dict[str, Any]) -> str:
    """The benchmark's table as text: one row per metric; columns the websites, the
    conditions and the overall value, each a macro average over cells; footnotes for flags."""
    websites, conditions = table["websites"], table["conditions"]
    if not websites:
        return "no episodes"
    full = {"websites": len(conditions), "conditions": len(websites)}
    lines: list[list[str]] = []
    marks: set[str] = set()  # the footnote marks used
    for name, metric in table["metrics"].items():
        line = [name]
        for scope, keys in (("websites", websites), ("conditions", conditions)):
            for key in keys:
                value, cells = metric[scope][key], metric["cells"][scope][key]
                flagged = metric.get("low_calls", {}).get(scope, {}).get(key, False)
                line.append(_flagged(value, flagged, cells < full[scope], marks))
            line.append("|")
        flagged = metric.get("low_calls", {}).get("overall", False)
        fewer = metric["cells"]["overall"] < len(websites) * len(conditions)
        lines.append([*line, _flagged(metric["overall"], flagged, fewer, marks)])
    header = ["metric", *websites, "|", *conditions, "|", "overall"]
    notes = [format_grid(header, lines), "", "Macro averages over (website, condition) cells."]
    if LOW_CALLS in marks:
        notes.append(f"{LOW_CALLS} SFR resting on fewer than {table['min_sfr_calls']} skill calls.")
    if FEWER_CELLS in marks:
        notes.append(f"{FEWER_CELLS} a mean over fewer cells than its row or column has.")
    if table["missing_cells"]:
        missing = ", ".join(f"{site}/{condition}" for site, condition in table["missing_cells"])
        notes.append(f"Cells without episodes: {missing}.")
    return "\n".join(notes)


def _flagged(value: Any, low_calls: bool, fewer_cells: bool, marks: set[str]) -> str:
    mark = (LOW_CALLS if low_calls else "") + (
        FEWER_CELLS if fewer_cells and value is not None else ""
    )
    marks.update(mark)
    return cell_text(value) + mark
