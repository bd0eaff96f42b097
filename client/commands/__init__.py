"""One module per command group; client.cli registers them."""
