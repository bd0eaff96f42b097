"""``procure completion SHELL``: print the shell-completion script (click's own completion).

Install with e.g. ``procure completion bash > ~/.local/share/bash-completion/completions/procure``
or ``eval "$(procure completion zsh)"`` in ~/.zshrc.
"""

from __future__ import annotations

import click

COMPLETE_VAR = "_PROCURE_COMPLETE"
SHELLS = ("bash", "zsh", "fish")


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish)."""
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None  # every name in SHELLS is one of click's built-in shells
    root = ctx.find_root()
    assert isinstance(root.command, click.Group)
    click.echo(cls(root.command, {}, "procure", COMPLETE_VAR).source())
