"""The `procure` command-line client: a thin shell over optimizer.api."""
