"""``procure workloads``: the workload presets ``--workload`` accepts, with their size."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from client.options import output_format

if TYPE_CHECKING:
    from rich.table import Table

    from optimizer.workload.model import Workload


def preset_record(name: str, workload: Workload, source: str) -> dict[str, object]:
    """One preset as JSON: its architecture and training run, counts with their unit named."""
    return {
        "name": name,
        "parameters": workload.parameters,
        "active_parameters": workload.active_parameters,
        "layers": workload.layers,
        "hidden_size": workload.hidden_size,
        "attention_heads": workload.attention_heads,
        "experts": workload.experts,
        "sequence_length_tokens": workload.sequence_length,
        "global_batch_size_sequences": workload.global_batch_size,
        "training_tokens": workload.training_tokens,
        "source": source,
    }


def _table(presets: list[tuple[str, Workload]]) -> Table:
    from rich.table import Table

    from optimizer.workload.model import parameter_count

    table = Table(title=f"workload presets ({len(presets)}); --format json adds the sources")
    table.add_column("name", no_wrap=True)
    for header in ("params", "layers", "sequence", "tokens"):
        table.add_column(header, justify="right", no_wrap=True)
    for name, w in presets:
        params = parameter_count(w.parameters)
        if w.is_moe:
            params += f" ({parameter_count(w.active_parameters)} active)"
        table.add_row(
            name,
            params,
            str(w.layers),
            f"{w.sequence_length:,}",
            f"{w.training_tokens:.3g}",
        )
    return table


@click.command("workloads")
@output_format("table", "json")
def workloads(fmt: str) -> None:
    """List the workload presets (names for --workload and a request's workload.model)."""
    from optimizer.workload.presets import preset, preset_names, preset_source

    presets = [(name, preset(name)) for name in preset_names()]
    if fmt == "json":
        records = [preset_record(n, w, preset_source(n)) for n, w in presets]
        click.echo(json.dumps(records, indent=2))
        return
    from rich.console import Console

    Console().print(_table(presets))
